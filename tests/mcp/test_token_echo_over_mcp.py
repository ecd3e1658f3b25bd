"""An upstream that echoes the token in a 2xx answer never hands it to the client: the result is an error naming the problem, with nothing of the answer (docs/adr/0047, issue 25 item 6).

Real MCP clients against the sandbox's echoing upstream (`Sandbox.inject_echo`): in process with
the server's own token, and over HTTP in per-client mode, where the token echoed is the caller's
own bearer. Tools that read an object, a list, a step log and a resource, on both revisions.
"""

import base64
import json
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

Into = Literal["answer", "log"]
# (tool, arguments, the request whose answer echoes, where the echo goes)
CASES: list[tuple[str, dict[str, Any], str, Into]] = [
    ("get_repository", {"repo_id": 1}, "/api/repos/1", "answer"),
    ("list_pipelines", {"repo_id": 1}, "/api/repos/1/pipelines", "answer"),
    ("get_pipeline", {"repo_id": 1, "number": 2}, "/api/repos/1/pipelines/2", "answer"),
    ("get_step_logs", {"repo_id": 1, "number": 2, "step_id": 10204}, "/api/repos/1/logs/2/10204", "log"),
    (
        "search_step_logs",
        {"repo_id": 1, "number": 2, "step_id": 10204, "pattern": "Authorization"},
        "/api/repos/1/logs/2/10204",
        "log",
    ),
]


def _everything(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


def assert_refused_without_the_token(result: Any, token: str) -> None:
    seen = _everything(result)
    assert token not in seen
    assert base64.b64encode(f"Authorization: Bearer {token}".encode()).decode()[:40] not in seen
    assert result.is_error, seen[:300]
    assert (result.structured_content or {}).get("error", {}).get("kind") == "token_echoed", seen[:300]
    assert "contained the token" in result.content[0].text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "args", "path", "into"), CASES, ids=[c[0] for c in CASES])
async def test_an_echo_of_the_servers_own_token_reaches_no_result(
    sandbox: Sandbox, mode: str, tool: str, args: dict[str, Any], path: str, into: Into
) -> None:
    token = sandbox.admin_token
    async with harness_for(sandbox, token) as harness:
        async with Client(harness.server, mode=mode) as client:
            with anyio.fail_after(30):
                sandbox.inject_echo("GET", path, into)
                assert_refused_without_the_token(await client.call_tool(tool, args), token)
                assert not sandbox.state.echoes[0].times, f"{tool}: the echo was not reached"
                # The same call once the upstream stops echoing: the answer as it is.
                again = await client.call_tool(tool, args)
                assert not again.is_error, _everything(again)[:300]


@pytest.mark.parametrize("mode", MODES)
async def test_an_error_body_echoing_the_token_encoded_reaches_no_result(sandbox: Sandbox, mode: str) -> None:
    # The error-body scrub replaces the token as sent; this one is base64 (Basic user:token).
    token = sandbox.admin_token
    basic = base64.b64encode(f"ci:{token}".encode()).decode()
    sandbox.inject_fault("GET", "/api/repos/1", 400, f"bad request: Authorization: Basic {basic}")
    async with harness_for(sandbox, token) as harness:
        async with Client(harness.server, mode=mode) as client:
            with anyio.fail_after(30):
                result = await client.call_tool("get_repository", {"repo_id": 1})
    seen = _everything(result)
    assert basic not in seen and token not in seen
    assert result.is_error and "contained the token" in result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_an_echo_in_a_resource_read_is_refused_and_reaches_no_contents(
    sandbox: Sandbox, mode: str
) -> None:
    token = sandbox.admin_token
    async with harness_for(sandbox, token) as harness:
        async with Client(harness.server, mode=mode) as client:
            sandbox.inject_echo("GET", "/api/repos/1/logs/2/10204", "log")
            with anyio.fail_after(30), pytest.raises(MCPError) as refused:
                await client.read_resource("woodpecker://repos/1/pipelines/2/steps/10204/log")
            # Read again once the upstream stops echoing: the contents as they are.
            contents = await client.read_resource("woodpecker://repos/1/pipelines/2/steps/10204/log")
    seen = f"{refused.value} {refused.value.data!r}"
    assert token not in seen and "contained the token" in seen
    assert not sandbox.state.echoes[0].times
    assert contents.contents


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_over_http_an_echo_of_the_callers_own_bearer_reaches_no_result(
    sandbox: Sandbox, mode: str, tmp_path: Path
) -> None:
    env = {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
    }
    token = sandbox.user_token
    with anyio.fail_after(60):
        async with team_server(env) as url:
            async with mcp_client(url, token, mode=mode, elicitation_callback=Person("accept")) as client:
                for tool, args, path, into in CASES:
                    sandbox.reset()
                    sandbox.inject_echo("GET", path, into)
                    assert_refused_without_the_token(await client.call_tool(tool, args), token)
                    assert not sandbox.state.echoes[0].times, f"{tool}: the echo was not reached"


@pytest.mark.parametrize("mode", MODES)
async def test_an_echo_in_the_read_a_guard_compares_against_asks_nothing_and_sends_nothing(
    sandbox: Sandbox, mode: str
) -> None:
    # update_repository reads the stored repository to see whether the change widens it; the
    # question would be worded from that answer, so an echo in it stops the call before asking.
    token = sandbox.admin_token
    person = Person("accept")
    sandbox.inject_echo("GET", "/api/repos/4")
    async with harness_for(sandbox, token) as harness:
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            with anyio.fail_after(30):
                result = await client.call_tool("update_repository", {"repo_id": 4, "visibility": "internal"})
    seen = _everything(result)
    assert token not in seen and result.is_error and "contained the token" in seen, seen[:300]
    assert person.questions == []
    assert sandbox.state_changing_requests() == []
    assert not sandbox.state.echoes[0].times
