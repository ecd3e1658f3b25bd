"""An attacker's review of guard.md §2-§3 over MCP: what the person is shown names where the request goes."""

import json

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for
from tests.mcp.guarded_calls import WIDENING

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


@pytest.mark.parametrize("status", [500, 503])
@pytest.mark.parametrize("tool", sorted(WIDENING))
async def test_a_write_that_fails_after_approval_is_sent_once_and_nothing_follows_it(
    sandbox: Sandbox, tool: str, status: int
) -> None:
    # guard.md §7 and behaviour.md: writes never retry, and a failed step ends the plan. The error,
    # the result and the audit trail carry no token, even when the server echoes the request back.
    args = WIDENING[tool]
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy", elicitation_callback=Person("accept")) as client:
                done = await client.call_tool(tool, args)
    assert not done.is_error, done.content
    writes = [(w.method, w.path) for w in sandbox.state_changing_requests()]
    assert writes, tool
    echo = f"echo: Authorization: Bearer {sandbox.admin_token}"
    for failing, (method, path) in enumerate(writes):
        sandbox.reset()
        sandbox.inject_fault(method, path, status, echo)
        person = Person("accept")
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            with anyio.fail_after(30):
                async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                    result = await client.call_tool(tool, args)
            audit = json.dumps(harness.audit.events)
        sent = [(w.method, w.path) for w in sandbox.state_changing_requests()]
        assert result.is_error, (tool, failing, result.content)
        assert sent == writes[: failing + 1], (tool, failing, sent)
        assert len(person.questions) == 1
        shown = json.dumps([c.model_dump() for c in result.content]) + json.dumps(result.structured_content)
        assert sandbox.admin_token not in shown and sandbox.admin_token not in audit
        # A 5xx to a write cannot say whether it was carried out: unknown, never failed (guard.md §7).
        assert '"outcome": "unknown"' in audit and '"outcome": "failed"' not in audit


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answered", ["another login", "another forge"])
async def test_an_admin_grant_goes_only_to_the_account_the_person_approved(
    sandbox: Sandbox, mode: str, answered: str
) -> None:
    # Woodpecker's PATCH /users/{login} finds its row by the body's forge_id + forge_remote_id, which
    # come from the record read first. A read that answers another account (a cache keyed without
    # the query, a server that ignores forge_id) must not move the approved grant onto that account.
    eve = sandbox.world.users[3]
    bob = sandbox.world.users[2]
    record = eve.api() if answered == "another login" else {**bob.api(), "forge_id": 2}
    sandbox.inject_fault("GET", "/api/users/bob", 200, json.dumps(record))
    person = Person("accept")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("update_user", {"login": "bob", "forge_id": 1, "admin": True})
    assert len(person.questions) == 1 and "Login: bob" in person.questions[0]
    assert result.is_error, result.content
    assert sandbox.state_changing_requests() == []
    assert not eve.admin and not bob.admin


@pytest.mark.parametrize("mode", MODES)
async def test_a_forge_update_sends_no_field_the_person_did_not_see_from_another_forges_record(
    sandbox: Sandbox, mode: str
) -> None:
    # PATCH /forges/{id} overwrites the whole record, so the tool merges the change over the record
    # it reads first. A read that answered another forge would carry that forge's url into this one.
    forge = sandbox.world.forges[1]
    url = forge.url
    other = {**forge.api(), "id": 2, "url": "https://evil.example.org"}
    sandbox.inject_fault("GET", "/api/forges/1", 200, json.dumps(other))
    person = Person("accept")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("update_forge", {"forge_id": 1, "skip_verify": True})
    assert len(person.questions) == 1 and "evil" not in person.questions[0]
    assert result.is_error, result.content
    assert sandbox.state_changing_requests() == []
    assert sandbox.world.forges[1].url == url


_ANOTHER_OBJECT = {
    # tool: (arguments that widen reach, the read to answer wrongly, what it answers instead)
    "update_secret": (
        {"scope": "repository", "repo_id": 1, "name": "deploy_token", "events": ["push", "pull_request"]},
        "/api/repos/1/secrets/deploy_token",
        {"id": 9, "repo_id": 1, "name": "pr_secret", "events": ["pull_request"], "images": []},
    ),
    "update_repository": (
        {"repo_id": 2, "require_approval": "none"},
        "/api/repos/2",
        {"id": 1, "require_approval": "none", "visibility": "public", "allow_pr": True},
    ),
    "restart_pipeline": (
        {"repo_id": 1, "number": 7},
        "/api/repos/1/pipelines/7",
        {"id": 99, "number": 1, "status": "success", "event": "push", "author": "ada", "reviewed_by": ""},
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", sorted(_ANOTHER_OBJECT))
async def test_a_read_that_answers_another_object_never_lets_a_widening_through_unasked(
    sandbox: Sandbox, mode: str, tool: str
) -> None:
    # A conditional tool compares the call with the stored object. If the read answers another one
    # (a cache, a server bug), the comparison is with the wrong object: treat it as unread, and ask.
    args, path, other = _ANOTHER_OBJECT[tool]
    sandbox.inject_fault("GET", path, 200, json.dumps(other))
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                await client.call_tool(tool, args)
    assert len(person.questions) == 1, tool
    assert sandbox.state_changing_requests() == []
