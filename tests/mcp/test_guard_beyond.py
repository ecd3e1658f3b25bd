"""guard.md §1b over MCP against the sandbox: the ways around the seed's list are closed, on both revisions."""

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["CI_COMMIT_SHA", "PATH", "LD_PRELOAD"])
async def test_a_trigger_that_overrides_woodpeckers_own_variables_is_refused_and_nothing_is_sent(
    sandbox: Sandbox, mode: str, name: str
) -> None:
    person = Person("accept")
    args = {"repo_id": 1, "branch": "main", "variables": {"DEPLOY_ENV": "staging", name: "f" * 40}}
    sandbox.clear_requests()
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("trigger_pipeline", args)
    assert result.is_error
    text = str(getattr(result.content[0], "text", ""))
    assert "variables" in text and name in text
    assert sandbox.requests == [] and person.questions == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_trigger_with_ordinary_variables_runs(sandbox: Sandbox, mode: str) -> None:
    args = {"repo_id": 1, "branch": "main", "variables": {"DEPLOY_ENV": "staging", "PATHS": "a:b"}}
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=Person("decline")) as client:
                result = await client.call_tool("trigger_pipeline", args)
    assert not result.is_error, result.content
    assert [(w.method, w.path) for w in sandbox.state_changing_requests()] == [
        ("POST", "/api/repos/1/pipelines")
    ]
