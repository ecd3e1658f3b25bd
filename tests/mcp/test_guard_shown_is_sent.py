"""An attacker's review of guard.md §2-§3 over MCP: what the person is shown names where the request goes."""

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

# Reads as github.com for its first 80 characters; its host is another one altogether.
_LOOKALIKE_HOST = "github.com." + "a" * 70 + ".attacker.example"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("field", ["url", "oauth_host"])
async def test_a_forge_url_longer_than_a_line_still_shows_its_whole_host(
    sandbox: Sandbox, mode: str, field: str
) -> None:
    url = f"https://{_LOOKALIKE_HOST}/login/oauth/authorize"
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("update_forge", {"forge_id": 1, field: url})
    assert "nothing was done" in str(getattr(result.content[0], "text", ""))
    [question] = person.questions
    assert f"New {field}: https://{_LOOKALIKE_HOST}" in question.split("\n")[1], question
    assert sandbox.state_changing_requests() == []
