"""The audit is a precondition for guarded writes (guard.md §8, ADR 0081): with WOODPECKER_MCP_AUDIT_FILE
set, a guarded call whose `asked` or `approved` line (or its token's or view's issue) cannot be written
does not run: it answers that nothing was done and why, naming the file by its setting and never its
path, and says so on stderr; reads go on. The product's own JSON Lines sink on a real file that cannot
take a line (a directory in its place, a full disk, its folder gone), the real server driven by the
SDK's client against the sandbox (docs/adr/0025).
"""

import json
import shutil
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext

from adapters.audit_jsonl import JsonLinesAuditSink
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, elicit_result, harness_for, server_command, server_environment

pytestmark = pytest.mark.anyio

DELETE_SECRET = {"scope": "repository", "repo_id": 1, "name": "deploy_token"}
HOW = ("a directory in its place", "a full disk", "its folder gone")


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def unwritable(tmp_path: Path, how: str) -> str:
    if how == "a directory in its place":
        (tmp_path / "audit.jsonl").mkdir()
        return str(tmp_path / "audit.jsonl")
    if how == "a full disk":
        return "/dev/full"  # opens for appending; every write fails with ENOSPC
    return str(tmp_path / "gone" / "audit.jsonl")


def assert_refused(result: types.CallToolResult, path: str, stderr: str | None = None) -> None:
    structured = result.structured_content
    assert structured is not None and result.is_error, structured
    assert structured["done"] is False and structured["outcome"] == "audit_unwritable", structured
    text = text_of(result)
    assert text.startswith(
        "Nothing was done: the audit file (WOODPECKER_MCP_AUDIT_FILE) could not be written ("
    )
    assert path not in json.dumps(structured) + text  # the setting names the file; its path stays out
    if stderr is not None:
        assert "the audit file (WOODPECKER_MCP_AUDIT_FILE) could not be written" in stderr, stderr
        assert "guarded call was refused" in stderr and path not in stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", HOW)
async def test_a_guarded_call_whose_audit_cannot_be_written_asks_nobody_and_sends_nothing(
    sandbox: Sandbox, tmp_path: Path, how: str, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = unwritable(tmp_path, how)
    person = Person()
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token, audit=JsonLinesAuditSink(path)) as harness:
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                refused = await client.call_tool("delete_secret", dict(DELETE_SECRET))
                read = await client.call_tool("get_repository", {"repo_id": 1})
    assert_refused(refused, path, capsys.readouterr().err)
    assert person.questions == []
    # Reads go on; the refused call sent only the read of its target made before any question, no write.
    assert not read.is_error
    assert [(r.method, r.path) for r in sandbox.requests] == [
        ("GET", "/api/repos/1/secrets/deploy_token"),
        ("GET", "/api/repos/1"),
    ]


@pytest.mark.parametrize("how", HOW)
async def test_without_a_dialog_no_token_is_given_and_a_token_runs_nothing_without_its_line(
    sandbox: Sandbox, tmp_path: Path, how: str
) -> None:
    writable = tmp_path / "writable.jsonl"
    path = unwritable(tmp_path, how)
    with anyio.fail_after(30):
        # No token is issued while the file cannot take the line...
        async with harness_for(
            sandbox, sandbox.admin_token, elicitation=False, audit=JsonLinesAuditSink(path)
        ) as harness:
            async with Client(harness.server, mode="legacy") as client:
                first = await client.call_tool("delete_secret", dict(DELETE_SECRET))
        assert_refused(first, path)
        # ...and one issued while it could is redeemed into nothing once it cannot.
        sink = JsonLinesAuditSink(str(writable))
        async with harness_for(sandbox, sandbox.admin_token, elicitation=False, audit=sink) as harness:
            async with Client(harness.server, mode="legacy") as client:
                issued = await client.call_tool("delete_secret", dict(DELETE_SECRET))
                assert issued.structured_content is not None
                token = issued.structured_content["confirm_token"]
                writable.unlink()  # the file is replaced by a directory between the two calls
                writable.mkdir()
                second = await client.call_tool("delete_secret", {**DELETE_SECRET, "confirm_token": token})
    assert_refused(second, str(writable))
    assert sandbox.state_changing_requests() == []


async def test_an_approval_whose_line_cannot_be_written_runs_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # The question's line was written; while the person reads, the file is replaced by a directory.
    audit = tmp_path / "audit.jsonl"

    async def replaces_the_file_then_says_yes(
        ctx: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        audit.unlink()
        audit.mkdir()
        return elicit_result("accept")

    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token, audit=JsonLinesAuditSink(str(audit))) as harness:
            async with Client(
                harness.server, mode="legacy", elicitation_callback=replaces_the_file_then_says_yes
            ) as client:
                result = await client.call_tool("delete_secret", dict(DELETE_SECRET))
    assert_refused(result, str(audit))
    assert sandbox.state_changing_requests() == []


@pytest.mark.slow
async def test_a_stdio_server_whose_audit_file_became_a_directory_refuses_guarded_calls(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_AUDIT_FILE=str(audit))
    params = StdioServerParameters(command=command, args=args, env=env)
    person = Person()
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", elicitation_callback=person) as client:
            await client.list_tools()
            # Started with a writable file (settings check it); then it is replaced by a directory.
            audit.unlink()
            audit.mkdir()
            refused = await client.call_tool("delete_secret", dict(DELETE_SECRET))
            shutil.rmtree(audit)  # writable again: guarded calls go ahead again
            done = await client.call_tool("delete_secret", dict(DELETE_SECRET))
    assert_refused(refused, str(audit))
    assert not done.is_error, text_of(done)
    assert len(person.questions) == 1
    assert [json.loads(line)["outcome"] for line in audit.read_text().splitlines()] == [
        "asked",
        "approved",
        "executed",
    ]
    assert [r.method for r in sandbox.state_changing_requests()] == ["DELETE"]
