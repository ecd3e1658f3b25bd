"""The MCP adapter on its own (a fake Woodpecker behind it): arguments, channels, identity, and what the SDK is left to do."""

from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from adapters.mcp_server import (
    CONFIRM_SCHEMA,
    McpApplication,
    McpSessionAsker,
    answer_of,
    call_context,
    declares_form_elicitation,
)
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.asker import Answer, no_answer
from ports.use_cases.guarded import CallContext, Complete
from ports.woodpecker import Credential
from tests.fakes.woodpecker import HELD_PIPELINE, FakeWoodpecker
from tests.fixtures.mcp import MODES, Person, build_harness_on

pytestmark = pytest.mark.anyio


def fake() -> FakeWoodpecker:
    return FakeWoodpecker(
        {
            **HELD_PIPELINE,
            "/api/repos/5": {"id": 5, "require_approval": "all_events", "visibility": "private"},
        }
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_bad_argument_is_a_tool_error_naming_it_and_nothing_is_sent(mode: str) -> None:
    woodpecker = fake()
    harness = build_harness_on(woodpecker, Credential("t"))
    person = Person("accept")
    with anyio.fail_after(10):
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("delete_repository", {"repo_id": "five"})
            missing = await client.call_tool("approve_pipeline", {"repo_id": 5})
            extra = await client.call_tool("delete_repository", {"repo_id": 5, "force": True})
    assert result.is_error and "repo_id" in result.content[0].text
    assert missing.is_error and "number" in missing.content[0].text
    assert extra.is_error and "force" in extra.content[0].text
    assert woodpecker.calls == [] and person.questions == []


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_is_a_tool_error_not_a_protocol_error(mode: str) -> None:
    harness = build_harness_on(fake(), Credential("t"))
    with anyio.fail_after(10):
        async with Client(harness.server, mode=mode) as client:
            result = await client.call_tool("drop_database", {})
    assert result.is_error and "Unknown tool" in result.content[0].text


async def test_the_low_level_server_leaves_request_state_to_us() -> None:
    harness = build_harness_on(fake(), Credential("t"))
    # The SDK's tracing middleware and our own for arguments that are no object: no
    # RequestStateBoundary re-sealing or rejecting our state.
    assert [type(m).__name__ for m in harness.server.middleware] == [
        "OpenTelemetryMiddleware",
        "ArgumentsNotAnObject",
    ]


async def test_a_modern_question_carries_our_sealed_state_verbatim_and_one_boolean() -> None:
    harness = build_harness_on(fake(), Credential("t"))
    with anyio.fail_after(10):
        async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
            first = await client.session.call_tool(
                "approve_pipeline", {"repo_id": 5, "number": 12}, allow_input_required=True
            )
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None and not first.request_state.startswith("v1.")
    request = first.input_requests["confirm"] if first.input_requests else None
    assert isinstance(request, types.ElicitRequest)
    assert isinstance(request.params, types.ElicitRequestFormParams)
    assert request.params.requested_schema == CONFIRM_SCHEMA
    assert "pipeline 12 of repository 5" in request.params.message


async def test_a_legacy_client_with_a_dialog_is_asked_by_push_never_with_input_required() -> None:
    woodpecker = fake()
    harness = build_harness_on(woodpecker, Credential("t"))
    person = Person("decline")
    with anyio.fail_after(10):
        async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
            result = await client.call_tool("approve_pipeline", {"repo_id": 5, "number": 12})
    assert isinstance(result, types.CallToolResult)
    assert len(person.questions) == 1 and woodpecker.writes == []
    assert "Declined, nothing was done" in result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_can_ask_is_asked_even_when_it_brings_a_valid_token(mode: str) -> None:
    woodpecker = fake()
    harness = build_harness_on(woodpecker, Credential("t"))
    person = Person("decline")
    with anyio.fail_after(10):
        # The same caller, first without a dialog: a token that would act on the token path.
        async with Client(harness.server, mode=mode) as plain:
            issued = await plain.call_tool("delete_repository", {"repo_id": 5})
        assert issued.structured_content is not None
        token = issued.structured_content["confirm_token"]
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("delete_repository", {"repo_id": 5, "confirm_token": token})
    assert len(person.questions) == 1 and woodpecker.writes == []
    assert result.structured_content is not None and result.structured_content["outcome"] == "declined"


def test_only_accept_with_confirm_exactly_true_is_a_yes() -> None:
    assert answer_of(types.ElicitResult(action="accept", content={"confirm": True})).is_yes
    for no in (
        types.ElicitResult(action="accept", content={"confirm": False}),
        types.ElicitResult(action="accept", content={"confirm": "true"}),
        types.ElicitResult(action="accept", content={"confirm": 1}),
        types.ElicitResult(action="accept", content={}),
        types.ElicitResult(action="accept"),
        types.ElicitResult(action="decline", content={"confirm": True}),
        types.ElicitResult(action="cancel", content={"confirm": True}),
        types.ListRootsResult(roots=[]),
        None,
    ):
        assert not answer_of(no).is_yes


def test_form_elicitation_is_declared_by_an_empty_object_or_form_but_not_by_url_alone() -> None:
    def caps(elicitation: Any) -> types.ClientCapabilities:
        return types.ClientCapabilities.model_validate({"elicitation": elicitation})

    assert declares_form_elicitation(caps({}))
    assert declares_form_elicitation(caps({"form": {}}))
    assert declares_form_elicitation(caps({"form": {}, "url": {}}))
    assert not declares_form_elicitation(caps({"url": {}}))
    assert not declares_form_elicitation(types.ClientCapabilities())
    assert not declares_form_elicitation(None)


class _Session:
    def __init__(self, capabilities: types.ClientCapabilities | None, can_send: bool = True) -> None:
        self.client_capabilities = capabilities
        self.can_send_request = can_send


def _ctx(
    version: str, capabilities: Any, scope: dict[str, Any] | None = None, *, can_send: bool = True
) -> Any:
    caps = types.ClientCapabilities.model_validate(capabilities) if capabilities is not None else None
    request = SimpleNamespace(scope=scope) if scope is not None else None
    return SimpleNamespace(
        session=_Session(caps, can_send), protocol_version=version, request=request, request_id=1
    )


def test_an_http_request_brings_its_own_principal_and_credential_from_the_asgi_scope() -> None:
    harness = build_harness_on(fake(), Credential("server-token"), principal="stdio-principal")
    app = McpApplication(
        "n",
        "v",
        None,
        WOODPECKER_TOOLS,
        harness.guarded,
        credential=Credential("server-token"),
        principal="stdio-principal",
    )
    params = types.CallToolRequestParams(name="delete_repository", arguments={"repo_id": 5})
    mine = Credential("client-token")
    scope = {"woodpecker_mcp.principal": "p-123", "woodpecker_mcp.credential": mine}
    ctx: ServerRequestContext[Any, Any] = _ctx("2025-11-25", {}, scope)
    call = call_context(ctx, params, app)
    assert (call.principal, call.credential) == ("p-123", mine)
    shared = _ctx("2025-11-25", {}, {"woodpecker_mcp.principal": "p-456"})
    call = call_context(shared, params, app)
    assert (call.principal, call.credential) == ("p-456", Credential("server-token"))
    stdio = _ctx("2025-11-25", {})
    call = call_context(stdio, params, app)
    assert (call.principal, call.credential) == ("stdio-principal", Credential("server-token"))


def test_the_channel_follows_the_revision_and_the_declared_capability() -> None:
    harness = build_harness_on(fake(), Credential("t"))
    on = McpApplication("n", "v", None, WOODPECKER_TOOLS, harness.guarded)
    off = McpApplication("n", "v", None, WOODPECKER_TOOLS, harness.guarded, elicitation_enabled=False)
    params = types.CallToolRequestParams(name="delete_repository", arguments={"repo_id": 5})
    elicit = {"elicitation": {"form": {}}}
    assert call_context(_ctx("2025-11-25", elicit), params, on).channel == "push"
    assert call_context(_ctx("2026-07-28", elicit), params, on).channel == "mrtr"
    for version in ("2025-11-25", "2026-07-28"):
        no_dialog = call_context(_ctx(version, {}), params, on)
        assert (no_dialog.channel, no_dialog.no_dialog) == ("token", "client")
        server_off = call_context(_ctx(version, elicit), params, off)
        assert (server_off.channel, server_off.no_dialog) == ("token", "server")
    # A 2025-11-25 connection with no way back to the client (JSON-response HTTP) is ours to blame.
    no_channel = call_context(_ctx("2025-11-25", elicit, can_send=False), params, on)
    assert (no_channel.channel, no_channel.no_dialog) == ("token", "connection")


async def test_a_token_issued_for_want_of_a_channel_does_not_blame_the_client() -> None:
    harness = build_harness_on(fake(), Credential("t"))
    ctx = CallContext(None, None, "token", no_dialog="connection")
    with anyio.fail_after(10):
        outcome = await harness.guarded.call("pause_queue", {}, ctx)
    assert isinstance(outcome, Complete)
    text = outcome.result.text
    assert "did not declare" not in text and "ELICITATION" not in text
    assert "This server cannot reach the client" in text and "nobody was asked" in text
    assert outcome.result.structured["not_asked_by"] == "server"


async def test_an_asker_whose_client_fails_or_times_out_hears_no_answer_not_a_no() -> None:
    class Broken:
        async def elicit_form(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
            raise RuntimeError("connection lost")

    class Refused:
        async def elicit_form(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
            raise MCPError(types.INTERNAL_ERROR, "no back-channel")

    class SdkTimedOut:
        async def elicit_form(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
            raise MCPError(types.REQUEST_TIMEOUT, "timed out")

    class Silent:
        async def elicit_form(self, *args: Any, **kwargs: Any) -> types.ElicitResult:
            await anyio.sleep_forever()
            raise AssertionError

    def ask(session: object, timeout: float | None = None) -> Any:
        return McpSessionAsker(session, 1, timeout).ask("q")  # type: ignore[arg-type]  # a duck-typed session

    with anyio.fail_after(5):
        assert await ask(Broken()) == no_answer("error")
        assert await ask(Refused()) == no_answer("error")
        assert await ask(SdkTimedOut()) == no_answer("timeout")
        assert await ask(Silent(), 0.01) == no_answer("timeout")
    assert not no_answer("error").is_yes and not Answer("accept", True, no_answer="malformed").is_yes
    assert answer_of(types.ListRootsResult(roots=[])) == no_answer("malformed")
