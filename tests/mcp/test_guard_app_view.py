"""The MCP Apps approval view (ADR 0049): a host that shows views but no dialog asks the person there.

Real MCP Python SDK clients that declare `io.modelcontextprotocol/ui`, on both protocol revisions,
against the real server and the sandbox Woodpecker (its request log says what was sent).
"""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from starlette.middleware import Middleware

from adapters.mcp_http import build_http_app
from domain.guard.outcomes import APPROVAL_META_KEY
from domain.guard.tokens import TOKEN_TTL_SECONDS
from domain.woodpecker.approval_view import (
    APP_MIME_TYPE,
    APP_TOOL,
    APPROVAL_VIEW_HTML,
    APPS_EXTENSION,
    VIEW_URI,
)
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import (
    MODES,
    Person,
    PrincipalFromHeader,
    build_harness_on,
    harness_for,
    server_command,
    server_environment,
    serving,
)
from tests.mcp import test_guard_recheck as recheck
from tests.mcp.guarded_calls import WIDENING, assert_clean_question

pytestmark = pytest.mark.anyio

APPROVE = {"repo_id": 1, "number": 11}
PLANNED = [("POST", "/api/repos/1/pipelines/11/approve")]


def apps() -> list[Any]:
    """What a host that renders MCP Apps declares (SEP-2133 extension settings)."""
    return [advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})]


def view_of(result: types.CallToolResult) -> dict[str, Any]:
    """The approval view's data in a result, after checking the result names the view."""
    assert result.meta is not None, result.content
    assert result.meta["ui"] == {"resourceUri": VIEW_URI}
    approval: dict[str, Any] = result.meta[APPROVAL_META_KEY]
    assert isinstance(approval["ticket"], str) and len(approval["ticket"]) == 32
    return approval


def text(result: types.CallToolResult) -> str:
    return str(getattr(result.content[0], "text", ""))


def answer(approval: dict[str, Any], arguments: dict[str, Any], approve: bool) -> dict[str, Any]:
    return {
        "tool": approval["tool"],
        "arguments": arguments,
        "ticket": approval["ticket"],
        "approve": approve,
    }


def writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in sandbox.state_changing_requests()]


@pytest.mark.parametrize("mode", MODES)
async def test_decline_sends_nothing_approve_sends_the_planned_request_once_and_a_replay_earns_a_fresh_view(
    sandbox: Sandbox, mode: str
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode, extensions=apps()) as client:
                first = await client.call_tool("approve_pipeline", dict(APPROVE))
                declined = await client.call_tool(APP_TOOL, answer(view_of(first), dict(APPROVE), False))
                assert writes(sandbox) == []
                again = await client.call_tool("approve_pipeline", dict(APPROVE))
                approval = view_of(again)
                approved = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
                assert writes(sandbox) == PLANNED
                sandbox.clear_requests()
                replay = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
                declined_ticket = await client.call_tool(
                    APP_TOOL, answer(view_of(first), dict(APPROVE), True)
                )
    assert writes(sandbox) == []
    assert not first.is_error and first.structured_content is not None
    assert first.structured_content["outcome"] == "approval_view"
    words = text(first)
    assert "approved in the host's view: the host keeps that button's tool from the model" in words
    assert "If no view with Approve and Decline appears in this host" in words
    assert view_of(first)["ticket"] not in words  # the model reads the text; the ticket is for the view
    assert_clean_question(view_of(first)["question"], APPROVE)
    assert declined.structured_content is not None and declined.structured_content["outcome"] == "declined"
    assert not approved.is_error and APPROVAL_META_KEY not in (approved.meta or {})
    # A used ticket, or the ticket a Decline used up, never runs the call: the view is shown afresh.
    for fresh in (replay, declined_ticket):
        assert view_of(fresh)["ticket"] not in (approval["ticket"], view_of(first)["ticket"])
        assert "That approval was not valid for this call" in text(fresh)
    assert harness.audit.outcomes() == [
        "ticket_issued",
        "declined",
        "ticket_issued",
        "approved",
        "executed",
        "ticket_rejected",
        "ticket_issued",
        "ticket_rejected",
        "ticket_issued",
    ]
    assert {e["path"] for e in harness.audit.events} == {"app"}
    assert approval["ticket"] not in repr(harness.audit.events)


@pytest.mark.parametrize("mode", MODES)
async def test_a_ticket_for_other_arguments_runs_nothing(sandbox: Sandbox, mode: str) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode, extensions=apps()) as client:
                approval = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                other = await client.call_tool(APP_TOOL, answer(approval, {"repo_id": 1, "number": 12}, True))
    assert writes(sandbox) == []
    assert view_of(other)["question"] != approval["question"]
    assert "ticket_rejected" in harness.audit.outcomes() and "executed" not in harness.audit.outcomes()


async def test_a_token_is_never_a_ticket_nor_a_ticket_a_token(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with (
                Client(harness.server, mode="legacy", extensions=apps()) as viewer,
                Client(harness.server, mode="legacy") as plain,
            ):
                token = (await plain.call_tool("approve_pipeline", dict(APPROVE))).structured_content
                assert token is not None
                approval = view_of(await viewer.call_tool("approve_pipeline", dict(APPROVE)))
                as_ticket = await viewer.call_tool(
                    APP_TOOL, {**answer(approval, dict(APPROVE), True), "ticket": token["confirm_token"]}
                )
                with_token = await viewer.call_tool(
                    "approve_pipeline", {**APPROVE, "confirm_token": token["confirm_token"]}
                )
                as_token = await plain.call_tool(
                    "approve_pipeline", {**APPROVE, "confirm_token": approval["ticket"]}
                )
    assert writes(sandbox) == []
    view_of(as_ticket)
    view_of(with_token)  # a confirm_token on the view's connection still gets a view, never a run
    assert as_token.is_error and "No new token was issued" in text(as_token)


@pytest.mark.parametrize("mode", MODES)
async def test_only_a_connection_that_declared_mcp_apps_is_listed_or_accepted_the_app_only_tool(
    sandbox: Sandbox, mode: str
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode) as plain:
                plain_tools = (await plain.list_tools()).tools
                plain_resources = (await plain.list_resources()).resources
                refused = await plain.call_tool(
                    APP_TOOL,
                    {"tool": "approve_pipeline", "arguments": APPROVE, "ticket": "0" * 32, "approve": True},
                )
                token = await plain.call_tool("approve_pipeline", dict(APPROVE))
            async with Client(harness.server, mode=mode, extensions=apps()) as viewer:
                tools = {t.name: t for t in (await viewer.list_tools()).tools}
                resources = (await viewer.list_resources()).resources
                page = await viewer.read_resource(VIEW_URI)
            async with Client(
                harness.server, mode=mode, extensions=apps(), elicitation_callback=Person("decline")
            ) as both:
                both_tools = {t.name for t in (await both.list_tools()).tools}
                dialog = await both.call_tool("approve_pipeline", dict(APPROVE))
    assert APP_TOOL not in {t.name for t in plain_tools} and plain_resources == []
    assert all(not (t.meta or {}).get("ui") for t in plain_tools)
    assert refused.is_error and "Unknown tool" in text(refused)
    assert token.structured_content is not None and "confirm_token" in token.structured_content
    assert tools[APP_TOOL].meta == {"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}}
    guarded = {t.name for t in WOODPECKER_TOOLS if t.guarded}
    assert {n for n, t in tools.items() if (t.meta or {}).get("ui") == {"resourceUri": VIEW_URI}} == guarded
    assert [(r.uri, r.mime_type) for r in resources] == [(VIEW_URI, APP_MIME_TYPE)]
    (content,) = page.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == APP_MIME_TYPE and content.text == APPROVAL_VIEW_HTML
    # A client that shows both a dialog and views is asked in the dialog, and is listed no app tool.
    assert APP_TOOL not in both_tools
    assert dialog.structured_content is not None and dialog.structured_content["outcome"] == "declined"
    assert writes(sandbox) == []


@pytest.mark.parametrize("mode", MODES)
async def test_elicitation_false_still_forces_the_token_on_a_view_host(sandbox: Sandbox, mode: str) -> None:
    async with harness_for(sandbox, sandbox.admin_token, elicitation=False) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode, extensions=apps()) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                first = await client.call_tool("approve_pipeline", dict(APPROVE))
                refused = await client.call_tool(
                    APP_TOOL,
                    {"tool": "approve_pipeline", "arguments": APPROVE, "ticket": "0" * 32, "approve": True},
                )
    assert APP_TOOL not in names
    assert first.structured_content is not None and "confirm_token" in first.structured_content
    assert first.meta is None or APPROVAL_META_KEY not in first.meta
    assert refused.is_error and writes(sandbox) == []


async def test_the_views_question_is_the_dialogs_for_every_guarded_tool(sandbox: Sandbox) -> None:
    guarded = {t.name for t in WOODPECKER_TOOLS if t.guarded}
    assert set(WIDENING) == guarded
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(60):
            async with (
                Client(harness.server, mode="legacy", extensions=apps()) as viewer,
                Client(harness.server, mode="legacy", elicitation_callback=person) as dialog,
            ):
                for tool in sorted(WIDENING):
                    approval = view_of(await viewer.call_tool(tool, dict(WIDENING[tool])))
                    await dialog.call_tool(tool, dict(WIDENING[tool]))
                    assert approval["tool"] == tool
                    assert approval["question"].encode() == person.questions[-1].encode(), tool
    assert len(person.questions) == len(guarded)
    assert writes(sandbox) == []


def test_the_view_is_self_contained_and_inserts_the_question_as_text() -> None:
    html = APPROVAL_VIEW_HTML
    assert html.startswith("<!DOCTYPE html>") and len(html.encode()) < 12_000
    assert not re.search(r"(?:src|href|action)\s*=", html), "the view loads nothing"
    assert not re.search(r"https?://|//[a-z]", html.replace("http-equiv", "")), "no external origin"
    assert "innerHTML" not in html and "outerHTML" not in html and "insertAdjacentHTML" not in html
    assert "document.write" not in html and "eval(" not in html
    assert "q.textContent = meta.question" in html
    assert "connect-src 'none'" in html and "default-src 'none'" in html
    assert 'aria-live="polite"' in html and "prefers-color-scheme: dark" in html
    assert html.count('<button type="button"') == 2


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_over_http_a_ticket_is_its_callers_own(mode: str) -> None:
    woodpecker = FakeWoodpecker()
    harness = build_harness_on(woodpecker, Credential("t"))
    app = build_http_app(harness.server, middleware=[Middleware(PrincipalFromHeader)])
    args = {"repo_id": 5, "number": 12}

    @asynccontextmanager
    async def client_for(base: str, who: str) -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(headers={"x-test-principal": who}) as http:
            async with Client(
                streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, extensions=apps()
            ) as client:
                yield client

    with anyio.fail_after(30):
        async with serving(app) as base:
            async with client_for(base, "alice") as alice, client_for(base, "mallory") as mallory:
                approval = view_of(await alice.call_tool("approve_pipeline", dict(args)))
                stolen = await mallory.call_tool(APP_TOOL, answer(approval, dict(args), True))
                assert woodpecker.writes == []
                own = await alice.call_tool(APP_TOOL, answer(approval, dict(args), True))
    assert view_of(stolen)["ticket"] != approval["ticket"]
    assert not own.is_error
    assert [(c.method, c.path) for c in woodpecker.writes] == [("POST", "/api/repos/5/pipelines/12/approve")]


@pytest.mark.parametrize(("tool", "args", "change", "newly_shown"), recheck.CASES)
async def test_a_view_shown_before_the_object_changed_is_shown_again_and_its_approval_does_nothing(
    sandbox: Sandbox, tool: str, args: dict[str, Any], change: Any, newly_shown: str
) -> None:
    recheck.prepare(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                first = view_of(await client.call_tool(tool, dict(args)))
                change(sandbox)
                again = await client.call_tool(APP_TOOL, answer(first, dict(args), True))
                assert writes(sandbox) == []
                fresh = view_of(again)
                approved = await client.call_tool(APP_TOOL, answer(fresh, dict(args), True))
    assert fresh["question"] != first["question"] and newly_shown in fresh["question"]
    assert not approved.is_error and len(sandbox.state_changing_requests()) >= 1
    assert harness.audit.outcomes()[-4:] == ["ticket_rejected", "ticket_issued", "approved", "executed"]


async def test_a_view_nobody_answers_in_time_runs_nothing(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                approval = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                assert approval["expires_in_seconds"] == TOKEN_TTL_SECONDS
                harness.clock.advance(TOKEN_TTL_SECONDS + 1)
                late = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
    assert writes(sandbox) == []
    assert view_of(late)["ticket"] != approval["ticket"]
    assert "executed" not in harness.audit.outcomes()


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_the_server_process_asks_in_the_view_and_approve_runs_once(
    sandbox: Sandbox, mode: str
) -> None:
    command, args = server_command()
    server = StdioServerParameters(
        command=command, args=args, env=server_environment(sandbox.url, sandbox.admin_token)
    )
    with anyio.fail_after(60):
        async with Client(server, mode=mode, extensions=apps()) as client:
            assert APP_TOOL in {t.name for t in (await client.list_tools()).tools}
            approval = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
            assert writes(sandbox) == []
            approved = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
            assert writes(sandbox) == PLANNED
            replay = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
    assert not approved.is_error
    assert view_of(replay)["ticket"] != approval["ticket"]
    assert writes(sandbox) == PLANNED
