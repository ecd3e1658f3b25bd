"""How a question ends, as the model and the operator read it (ADR 0048): a person's no, a dismissal,
no answer at all (an error, a time-out, something that is no answer) and a question the client gave up
on are four different things in `structuredContent.outcome` and in the audit trail, every `asked` line
is closed, and nothing runs without a yes. The real server from the container, driven by the SDK's own
client against the sandbox (docs/adr/0025); a dialog that answers an error is what a gateway without a
back-channel sends (the FastMCP proxy's 2025-11-25 front, issue 27).
"""

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError

from adapters.mcp_http import build_http_app
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fixtures.mcp import (
    MODES,
    Harness,
    Person,
    build_harness_on,
    gateway_to,
    harness_for,
    server_command,
    server_environment,
    serving,
)
from tests.mcp.test_guard_app_view import apps

pytestmark = pytest.mark.anyio

APPROVE = {"repo_id": 1, "number": 11}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def answers_an_error(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ErrorData:
    # What a gateway with no back-channel (or a client that cannot draw the dialog) answers.
    return types.ErrorData(code=types.INTERNAL_ERROR, message="no back-channel")


async def fails(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    raise RuntimeError("the dialog could not be drawn")


class NeverAnswers:
    """A person who never answers (or a gateway that never passes the question on)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()

    async def __call__(
        self, ctx: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.set()
        await anyio.sleep_forever()
        raise AssertionError


def assert_no_answer(result: types.CallToolResult, cause: str) -> None:
    structured = result.structured_content
    assert structured is not None and not result.is_error
    assert structured["done"] is False
    assert structured["outcome"] == "no_answer" and structured["cause"] == cause, structured
    text = text_of(result)
    assert text.startswith("No answer came back: ") and "Nobody approved or declined it" in text
    assert "Declined" not in text and "did not approve" not in text


@pytest.mark.parametrize("over", ["memory", "http"])
@pytest.mark.parametrize("callback", [answers_an_error, fails], ids=["error", "raises"])
async def test_a_dialog_answered_with_an_error_is_no_answer_in_the_result_and_the_audit(
    sandbox: Sandbox, callback: Any, over: str
) -> None:
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with AsyncExitStack() as stack:
                target: Any = harness.server
                if over == "http":
                    # The 2025-11-25 Streamable HTTP front a gateway talks to, with its event stream.
                    target = f"{await stack.enter_async_context(serving(build_http_app(harness.server)))}/mcp"
                client = await stack.enter_async_context(
                    Client(target, mode="legacy", elicitation_callback=callback)
                )
                result = await client.call_tool("approve_pipeline", dict(APPROVE))
    assert_no_answer(result, "error")
    assert "answered the question with an error" in text_of(result)
    assert harness.audit.outcomes() == ["asked", "no_answer"]
    assert sandbox.state_changing_requests() == []


async def test_a_question_nobody_answers_in_time_is_no_answer_and_its_line_is_closed(
    sandbox: Sandbox,
) -> None:
    person = NeverAnswers()
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token, ask_timeout_seconds=0.5) as harness:
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool("approve_pipeline", dict(APPROVE))
    assert person.asked.is_set()
    assert_no_answer(result, "timeout")
    assert "timed out before anyone answered it" in text_of(result)
    assert harness.audit.outcomes() == ["asked", "no_answer"]
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize("how", ["client time-out", "connection closed"])
async def test_a_question_the_client_gives_up_on_leaves_a_closing_audit_line(
    sandbox: Sandbox, how: str
) -> None:
    # The client's own time-out cancels the request (notifications/cancelled), or the client goes
    # away: the call ends with no result while the question is open. The audit must not end at
    # `asked`, and nothing runs.
    person = NeverAnswers()
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            if how == "client time-out":
                async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                    with pytest.raises(MCPError):
                        await client.call_tool("approve_pipeline", dict(APPROVE), read_timeout_seconds=0.5)
                    # The cancellation reaches the server on its own time: wait for its line.
                    while len(harness.audit.events) < 2:
                        await anyio.sleep(0.02)
            else:
                async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(client.call_tool, "approve_pipeline", dict(APPROVE))
                        await person.asked.wait()
                        tasks.cancel_scope.cancel()
                while len(harness.audit.events) < 2:
                    await anyio.sleep(0.02)
    assert person.asked.is_set()
    assert harness.audit.outcomes() == ["asked", "abandoned"]
    assert sandbox.state_changing_requests() == []


class WritesHang:
    """The real gateway to the sandbox, where a write is sent and its answer never comes back."""

    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway
        self.writing = anyio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)

    async def send(self, call: Any, credential: Any) -> Any:
        if call.method != "GET":
            self.writing.set()
            await anyio.sleep_forever()
        return await self._gateway.send(call, credential)


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_call_the_client_gives_up_on_during_its_write_is_closed_as_abandoned(
    sandbox: Sandbox, mode: str
) -> None:
    # The token's second call is approved; the client times out while the write is under way.
    # The audit must not end at `approved` as if the call were still running.
    gateway = WritesHang(gateway_to(sandbox, Credential(sandbox.admin_token)))
    harness = build_harness_on(gateway, Credential(sandbox.admin_token))
    try:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode) as client:
                first = await client.call_tool("approve_pipeline", dict(APPROVE))
                assert first.structured_content is not None
                token = first.structured_content["confirm_token"]
                with pytest.raises(MCPError):
                    await client.call_tool(
                        "approve_pipeline", {**APPROVE, "confirm_token": token}, read_timeout_seconds=0.5
                    )
                while len(harness.audit.events) < 3:
                    await anyio.sleep(0.02)
    finally:
        await gateway.aclose()
    assert gateway.writing.is_set()
    assert harness.audit.outcomes() == ["token_issued", "approved", "abandoned"]


async def _sealed_retry(sandbox: Sandbox, responses: dict[str, Any]) -> tuple[Any, Harness]:
    """approve_pipeline on 2026-07-28, then its retry carrying our state and `responses` as the input."""
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                first = await client.session.call_tool(
                    "approve_pipeline", dict(APPROVE), allow_input_required=True
                )
                assert isinstance(first, types.InputRequiredResult)
                retried = await client.session.call_tool(
                    "approve_pipeline",
                    dict(APPROVE),
                    input_responses=responses,
                    request_state=first.request_state,
                    allow_input_required=True,
                )
    return retried, harness


async def test_a_sealed_answer_that_is_no_elicitation_result_is_no_answer_not_a_decline(
    sandbox: Sandbox,
) -> None:
    # 2026-07-28: the retry carries our state, but under `confirm` something that is no answer to
    # the question (a gateway that mixed up its input responses).
    wrong, harness = await _sealed_retry(sandbox, {"confirm": types.ListRootsResult(roots=[])})
    assert isinstance(wrong, types.CallToolResult)
    assert_no_answer(wrong, "malformed")
    assert harness.audit.outcomes() == ["asked", "no_answer"]
    assert sandbox.state_changing_requests() == []


async def test_a_sealed_retry_without_an_answer_closes_its_question_before_asking_again(
    sandbox: Sandbox,
) -> None:
    again, harness = await _sealed_retry(sandbox, {})
    assert isinstance(again, types.InputRequiredResult)
    assert harness.audit.outcomes() == ["asked", "no_answer", "asked"]
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "false", "cancel"])
async def test_the_persons_own_no_is_still_a_decline_or_a_cancel(
    sandbox: Sandbox, mode: str, reply: Any
) -> None:
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode, elicitation_callback=Person(reply)) as client:
                result = await client.call_tool("approve_pipeline", dict(APPROVE))
    expected = "cancelled" if reply == "cancel" else "declined"
    assert result.structured_content is not None and result.structured_content["outcome"] == expected
    assert "cause" not in result.structured_content
    assert text_of(result).endswith("so this tool was not run.")
    assert harness.audit.outcomes() == ["asked", expected]
    # One vocabulary: the result names the way the person was asked as the audit line does.
    assert result.structured_content["path"] == harness.audit.events[-1]["path"]
    assert result.structured_content["path"] == ("dialog" if mode == "legacy" else "sealed")
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_token_and_a_view_name_their_path_as_the_audit_does(sandbox: Sandbox, mode: str) -> None:
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode) as client:
                token = await client.call_tool("approve_pipeline", dict(APPROVE))
            async with Client(harness.server, mode=mode, extensions=apps()) as client:
                view = await client.call_tool("approve_pipeline", dict(APPROVE))
    assert token.structured_content is not None and view.structured_content is not None
    assert [token.structured_content["path"], view.structured_content["path"]] == ["token", "app"]
    assert [e["path"] for e in harness.audit.events] == ["token", "app"]
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_rejected_token_names_the_in_memory_store_as_a_cause_only_when_it_is_one(
    sandbox: Sandbox, mode: str
) -> None:
    wrong = {**APPROVE, "confirm_token": "0" * 32}
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode) as client:
                local = await client.call_tool("approve_pipeline", wrong)
        # A server whose tokens live in Redis (the setting is what the answer follows).
        shared_store = {"WOODPECKER_MCP_TOKEN_STORE": "redis://127.0.0.1:1/0"}
        async with harness_for(sandbox, sandbox.admin_token, environ=shared_store) as harness:
            async with Client(harness.server, mode=mode) as client:
                shared = await client.call_tool("approve_pipeline", wrong)
    for result in (local, shared):
        assert result.is_error and "confirm_token is wrong, expired, used, or for other arguments" in text_of(
            result
        )
        assert "Call this same tool again without confirm_token" in text_of(result)
        assert len(text_of(result)) <= 300, text_of(result)
    assert "calls reach other processes, each with its own tokens in memory" in text_of(local)
    assert "retrying cannot help: set WOODPECKER_MCP_TOKEN_STORE to a Redis URL." in text_of(local)
    assert "process" not in text_of(shared) and "WOODPECKER_MCP_TOKEN_STORE" not in text_of(shared)
    assert sandbox.state_changing_requests() == []


@pytest.mark.slow
async def test_a_token_taken_to_another_process_is_refused_with_the_cause_and_the_fix(
    sandbox: Sandbox,
) -> None:
    # What a gateway that starts a process per request does (supergateway stateless): the second
    # call reaches a new server process, whose memory never saw the token.
    command, args = server_command()
    params = StdioServerParameters(
        command=command, args=args, env=server_environment(sandbox.url, sandbox.admin_token)
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as first_process:
            first = await first_process.call_tool("approve_pipeline", dict(APPROVE))
        assert first.structured_content is not None
        token = first.structured_content["confirm_token"]
        async with Client(params, mode="legacy") as second_process:
            second = await second_process.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
    text = text_of(second)
    assert second.is_error and "calls reach other processes" in text and len(text) <= 300
    assert (
        "retrying cannot help: set WOODPECKER_MCP_TOKEN_STORE to a Redis URL." in text and token not in text
    )
    assert sandbox.state_changing_requests() == []


@pytest.mark.slow
@pytest.mark.parametrize("how", ["error", "client time-out"])
async def test_the_server_process_writes_each_ending_to_its_audit_file(
    sandbox: Sandbox, tmp_path: Path, how: str
) -> None:
    # The real JSON Lines sink in a real server process: the closing line reaches the file even
    # when it is written while the call's task is being cancelled.
    audit = tmp_path / "audit.jsonl"
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_AUDIT_FILE=str(audit))
    params = StdioServerParameters(command=command, args=args, env=env)

    def outcomes() -> list[str]:
        lines = audit.read_text().splitlines() if audit.exists() else []
        return [json.loads(line)["outcome"] for line in lines]

    with anyio.fail_after(60):
        if how == "error":
            async with Client(params, mode="legacy", elicitation_callback=answers_an_error) as client:
                result = await client.call_tool("approve_pipeline", dict(APPROVE))
            assert_no_answer(result, "error")
            expected = ["asked", "no_answer"]
        else:
            person = NeverAnswers()
            async with Client(params, mode="legacy", elicitation_callback=person) as client:
                with pytest.raises(MCPError):
                    await client.call_tool("approve_pipeline", dict(APPROVE), read_timeout_seconds=1.0)
                while len(outcomes()) < 2:
                    await anyio.sleep(0.05)
            expected = ["asked", "abandoned"]
    assert outcomes() == expected
    assert sandbox.state_changing_requests() == []
