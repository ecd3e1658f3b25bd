"""The approval view in a host of our own: headless Chromium renders it from the real server's result,
our host answers its bridge messages by calling the real server, and the test clicks (ADR 0049).

The host page holds the view in a sandboxed iframe (`allow-scripts` only: an opaque origin, as
hosts do) with the restrictive CSP the MCP Apps specification makes the default. Every message
the view posts reaches this test through a DevTools binding; `tools/call` is forwarded to the
server only for a tool this connection was listed with `"app"` in its visibility, as the
specification makes hosts do. Screenshots land in test-artefacts/ (gitignored).
"""

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise

from domain.guard.outcomes import APPROVAL_META_KEY
from domain.woodpecker.approval_view import APP_MIME_TYPE, APP_TOOL, APPS_EXTENSION, VIEW_URI
from sandbox.server import Sandbox
from tests.fixtures.chromium import Chromium, chromium_binary
from tests.fixtures.mcp import MODES, harness_for

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser]

APPROVE = {"repo_id": 1, "number": 11}
PLANNED = [("POST", "/api/repos/1/pipelines/11/approve")]
# The CSP a host applies when a view declares no `_meta.ui.csp` (MCP Apps 2026-01-26, "Restrictive Default").
DEFAULT_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)
HOST_PAGE = """
(() => {
  window.viewMessages = [];
  window.mount = (html) => {
    const old = document.getElementById("view"); if (old) { old.remove(); }
    const frame = document.createElement("iframe");
    frame.id = "view"; frame.setAttribute("sandbox", "allow-scripts");
    frame.style.cssText = "position:absolute;left:0;top:0;width:640px;height:420px;border:0";
    frame.srcdoc = html;
    document.body.appendChild(frame);
  };
  window.addEventListener("message", (event) => {
    const frame = document.getElementById("view");
    if (frame && event.source === frame.contentWindow) { hostReceive(JSON.stringify(event.data)); }
  });
  window.toView = (message) => document.getElementById("view").contentWindow.postMessage(message, "*");
  document.body.style.margin = "0";
})()
"""


def with_csp(html: str) -> str:
    """The view's document as a host serves it: the default CSP first in its head."""
    return html.replace(
        "<head>", f'<head>\n<meta http-equiv="Content-Security-Policy" content="{DEFAULT_CSP}">', 1
    )


def wire(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


class Host:
    """Our MCP Apps host: one page, one view at a time, its bridge answered from the real server."""

    def __init__(self, browser: Chromium, client: Client, app_tools: set[str], html: str) -> None:
        self.browser = browser
        self.client = client
        self.app_tools = app_tools
        self.html = html
        self.calls: list[dict[str, Any]] = []
        self.sizes: list[dict[str, Any]] = []

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    async def evaluate(self, expression: str) -> Any:
        return await self._run(self.browser.evaluate, expression)

    async def post(self, message: dict[str, Any]) -> None:
        await self.evaluate(f"toView({json.dumps(message)})")

    async def next_message(self) -> dict[str, Any]:
        event = await self._run(self.browser.wait_for, "Runtime.bindingCalled")
        message: dict[str, Any] = json.loads(event["payload"])
        return message

    async def next_notification_then(self, method: str) -> dict[str, Any]:
        """The next message of `method`, past the views' size notifications (the last view's too)."""
        while True:
            message = await self.next_message()
            if message.get("method") == method:
                return message
            assert message.get("method") == "ui/notifications/size-changed", message
            self.sizes.append(message["params"])

    async def show(self, arguments: dict[str, Any], result: types.CallToolResult, theme: str) -> None:
        """Mount the view for one tool call, as a host does: initialize, then the input and the result."""
        await self.evaluate(f"mount({json.dumps(self.html)})")
        initialize = await self.next_notification_then("ui/initialize")
        await self.post(
            {
                "jsonrpc": "2.0",
                "id": initialize["id"],
                "result": {
                    "protocolVersion": "2026-01-26",
                    "hostInfo": {"name": "test-host", "version": "1"},
                    "hostCapabilities": {"serverTools": {}},
                    "hostContext": {"theme": theme, "displayMode": "inline"},
                },
            }
        )
        await self.next_notification_then("ui/notifications/initialized")
        await self.post(
            {"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": arguments}}
        )
        await self.post({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": wire(result)})
        # postMessage is delivered later: wait until the view has taken both and offers its buttons.
        for _ in range(200):
            if await self.in_view("document.getElementById('approve').disabled") is False:
                return
            await anyio.sleep(0.05)
        raise AssertionError("the view never offered Approve")

    async def serve_one_call(self) -> types.CallToolResult:
        """Answer the view's next message, a `tools/call`, through the real server."""
        while True:
            message = await self.next_message()
            if message.get("method") == "tools/call":
                break
            assert message.get("method") == "ui/notifications/size-changed", message
            self.sizes.append(message["params"])
        params = message["params"]
        self.calls.append(params)
        assert params["name"] in self.app_tools, "a host refuses a view's call to a tool not marked for apps"
        result = await self.client.call_tool(params["name"], params["arguments"])
        await self.post({"jsonrpc": "2.0", "id": message["id"], "result": wire(result)})
        return result

    async def in_view(self, expression: str) -> Any:
        """Evaluate in the view's document."""

        def run() -> Any:
            # The sandboxed iframe has an opaque origin: Chromium runs it out of process, as its own target.
            (frame,) = self.browser.frames()
            return self.browser.evaluate_in_frame(frame, expression)

        return await self._run(run)

    async def click(self, button: str) -> None:
        """A real mouse click on the view's button, where the page shows it."""
        box = await self.in_view(
            f"(() => {{ const b = document.getElementById({json.dumps(button)}); const r = b.getBoundingClientRect();"
            " return {x: r.x + r.width / 2, y: r.y + r.height / 2, disabled: b.disabled}; })()"
        )
        assert box["disabled"] is False, f"{button} is disabled"

        def press() -> None:
            for kind in ("mousePressed", "mouseReleased"):
                self.browser.send(
                    "Input.dispatchMouseEvent",
                    session=True,
                    type=kind,
                    x=box["x"],
                    y=box["y"],
                    button="left",
                    clickCount=1,
                )

        # A frame just mounted may not take input yet (its first frame not composited): the view
        # disables both buttons the moment it takes a click, so press until it has, never twice after.
        for _ in range(40):
            await self._run(press)
            for _ in range(5):
                if await self.in_view(f"document.getElementById({json.dumps(button)}).disabled") is True:
                    return
                await anyio.sleep(0.05)
        raise AssertionError(f"the view never took the click on {button}")

    async def press_enter_on(self, button: str) -> None:
        """The keyboard: focus the button as Tab would, and press Enter."""
        assert (
            await self.in_view(
                f"(() => {{ const b = document.getElementById({json.dumps(button)}); b.focus();"
                " return document.activeElement === b; })()"
            )
            is True
        )

        def press() -> None:
            for kind in ("keyDown", "keyUp"):
                self.browser.send(
                    "Input.dispatchKeyEvent",
                    session=True,
                    type=kind,
                    key="Enter",
                    code="Enter",
                    windowsVirtualKeyCode=13,
                    text="\r" if kind == "keyDown" else "",
                )

        await self._run(press)

    async def status(self) -> str:
        for _ in range(100):
            said = str(await self.in_view("document.getElementById('status').textContent"))
            if said and not said.endswith("…"):
                return said
            await anyio.sleep(0.05)
        return said

    async def screenshot(self, name: str) -> Path:
        path: Path = await self._run(self.browser.screenshot, name)
        return path


def writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in sandbox.state_changing_requests()]


@pytest.mark.parametrize("mode", MODES)
async def test_the_view_in_headless_chromium_declines_approves_once_and_shows_a_replay_afresh(
    sandbox: Sandbox, tmp_path: Path, mode: str
) -> None:
    binary = chromium_binary()
    browser = await anyio.to_thread.run_sync(Chromium, binary, tmp_path / "profile")
    try:
        await anyio.to_thread.run_sync(
            lambda: browser.send("Runtime.addBinding", session=True, name="hostReceive")
        )
        await anyio.to_thread.run_sync(browser.evaluate, HOST_PAGE)
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            with anyio.fail_after(120):
                async with Client(harness.server, mode=mode) as plain:
                    assert APP_TOOL not in {t.name for t in (await plain.list_tools()).tools}
                async with Client(
                    harness.server,
                    mode=mode,
                    extensions=[advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})],
                ) as client:
                    tools = (await client.list_tools()).tools
                    app_tools = {
                        t.name
                        for t in tools
                        if "app" in ((t.meta or {}).get("ui") or {}).get("visibility", [])
                    }
                    definition = next(t for t in tools if t.name == "approve_pipeline")
                    assert definition.meta is not None
                    (page,) = (await client.read_resource(definition.meta["ui"]["resourceUri"])).contents
                    assert isinstance(page, types.TextResourceContents) and page.uri == VIEW_URI
                    host = Host(browser, client, app_tools, with_csp(page.text))

                    # Decline: nothing reaches Woodpecker.
                    first = await client.call_tool("approve_pipeline", dict(APPROVE))
                    assert first.meta is not None
                    await host.show(dict(APPROVE), first, "light")
                    shown = await host.in_view(
                        "[document.getElementById('question').textContent,"
                        " document.getElementById('question').children.length]"
                    )
                    assert shown == [first.meta[APPROVAL_META_KEY]["question"], 0]
                    await host.screenshot(f"approval-view-light-{mode}.png")
                    await host.click("decline")
                    declined = await host.serve_one_call()
                    assert await host.status() == "Declined: nothing was done."
                    assert declined.structured_content is not None
                    assert declined.structured_content["outcome"] == "declined"
                    assert writes(sandbox) == []

                    # Approve: exactly the planned request, once.
                    second = await client.call_tool("approve_pipeline", dict(APPROVE))
                    await host.show(dict(APPROVE), second, "dark")
                    await host.screenshot(f"approval-view-dark-{mode}.png")
                    await host.click("approve")
                    approved = await host.serve_one_call()
                    assert not approved.is_error
                    assert (
                        await host.status()
                        == "Approved: the call ran once. This view shows no result and tells the conversation nothing."
                    )
                    assert writes(sandbox) == PLANNED
                    sandbox.clear_requests()

                    # The same view again (its ticket used): Approve earns a fresh view and runs nothing.
                    await host.show(dict(APPROVE), second, "light")
                    await host.click("approve")
                    replayed = await host.serve_one_call()
                    assert replayed.meta is not None and APPROVAL_META_KEY in replayed.meta
                    assert await host.status() == (
                        "That approval was no longer valid, so nothing was done. Here is the question again."
                    )
                    assert await host.in_view("document.getElementById('approve').disabled") is False
                    await host.screenshot(f"approval-view-shown-again-{mode}.png")
                    assert writes(sandbox) == []

                    # The fresh view answers the keyboard: Enter on a focused Decline declines it.
                    await host.press_enter_on("decline")
                    by_keyboard = await host.serve_one_call()
                    assert by_keyboard.structured_content is not None
                    assert by_keyboard.structured_content["outcome"] == "declined"
                    assert await host.status() == "Declined: nothing was done."
                    assert writes(sandbox) == []

                    # Whatever a question held, the view inserts it as text: markup stays characters.
                    markup = '<img src=x onerror="document.title=1"><b>bold</b>'
                    forged = second.model_copy(
                        update={
                            "meta": {
                                **(second.meta or {}),
                                APPROVAL_META_KEY: {
                                    **(second.meta or {})[APPROVAL_META_KEY],
                                    "question": markup,
                                },
                            }
                        }
                    )
                    await host.show(dict(APPROVE), forged, "light")
                    assert await host.in_view(
                        "[document.getElementById('question').textContent,"
                        " document.getElementById('question').children.length, document.title]"
                    ) == [markup, 0, "Approve a Woodpecker CI change"]
    finally:
        await anyio.to_thread.run_sync(browser.close)
    assert [c["name"] for c in host.calls] == [APP_TOOL] * 4
    assert host.sizes and all(size["height"] > 100 for size in host.sizes)
