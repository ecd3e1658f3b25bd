"""The approval view as a faithful host shows it: the MCP ext-apps AppBridge (2.0.4) in real Chromium
hosts the view from the real server's result, its `tools/call` answered by the real server, and
the test clicks (ADR 0049, ADR 0066).

Nothing runs before a click; Approve runs once, Decline nothing; a view rendered again after its
question was answered (a conversation reloaded) says what was decided and cannot run the call
again; a host error on an answer is an unknown outcome, not "nothing was done"; each question
stays on the view with what became of it. Screenshots land in test-artefacts/ (gitignored).
"""

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import advertise

from domain.guard.outcomes import APPROVAL_META_KEY
from domain.woodpecker.approval_view import APP_MIME_TYPE, APP_STATE_TOOL, APP_TOOL, APPS_EXTENSION, VIEW_URI
from sandbox.server import Sandbox
from tests.fixtures.apps_host import AppsHost, bundle_app_bridge, with_csp
from tests.fixtures.chromium import Chromium, chromium_binary
from tests.fixtures.mcp import MODES, Harness, harness_for
from tests.mcp import test_guard_recheck as recheck

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser, pytest.mark.node]

APPROVE = {"repo_id": 1, "number": 11}
HELD_TOO = {"repo_id": 3, "number": 3}
PLANNED = [("POST", "/api/repos/1/pipelines/11/approve")]
# guard.md §1c: a push on dev of umbrella/infra, which requires approval for every event, asks.
TRIGGER = {"repo_id": 3, "branch": "dev"}
TRIGGERED = [("POST", "/api/repos/3/pipelines")]
DELETE = {"repo_id": 1, "number": 10}
DELETED = [("DELETE", "/api/repos/1/pipelines/10")]

RAN = "Approved: the call ran once."
DECLINED = "Declined: nothing was done."


@pytest.fixture(scope="session")
def app_bridge(tmp_path_factory: pytest.TempPathFactory) -> str:
    return bundle_app_bridge(tmp_path_factory.mktemp("apps-host"))


def writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in sandbox.state_changing_requests()]


@asynccontextmanager
async def hosted(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str, mode: str = "legacy"
) -> AsyncIterator[tuple[AppsHost, Client, Harness]]:
    """A Chromium page with the AppBridge, and a client of the real server that declared MCP Apps."""
    browser = await anyio.to_thread.run_sync(Chromium, chromium_binary(), tmp_path / "profile")
    try:
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            with anyio.fail_after(180):
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
                    host = await anyio.to_thread.run_sync(
                        AppsHost, browser, app_bridge, client, app_tools, with_csp(page.text)
                    )
                    yield host, client, harness
    finally:
        await anyio.to_thread.run_sync(browser.close)


def question_of(result: types.CallToolResult) -> str:
    assert result.meta is not None, result.content
    return str(result.meta[APPROVAL_META_KEY]["question"])


@pytest.mark.parametrize("mode", MODES)
async def test_the_view_in_headless_chromium_declines_approves_once_and_shows_a_replay_afresh(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str, mode: str
) -> None:
    """The view shown again after its Approve (a conversation reloaded) is shown afresh with what
    was decided, and offers no buttons (ADR 0066)."""
    async with hosted(sandbox, tmp_path, app_bridge, mode) as (host, client, _):
        # Decline: nothing reaches Woodpecker, and the question stays with its answer.
        first = await client.call_tool("approve_pipeline", dict(APPROVE))
        await host.mount()
        assert await host.show(dict(APPROVE), first) == "open"
        assert await host.offered()
        (shown,) = await host.cards()
        assert (shown["question"], shown["children"], shown["heading"]) == (
            question_of(first),
            "0",
            "Question",
        )
        await host.screenshot(f"approval-view-light-{mode}.png")
        assert writes(sandbox) == []  # nothing before a click
        await host.click("decline")
        declined = await host.serve_one_call()
        assert declined is not None and declined.structured_content is not None
        assert declined.structured_content["outcome"] == "declined"
        assert await host.settled_state() == "closed"
        (answered,) = await host.cards()
        assert (answered["question"], answered["record"]) == (question_of(first), DECLINED)
        assert not await host.offered()
        assert writes(sandbox) == []

        # Approve: exactly the planned request, once.
        second = await client.call_tool("approve_pipeline", dict(APPROVE))
        await host.mount({"theme": "dark"})
        assert await host.show(dict(APPROVE), second) == "open"
        await host.screenshot(f"approval-view-dark-{mode}.png")
        await host.click("approve")
        approved = await host.serve_one_call()
        assert approved is not None and not approved.is_error
        assert await host.settled_state() == "closed"
        assert [(c["question"], c["record"]) for c in await host.cards()] == [(question_of(second), RAN)]
        assert writes(sandbox) == PLANNED

        # The same view rendered again: it says what was decided, and offers nothing to click.
        await host.mount()
        assert await host.show(dict(APPROVE), second) == "closed"
        assert [(c["question"], c["record"]) for c in await host.cards()] == [(question_of(second), RAN)]
        assert not await host.offered()
        await host.screenshot(f"approval-view-shown-again-{mode}.png")
        assert writes(sandbox) == PLANNED

        # A fresh question (another held pipeline: the first is approved now) answers the keyboard: Enter
        # on a focused Decline declines it.
        third = await client.call_tool("approve_pipeline", dict(HELD_TOO))
        await host.mount()
        assert await host.show(dict(HELD_TOO), third) == "open"
        await host.press_enter_on("decline")
        by_keyboard = await host.serve_one_call()
        assert by_keyboard is not None and by_keyboard.structured_content is not None
        assert by_keyboard.structured_content["outcome"] == "declined"
        assert await host.settled_state() == "closed"
        assert (await host.cards())[-1]["record"] == DECLINED
        assert writes(sandbox) == PLANNED

        # Whatever a question held, the view inserts it as text: markup stays characters.
        markup = '<img src=x onerror="document.title=1"><b>bold</b>'
        meta = {**(third.meta or {})[APPROVAL_META_KEY], "question": markup}
        forged = third.model_copy(update={"meta": {**(third.meta or {}), APPROVAL_META_KEY: meta}})
        await host.mount()
        await host.show(dict(HELD_TOO), forged)
        (card,) = await host.cards()
        assert (card["question"], card["children"]) == (markup, "0")
        assert await host.in_view("document.title") == "Approve a Woodpecker CI change"
    assert {c["name"] for c in host.calls} == {APP_TOOL, APP_STATE_TOOL}
    # The view tells the host its size as it grows: a waiting view is short, a question taller.
    assert host.sizes and all(size["height"] > 50 for size in host.sizes)
    assert max(size["height"] for size in host.sizes) > 200


async def test_a_reloaded_view_cannot_trigger_a_pipeline_twice_even_when_its_check_fails(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str
) -> None:
    async with hosted(sandbox, tmp_path, app_bridge) as (host, client, harness):
        result = await client.call_tool("trigger_pipeline", dict(TRIGGER))
        await host.mount()
        assert await host.show(dict(TRIGGER), result) == "open"
        await host.click("approve")
        await host.serve_one_call()
        assert await host.settled_state() == "closed"
        assert writes(sandbox) == TRIGGERED

        # Reloaded: the view reads what was decided and offers no button.
        await host.mount()
        assert await host.show(dict(TRIGGER), result) == "closed"
        assert (await host.cards())[0]["record"] == RAN
        assert not await host.offered()

        # Reloaded in a host that fails the view's check: the buttons come back, but the used ticket
        # runs nothing and asks nothing again; the view says what its question came to.
        await host.mount()
        assert await host.show(dict(TRIGGER), result, check=False) == "open"
        await host.click("approve")
        replayed = await host.serve_one_call()
        assert replayed is not None and APPROVAL_META_KEY not in (replayed.meta or {})
        assert await host.settled_state() == "closed"
        (card,) = await host.cards()
        assert card["record"] == "This answer did nothing: the question was closed already. " + RAN
        assert not await host.offered()
    assert writes(sandbox) == TRIGGERED
    assert harness.audit.outcomes().count("executed") == 1


async def test_a_host_error_on_an_answer_is_an_unknown_outcome_until_the_server_says(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str
) -> None:
    async with hosted(sandbox, tmp_path, app_bridge) as (host, client, _):
        # The host delivered the answer (Woodpecker got the write) and then failed the view's call.
        result = await client.call_tool("approve_pipeline", dict(APPROVE))
        await host.mount()
        assert await host.show(dict(APPROVE), result) == "open"
        await host.click("approve")
        await host.serve_one_call(error="Request timed out")
        assert writes(sandbox) == PLANNED
        # The view asks what the server recorded; the host holds that call while the test reads.
        check = await host.next_call()
        assert check["params"]["name"] == APP_STATE_TOOL
        said = (await host.cards())[0]["record"]
        assert "whether the call ran is unknown" in said and "nothing was done" not in said
        await host.serve(check)
        assert await host.settled_state() == "closed"
        assert (await host.cards())[0]["record"] == (
            "The host reported an error, but this server recorded the answer. " + RAN
        )

        # The host failed the call without delivering it: still unknown to the view, until the
        # server says it recorded no answer; then the question is offered again, and runs once.
        result = await client.call_tool("delete_pipeline", dict(DELETE))
        await host.mount()
        assert await host.show(dict(DELETE), result) == "open"
        await host.click("approve")
        await host.serve_one_call(error="Request timed out", forward=False)
        check = await host.next_call()
        assert "whether the call ran is unknown" in (await host.cards())[0]["record"]
        await host.serve(check)
        assert await host.settled_state() == "open"
        assert (await host.cards())[0]["record"].startswith(
            "The host reported an error, and this server has recorded no answer to this question yet"
        )
        assert writes(sandbox) == PLANNED
        await host.click("approve")
        await host.serve_one_call()
        assert await host.settled_state() == "closed"
        assert (await host.cards())[0]["record"] == RAN
    assert writes(sandbox) == PLANNED + DELETED


async def test_a_new_question_after_the_object_changed_is_a_new_card_below_the_first(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str
) -> None:
    tool, args, change, newly_shown = recheck.CASES[0]
    recheck.prepare(sandbox)
    async with hosted(sandbox, tmp_path, app_bridge) as (host, client, _):
        result = await client.call_tool(tool, dict(args))
        await host.mount()
        assert await host.show(dict(args), result) == "open"
        change(sandbox)
        await host.click("approve")
        fresh = await host.serve_one_call()
        assert fresh is not None and writes(sandbox) == []
        assert await host.settled_state(0) == "closed"
        assert await host.settled_state(1) == "open"
        old, new = await host.cards()
        assert (old["question"], old["heading"]) == (question_of(result), "Question")
        assert old["record"].startswith("Not run: what the call would do changed before it ran")
        assert new["heading"] == "New question: what the call would do now"
        assert new["question"] == question_of(fresh) and newly_shown in new["question"]
        assert await host.offered()
        await host.screenshot("approval-view-new-question.png")
        await host.click("approve")
        await host.serve_one_call()
        assert await host.settled_state(1) == "closed"
        assert [c["record"] for c in await host.cards()][1] == RAN
    assert len(writes(sandbox)) == 1


class _FontServer(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


@contextmanager
def font_server() -> Iterator[tuple[str, list[str]]]:
    """A server a host's `@font-face` could name; what it is asked is recorded."""
    handler = type("Fonts", (_FontServer,), {"hits": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def test_the_view_answers_ping_and_a_cancelled_call_and_wears_the_hosts_styles_and_fonts(
    sandbox: Sandbox, tmp_path: Path, app_bridge: str
) -> None:
    with font_server() as (origin, hits):
        context = {
            "theme": "dark",
            "styles": {
                "variables": {
                    "--color-background-primary": "rgb(1, 2, 3)",
                    "--color-text-primary": "rgb(250, 250, 240)",
                    "--font-sans": '"Host Sans", serif',
                },
                # Only @font-face rules are taken, and what they would fetch the view's CSP refuses.
                "css": {
                    "fonts": f'@font-face {{ font-family: "Host Sans"; src: url("{origin}/host-sans.woff2"); }}'
                    " body { display: none; }"
                },
            },
        }
        async with hosted(sandbox, tmp_path, app_bridge) as (host, _, _):
            await host.mount(context)
            assert await host.evaluate("pingView()") == {}
            assert await host.evaluate("toolInput({})") is True
            assert await host.evaluate('toolCancelled("the person stopped the conversation")') is True
            for _ in range(100):
                idle = await host.in_view("document.getElementById('idle').textContent")
                if idle.startswith("The call was cancelled"):
                    break
                await anyio.sleep(0.05)
            assert idle == (
                "The call was cancelled before it asked anything: nothing here needs your approval, "
                "and nothing was done."
            )
            worn = await host.in_view(
                "(() => { const s = getComputedStyle(document.body);"
                " return [s.backgroundColor, s.color, s.fontFamily, s.display,"
                " document.documentElement.getAttribute('data-theme')]; })()"
            )
            assert worn == ["rgb(1, 2, 3)", "rgb(250, 250, 240)", '"Host Sans", serif', "block", "dark"]
            # Asking for the face makes the browser try to load it: the view's CSP refuses.
            await host.in_view(
                "document.fonts.load('16px \"Host Sans\"').then(() => true, () => true)", await_promise=True
            )
            await host.screenshot("approval-view-host-styles.png")
            assert not host.calls
    assert hits == []
