"""The linking page in a real browser: headless Chromium loads it, fills it in and submits it; it refuses to be framed."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.responses import HTMLResponse
from starlette.types import Receive, Scope, Send

from sandbox.server import Sandbox
from tests.fixtures.chromium import Chromium, chromium_binary
from tests.fixtures.http import mcp_client, serve_asgi
from tests.fixtures.oauth import authorization_server
from tests.http.test_token_linking import linking_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser]


def framing_page(link: str) -> Any:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        page = f'<!doctype html><title>framer</title><iframe id=f src="{link}" width=600 height=400></iframe>'
        await HTMLResponse(page)(scope, receive, send)

    return app


def use_the_page(binary: str, profile: Path, link: str, framer: str, token: str) -> dict[str, Any]:
    browser = Chromium(binary, profile)
    try:
        seen: dict[str, Any] = {}
        browser.navigate(framer)
        # The iframe's own document, read from inside it: the browser's error page, not our form.
        seen["framed"] = [
            browser.evaluate_in_frame(
                frame, "[location.href, document.title, !!document.querySelector('form')]"
            )
            for frame in browser.frames()
        ]
        browser.screenshot("link-page-framed.png")
        browser.navigate(link)
        seen["form_title"] = browser.evaluate("document.title")
        browser.evaluate(f"document.getElementById('token').value = {json.dumps(token)}")
        seen["form_shot"] = browser.screenshot("link-page-form.png")
        browser.submit_and_load("document.querySelector('form').requestSubmit()")
        seen["title"] = browser.evaluate("document.title")
        seen["text"] = browser.evaluate("document.body.innerText")
        seen["shot"] = browser.screenshot("link-page-linked.png")
        browser.navigate(link)
        seen["again"] = browser.evaluate("document.title")
        return seen
    finally:
        browser.close()


async def test_a_person_links_their_token_in_headless_chromium_and_the_next_call_runs_as_them(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    binary = chromium_binary()
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        access = idp.token(f"{url}/mcp")
        async with mcp_client(url, access) as alice:
            offer = await alice.call_tool("get_current_user", {})
        link = offer.structured_content["link_url"]
        # Another origin (localhost, not 127.0.0.1) trying to frame the page.
        async with serve_asgi(framing_page(link), host="127.0.0.1") as framer_base:
            framer = framer_base.replace("127.0.0.1", "localhost")
            seen = await anyio.to_thread.run_sync(
                use_the_page, binary, tmp_path / "profile", link, framer, sandbox.user_token
            )
        with anyio.fail_after(60):
            async with mcp_client(url, access) as alice:
                me = await alice.call_tool("get_current_user", {})
    assert seen["form_title"] == "Link your Woodpecker account"
    assert seen["title"] == "Linked"
    assert sandbox.user_login in seen["text"] and sandbox.user_token not in seen["text"]
    assert seen["again"] == "Link expired"
    assert seen["shot"].stat().st_size > 0 and seen["form_shot"].stat().st_size > 0
    # Framed by another site, the page never rendered: the frame holds the browser's error page.
    assert len(seen["framed"]) == 1
    href, _, has_form = seen["framed"][0]
    assert href.startswith("chrome-error://") and not has_form, seen["framed"]
    assert me.structured_content["user"]["login"] == sandbox.user_login
    assert {r.login for r in sandbox.requests} == {sandbox.user_login}
