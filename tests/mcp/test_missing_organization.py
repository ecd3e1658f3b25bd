"""A call on the routes of an organization Woodpecker does not hold is refused before anyone is asked
and before it is sent (ADR 0060), over MCP against the sandbox.

Woodpecker 3.17.0 loads the organization of `/api/orgs/{org_id}/...` with a lookup that answers an
empty organization (id 0) for a missing id, and an admin passes on with it. Every repository and global
secret has org_id 0: the question would name "organization 999" while the call reaches those, and
deleting organization 999 deletes every one of them. The seeded sandbox holds organizations 4 and 5."""

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

MISSING = 999


async def _call(
    sandbox: Sandbox, mode: str, tool: str, args: dict[str, Any]
) -> tuple[list[str], CallToolResult]:
    person = Person("accept")
    sandbox.clear_requests()
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(args))
    return person.questions, result


def _refused_unasked(sandbox: Sandbox, questions: list[str], result: CallToolResult) -> None:
    assert questions == []
    assert result.is_error and result.structured_content is not None
    error = result.structured_content["error"]
    assert error["kind"] == "not_found" and f"Organization {MISSING} does not exist" in error["message"]
    # Only the read of the organization left the process.
    assert [(r.method, r.path) for r in sandbox.requests] == [("GET", f"/api/orgs/{MISSING}")]


ORG = {"scope": "organization", "org_id": MISSING}
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    # What each would reach on the old code, with the person's yes where it asked.
    "delete the organization (every repository and global secret)": (
        "delete_organization",
        {"org_id": MISSING},
    ),
    "delete its secret (the global one of that name)": ("delete_secret", {**ORG, "name": "slack_webhook"}),
    "create a secret (a global one, unasked)": (
        "create_secret",
        {**ORG, "name": "fresh_one", "value": "v", "events": ["push"]},
    ),
    "update its secret (the global one of that name)": (
        "update_secret",
        {**ORG, "name": "slack_webhook", "value": "v"},
    ),
    "list its secrets (every repository's and the global ones)": ("list_secrets", ORG),
    "create a registry login (a global one)": (
        "create_registry",
        {**ORG, "address": "r.example.org", "username": "ci", "password": "pw"},
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CALLS))
async def test_a_call_on_an_organization_woodpecker_does_not_hold_is_refused_unasked_and_unsent(
    sandbox: Sandbox, mode: str, case: str
) -> None:
    tool, args = CALLS[case]
    secrets_before = dict(sandbox.world.secrets)
    registries_before = dict(sandbox.world.registries)
    questions, result = await _call(sandbox, mode, tool, args)
    _refused_unasked(sandbox, questions, result)
    assert sandbox.world.secrets == secrets_before and sandbox.world.registries == registries_before


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_on_an_organization_woodpecker_holds_goes_ahead_after_reading_it(
    sandbox: Sandbox, mode: str
) -> None:
    questions, result = await _call(
        sandbox, mode, "delete_secret", {"scope": "organization", "org_id": 4, "name": "npm_token"}
    )
    assert len(questions) == 1 and not result.is_error, result.content
    assert [(r.method, r.path) for r in sandbox.requests][-1] == ("DELETE", "/api/orgs/4/secrets/npm_token")
    assert ("GET", "/api/orgs/4") in [(r.method, r.path) for r in sandbox.requests]
    assert not any(s.name == "npm_token" and s.org_id == 4 for s in sandbox.world.secrets.values())


@pytest.mark.parametrize("mode", MODES)
async def test_deleting_an_organization_says_its_repositories_and_their_pipelines_go_and_they_do(
    sandbox: Sandbox, mode: str
) -> None:
    # Woodpecker 3.17.0's orgDelete purges every repository record of the organization; the question
    # said "the repositories remain", and the person approved less than was done.
    repos = {r.id for r in sandbox.world.repos.values() if r.org_id == 4}
    assert repos
    questions, result = await _call(sandbox, mode, "delete_organization", {"org_id": 4})
    assert len(questions) == 1 and not result.is_error, result.content
    assert "every one of its repositories that Woodpecker holds" in questions[0]
    assert "pipelines, logs" in questions[0] and "repositories remain" not in questions[0]
    assert not repos & set(sandbox.world.repos)
