"""The approval page over a real stdio server (ADR 0063): a client that shows no dialog gets its
guarded call put on a page in the browser the server opens itself; only the page's form decides.

`BROWSER` names a small program that records the URL it is given, as a desktop's browser would be
handed it; the test then answers the page with real HTTP requests, as the person's browser would.
Nothing reaches Woodpecker before the form is posted; approve runs the call once; decline, a second
post and a retry run nothing more; the link's secret appears nowhere the client or the logs see.
"""

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from sandbox.server import Sandbox
from tests.fixtures.mcp import server_environment
from tests.mcp.guarded_calls import WIDENING

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DELETE_SECRET = WIDENING["delete_secret"]


def recording_browser(tmp_path: Path) -> tuple[Path, Path]:
    """A `$BROWSER` program that appends the URL it is handed to a file, and that file."""
    record = tmp_path / "opened.txt"
    program = tmp_path / "browser"
    program.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{record}'\n", encoding="utf-8")
    program.chmod(0o755)
    return program, record


@asynccontextmanager
async def page_server(
    sandbox: Sandbox, tmp_path: Path, *, browser: bool = True, elicitation: Any = None, **extra: str
) -> AsyncIterator[tuple[Client, Path, Path, Path]]:
    program, record = recording_browser(tmp_path)
    audit, errlog = tmp_path / "audit.jsonl", tmp_path / "stderr.txt"
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_AUDIT_FILE=str(audit), **extra)
    if browser:
        env["BROWSER"] = str(program)
    params = StdioServerParameters(command=sys.executable, args=["-m", "entrypoints"], env=env)
    with errlog.open("w") as err:
        async with Client(
            stdio_client(params, errlog=err), mode="legacy", elicitation_callback=elicitation
        ) as client:
            yield client, record, audit, errlog


async def opened_url(record: Path) -> str:
    """The one URL the browser was handed, once it was."""
    while not record.exists() or not record.read_text().strip():
        await anyio.sleep(0.02)  # how soon it is seen, not how long it may take
    (url,) = record.read_text().split()
    return url


async def answer(url: str, decision: str) -> str:
    """Open the page as a browser does (GET, keeping its cookie), then post the form; the outcome shown."""
    async with httpx.AsyncClient() as browser:
        page = await browser.get(url)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
        posted = await browser.post(url, data={**fields, "decision": decision})
    assert posted.status_code == 200
    found = re.search(r'id="outcome" data-outcome="(\w+)"', posted.text)
    assert found is not None, posted.text
    return found.group(1)


def deletes(sandbox: Sandbox) -> list[Any]:
    return [r for r in sandbox.state_changing_requests() if r.method == "DELETE"]


async def call_and_answer(
    client: Client, record: Path, sandbox: Sandbox, decision: str
) -> tuple[types.CallToolResult, str, str, list[Any]]:
    """Call delete_secret, answer its page with `decision` while the call waits; the call's result,
    the page's URL, the outcome the page showed, and the deletes Woodpecker had seen before the post."""
    async with anyio.create_task_group() as group:
        done: list[types.CallToolResult] = []

        async def call() -> None:
            done.append(await client.call_tool("delete_secret", dict(DELETE_SECRET)))

        group.start_soon(call)
        url = await opened_url(record)
        before = list(deletes(sandbox))
        shown = await answer(url, decision)
    return done[0], url, shown, before


def everything_the_client_saw(*results: types.CallToolResult) -> str:
    return json.dumps([r.model_dump(mode="json", by_alias=True) for r in results])


async def test_approve_on_the_page_runs_the_call_once_in_the_same_call(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with page_server(sandbox, tmp_path) as (client, record, audit, errlog):
        with anyio.fail_after(60):
            result, url, shown, before = await call_and_answer(client, record, sandbox, "approve")
            again = await answer(url, "approve")
    assert before == []
    assert shown == "approved" and again == "approved"
    assert not result.is_error, result.content
    assert len(deletes(sandbox)) == 1
    secret = url.rsplit("/", 1)[1]
    assert len(secret) >= 22  # at least 128 random bits, base64url
    for seen in (everything_the_client_saw(result), errlog.read_text(), audit.read_text()):
        assert secret not in seen and "/approve/" not in seen
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["path"], line.get("reached"), line["outcome"]) for line in lines] == [
        ("page", "browser", "asked"),
        ("page", "browser", "approved"),
        ("page", "browser", "executed"),
    ]


async def test_decline_runs_nothing_and_a_second_post_changes_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with page_server(sandbox, tmp_path) as (client, record, _audit, _errlog):
        with anyio.fail_after(60):
            result, url, shown, _before = await call_and_answer(client, record, sandbox, "decline")
            later = await answer(url, "approve")
    assert shown == "declined" and later == "declined"
    assert result.structured_content is not None and result.structured_content["outcome"] == "declined"
    assert deletes(sandbox) == []


async def test_a_call_unanswered_in_its_window_is_collected_by_the_retry_on_the_same_page(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with page_server(sandbox, tmp_path, WOODPECKER_MCP_APPROVAL_WAIT_SECONDS="1") as (
        client,
        record,
        _a,
        _e,
    ):
        with anyio.fail_after(60):
            first = await client.call_tool("delete_secret", dict(DELETE_SECRET))
            url = await opened_url(record)
            nothing_yet = list(deletes(sandbox))
            async with anyio.create_task_group() as group:
                done: list[types.CallToolResult] = []

                async def retry() -> None:
                    # Until the person answers, each retry waits one window on the same page.
                    while not done or done[-1].structured_content.get("outcome") == "pending":  # type: ignore[union-attr]
                        done.append(await client.call_tool("delete_secret", dict(DELETE_SECRET)))

                group.start_soon(retry)
                shown = await answer(url, "approve")
    assert first.structured_content is not None and first.structured_content["outcome"] == "pending"
    assert "call this same tool again with the same arguments" in str(first.content).lower()
    assert nothing_yet == []
    assert shown == "approved"
    assert not done[-1].is_error, done[-1].content
    assert len(deletes(sandbox)) == 1
    # No second tab: the retries waited on the page the first call opened.
    assert record.read_text().split() == [url]


async def test_always_puts_the_question_on_the_page_even_for_a_client_that_shows_dialogs(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # The SDK's client declares form and URL elicitation: `always` offers it the page's link (URL
    # mode), never the form dialog, and only the page's answer runs the call.
    asked: list[Any] = []

    async def agree(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(
            action="accept", content={"confirm": True} if params.mode == "form" else None
        )

    env = {"WOODPECKER_MCP_APPROVAL_PAGE": "always"}
    async with page_server(sandbox, tmp_path, elicitation=agree, **env) as (client, record, _a, errlog):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                done: list[types.CallToolResult] = []

                async def call() -> None:
                    done.append(await client.call_tool("delete_secret", dict(DELETE_SECRET)))

                group.start_soon(call)
                while not asked:
                    await anyio.sleep(0.02)  # how soon it is seen, not how long it may take
                nothing_yet = list(deletes(sandbox))
                shown = await answer(asked[0].url, "approve")
    assert [p.mode for p in asked] == ["url"]
    assert nothing_yet == [] and shown == "approved"
    assert not done[0].is_error, done[0].content
    assert len(deletes(sandbox)) == 1
    assert not record.exists()  # the client offered the link: the server opened no browser
    assert "WOODPECKER_MCP_APPROVAL_PAGE=always" in errlog.read_text()


async def test_without_a_browser_the_client_gets_the_two_call_token(sandbox: Sandbox, tmp_path: Path) -> None:
    async with page_server(sandbox, tmp_path, browser=False) as (client, record, _audit, _errlog):
        with anyio.fail_after(60):
            result = await client.call_tool("delete_secret", dict(DELETE_SECRET))
    assert result.structured_content is not None and "confirm_token" in result.structured_content
    assert not record.exists()
    assert deletes(sandbox) == []


async def test_off_keeps_the_token_even_with_a_browser(sandbox: Sandbox, tmp_path: Path) -> None:
    async with page_server(sandbox, tmp_path, WOODPECKER_MCP_APPROVAL_PAGE="off") as (client, record, _a, _e):
        with anyio.fail_after(60):
            result = await client.call_tool("delete_secret", dict(DELETE_SECRET))
    assert result.structured_content is not None and "confirm_token" in result.structured_content
    assert not record.exists()
