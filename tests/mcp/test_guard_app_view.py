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
    APP_STATE_TOOL,
    APP_TOOL,
    APPROVAL_VIEW_HTML,
    APPS_EXTENSION,
    VIEW_URI,
)
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.woodpecker import HELD_PIPELINE, FakeWoodpecker
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
# guard.md §1c: a push on dev of umbrella/infra, which requires approval for every event, asks.
TRIGGER = {"repo_id": 3, "branch": "dev"}
TRIGGERED = [("POST", "/api/repos/3/pipelines")]


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


def closed(result: types.CallToolResult) -> str:
    """The state a closed ticket's answer names, after checking it did nothing and offered no question."""
    assert not result.is_error and APPROVAL_META_KEY not in (result.meta or {}), result.content
    assert result.structured_content is not None
    assert result.structured_content["outcome"] == "view_closed"
    assert result.structured_content["done"] is False
    assert text(result).startswith("This answer did nothing: its question was closed already (")
    return str(result.structured_content["state"])


@pytest.mark.parametrize("mode", MODES)
async def test_decline_sends_nothing_approve_sends_the_planned_request_once_and_a_replay_earns_a_fresh_view(
    sandbox: Sandbox, mode: str
) -> None:
    """A replayed answer (the view shown again) runs nothing and, since ADR 0066, offers no new
    question either: the view is shown afresh with what its ticket came to."""
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
    # A used ticket, or the ticket a Decline used up, never runs the call nor asks again: it says
    # what was decided.
    assert (closed(replay), closed(declined_ticket)) == ("ran", "declined")
    assert harness.audit.outcomes() == [
        "ticket_issued",
        "declined",
        "ticket_issued",
        "approved",
        "executed",
        "ticket_rejected",
        "ticket_rejected",
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
    assert closed(as_ticket) == "unknown"
    view_of(with_token)  # a confirm_token on the view's connection still gets a view, never a run
    assert as_token.is_error and "no new one was issued" in text(as_token)


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
                not_checked = await plain.call_tool(APP_STATE_TOOL, {"ticket": "0" * 32})
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
    assert not_checked.is_error and "Unknown tool" in text(not_checked)
    assert token.structured_content is not None and "confirm_token" in token.structured_content
    for app_only in (APP_TOOL, APP_STATE_TOOL):
        assert tools[app_only].meta == {"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}}
    assert tools[APP_STATE_TOOL].annotations is not None and tools[APP_STATE_TOOL].annotations.read_only_hint
    guarded = {t.name for t in WOODPECKER_TOOLS if t.guarded}
    assert {n for n, t in tools.items() if (t.meta or {}).get("ui") == {"resourceUri": VIEW_URI}} == guarded
    assert [(r.uri, r.mime_type) for r in resources] == [(VIEW_URI, APP_MIME_TYPE)]
    (content,) = page.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == APP_MIME_TYPE and content.text == APPROVAL_VIEW_HTML
    # A client that shows both a dialog and views is asked in the dialog, and is listed no app tool.
    assert APP_TOOL not in both_tools and APP_STATE_TOOL not in both_tools
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
    assert html.startswith("<!DOCTYPE html>") and len(html.encode()) < 16_000
    assert not re.search(r"(?:src|href|action)\s*=", html), "the view loads nothing"
    assert not re.search(r"https?://|//[a-z]", html.replace("http-equiv", "")), "no external origin"
    assert "innerHTML" not in html and "outerHTML" not in html and "insertAdjacentHTML" not in html
    assert "document.write" not in html and "eval(" not in html
    assert "q.textContent = m.question" in html
    # One CSP, as ADR 0049 set it: nothing is fetched, a host font's url() included.
    assert (
        "content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'none'; "
        "connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'; object-src 'none'\">"
    ) in html
    assert html.count("Content-Security-Policy") == 1 and "font-src" not in html
    assert 'aria-live="polite"' in html and "prefers-color-scheme: dark" in html
    assert html.count('<button type="button"') == 2


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_over_http_a_ticket_is_its_callers_own(mode: str) -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
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
    assert closed(stolen) == "unknown"  # another caller's ticket: nothing told, nothing asked
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
                replaced = state_of(await client.call_tool(APP_STATE_TOOL, {"ticket": first["ticket"]}))
                approved = await client.call_tool(APP_TOOL, answer(fresh, dict(args), True))
                told = state_of(await client.call_tool(APP_STATE_TOOL, {"ticket": first["ticket"]}))
    assert fresh["question"] != first["question"] and newly_shown in fresh["question"]
    # A new question is marked as one, and the first ticket's record leads to it (ADR 0066).
    assert fresh["replaces"] == "changed" and "replaces" not in first
    assert (replaced["state"], replaced["then"]) == ("changed", "open")
    assert (told["state"], told["then"]) == ("changed", "ran")
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
    assert closed(late) == "expired"
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
    assert closed(replay) == "ran"
    assert writes(sandbox) == PLANNED


def state_of(result: types.CallToolResult) -> dict[str, Any]:
    """What the view's state check answered (never an error, never a question)."""
    assert not result.is_error and result.structured_content is not None, result.content
    assert APPROVAL_META_KEY not in (result.meta or {})
    return dict(result.structured_content)


@pytest.mark.parametrize("mode", MODES)
async def test_a_used_ticket_earns_no_new_question_so_a_reloaded_view_cannot_trigger_twice(
    sandbox: Sandbox, mode: str
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode, extensions=apps()) as client:
                approval = view_of(await client.call_tool("trigger_pipeline", dict(TRIGGER)))
                ran = await client.call_tool(APP_TOOL, answer(approval, dict(TRIGGER), True))
                assert writes(sandbox) == TRIGGERED
                # The same view rendered again (a conversation reloaded), answered as a person would:
                # Approve, then Approve on whatever question that brings.
                replayed = await client.call_tool(APP_TOOL, answer(approval, dict(TRIGGER), True))
                offered = (replayed.meta or {}).get(APPROVAL_META_KEY)
                if offered is not None:
                    await client.call_tool(APP_TOOL, answer(offered, dict(TRIGGER), True))
                declined = await client.call_tool(APP_TOOL, answer(approval, dict(TRIGGER), False))
    assert not ran.is_error
    assert writes(sandbox) == TRIGGERED
    assert offered is None
    for late in (replayed, declined):
        assert closed(late) == "ran"
    assert harness.audit.outcomes() == [
        "ticket_issued",
        "approved",
        "executed",
        "ticket_rejected",
        "ticket_rejected",
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_view_reads_what_became_of_its_ticket_and_reading_changes_nothing(
    sandbox: Sandbox, mode: str
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode=mode, extensions=apps()) as client:

                async def check(approval: dict[str, Any]) -> dict[str, Any]:
                    return state_of(await client.call_tool(APP_STATE_TOOL, {"ticket": approval["ticket"]}))

                declined = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                harness.clock.advance(60)
                open_one = await check(declined)
                assert open_one == await check(declined)  # reading twice changes nothing
                await client.call_tool(APP_TOOL, answer(declined, dict(APPROVE), False))
                approved = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                await client.call_tool(APP_TOOL, answer(approved, dict(APPROVE), True))
                expired = view_of(await client.call_tool("trigger_pipeline", dict(TRIGGER)))
                harness.clock.advance(TOKEN_TTL_SECONDS + 1)
                states = [await check(v) for v in (declined, approved, expired)]
                unknown = await check({"ticket": "0" * 32})
                malformed = state_of(await client.call_tool(APP_STATE_TOOL, {"ticket": "not a ticket"}))
    assert writes(sandbox) == PLANNED
    assert (open_one["state"], open_one["expires_in_seconds"]) == ("open", TOKEN_TTL_SECONDS - 60)
    assert [s["state"] for s in states] == ["declined", "ran", "expired"]
    assert unknown["state"] == malformed["state"] == "unknown"
    assert {s["outcome"] for s in (open_one, *states, unknown)} == {"view_state"}
    assert harness.audit.outcomes().count("executed") == 1


# Repository 2 (acme/api) requires approval for forks; lowering it to none asks, unless it is none already.
LOWER = {"repo_id": 2, "require_approval": "none"}


def lower_by_hand(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.repos[2].require_approval = "none"


@pytest.mark.parametrize("approve", [True, False])
async def test_a_view_answered_after_its_call_stopped_asking_still_closes_its_question_once(
    sandbox: Sandbox, approve: bool
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                approval = view_of(await client.call_tool("update_repository", dict(LOWER)))
                lower_by_hand(sandbox)
                first = await client.call_tool(APP_TOOL, answer(approval, dict(LOWER), approve))
                sent = writes(sandbox)
                replayed = await client.call_tool(APP_TOOL, answer(approval, dict(LOWER), True))
    assert not first.is_error and APPROVAL_META_KEY not in (first.meta or {})
    # The harmless direction needs nobody's yes, but a no still runs nothing, and either answer is
    # the ticket's only one: the view shown again cannot run it a second time.
    assert len(sent) == (1 if approve else 0) and writes(sandbox) == sent
    assert closed(replayed) == ("ran" if approve else "declined")
