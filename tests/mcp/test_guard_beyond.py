"""guard.md §1b over MCP against the sandbox: the ways around the seed's list are closed, on both revisions."""

import anyio
import pytest
from mcp import Client

from sandbox.seed import ADMIN_LOGIN
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
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("trigger_pipeline", args)
    assert result.is_error
    text = str(getattr(result.content[0], "text", ""))
    assert "variables" in text and name in text
    assert sandbox.requests == [] and person.questions == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_trigger_with_ordinary_variables_runs_once_a_person_says_yes(
    sandbox: Sandbox, mode: str
) -> None:
    # guard.md §1c: any variable may change what a step runs (no list of names is complete), so it asks.
    args = {"repo_id": 3, "branch": "main", "variables": {"DEPLOY_ENV": "staging", "PATHS": "a:b"}}
    person = Person("accept")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("trigger_pipeline", args)
    assert not result.is_error, result.content
    assert len(person.questions) == 1
    sent = sandbox.state_changing_requests()
    assert [(w.method, w.path) for w in sent] == [("POST", "/api/repos/3/pipelines")]
    assert sent[0].body["variables"] == args["variables"]


def _writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(w.method, w.path) for w in sandbox.state_changing_requests()]


async def _ask_then_call(
    sandbox: Sandbox, mode: str, reply: str, tool: str, args: dict, before: str | None = None
) -> tuple:
    """Call `tool` with a person who answers `reply`; optionally run `before` (decline or cancel of the
    blocked fork pull request 11) unasked first. Returns the questions, the result and the writes of `tool`."""
    person = Person(reply)  # type: ignore[arg-type]
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                if before is not None:
                    done = await client.call_tool(before, {"repo_id": 1, "number": 11})
                    assert not done.is_error, done.content
                    assert person.questions == []
                    sandbox.clear_requests()
                result = await client.call_tool(tool, args)
    return person.questions, result, _writes(sandbox)


AROUND_APPROVAL = {
    "decline then restart": ("decline_pipeline", {"repo_id": 1, "number": 11}),
    "cancel while blocked then restart": ("cancel_pipeline", {"repo_id": 1, "number": 11}),
    "restart as a deployment": (
        None,
        {"repo_id": 1, "number": 1, "event": "deployment", "deploy_to": "production"},
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("case", sorted(AROUND_APPROVAL))
async def test_a_restart_that_goes_around_an_approval_asks_first(
    sandbox: Sandbox, mode: str, reply: str, case: str
) -> None:
    before, args = AROUND_APPROVAL[case]
    questions, result, writes = await _ask_then_call(sandbox, mode, reply, "restart_pipeline", args, before)
    assert len(questions) == 1, questions
    assert f"pipeline {args['number']} of repository 1" in questions[0]
    if reply == "decline":
        assert writes == [] and "nothing was done" in str(getattr(result.content[0], "text", ""))
    else:
        assert not result.is_error, result.content
        assert writes == [("POST", f"/api/repos/1/pipelines/{args['number']}")]


@pytest.mark.parametrize("mode", MODES)
async def test_an_ordinary_restart_of_a_finished_push_pipeline_is_not_asked(
    sandbox: Sandbox, mode: str
) -> None:
    questions, result, writes = await _ask_then_call(
        sandbox, mode, "decline", "restart_pipeline", {"repo_id": 1, "number": 1}
    )
    assert questions == [] and not result.is_error, result.content
    assert writes == [("POST", "/api/repos/1/pipelines/1")]


WIDER = {
    "visibility internal": (4, {"visibility": "internal"}, {}),
    "deployments on": (4, {"allow_deploy": True}, {}),
    "pull requests on with require_approval none": (
        4,
        {"allow_pr": True},
        {"allow_pr": False, "require_approval": "none"},
    ),
}
NARROWER = {
    "visibility private": (2, {"visibility": "private"}, {}),
    "deployments off": (1, {"allow_deploy": False}, {}),
    "pull requests off": (4, {"allow_pr": False}, {"require_approval": "none"}),
}


async def _update_repository(
    sandbox: Sandbox, mode: str, reply: str, repo_id: int, args: dict, stored: dict
) -> tuple:
    for key, value in stored.items():
        setattr(sandbox.world.repos[repo_id], key, value)
    return await _ask_then_call(sandbox, mode, reply, "update_repository", {"repo_id": repo_id, **args})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("case", sorted(WIDER))
async def test_the_new_widening_directions_of_update_repository_ask(
    sandbox: Sandbox, mode: str, reply: str, case: str
) -> None:
    repo_id, args, stored = WIDER[case]
    questions, result, writes = await _update_repository(sandbox, mode, reply, repo_id, args, stored)
    assert len(questions) == 1
    assert writes == ([] if reply == "decline" else [("PATCH", f"/api/repos/{repo_id}")]), result.content
    if reply == "accept":
        ((name, value),) = args.items()
        assert getattr(sandbox.world.repos[repo_id], name) == value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(NARROWER))
async def test_the_reverse_directions_apply_unasked(sandbox: Sandbox, mode: str, case: str) -> None:
    repo_id, args, stored = NARROWER[case]
    questions, result, writes = await _update_repository(sandbox, mode, "decline", repo_id, args, stored)
    assert questions == [] and not result.is_error, result.content
    assert writes == [("PATCH", f"/api/repos/{repo_id}")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("forge_remote_id", "asks"), [("1007", False), ("1005", True)])
async def test_activating_asks_only_for_a_repository_woodpecker_already_holds(
    sandbox: Sandbox, mode: str, forge_remote_id: str, asks: bool
) -> None:
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("activate_repository", {"forge_remote_id": forge_remote_id})
    assert len(person.questions) == asks
    assert _writes(sandbox) == ([] if asks else [("POST", "/api/repos")]), result.content


@pytest.mark.parametrize("mode", MODES)
async def test_activating_asks_for_a_record_woodpecker_holds_but_does_not_list_for_the_caller(
    sandbox: Sandbox, mode: str
) -> None:
    # GET /user/repos?all=true merges Woodpecker's records only where the caller has a permission row,
    # and every sign-in prunes the rows of inactive repositories (server/api/login.go,
    # updateRepoPermissions): the forge's entry comes without an id, yet POST /repos finds the record by
    # forge_remote_id and brings back its trust flags, approval mode and secrets.
    world = sandbox.world
    world.forge_repos["1005"].admins = (ADMIN_LOGIN,)
    del world.perms[(1, 5)]
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("activate_repository", {"forge_remote_id": "1005"})
    assert len(person.questions) == 1, result.content
    assert "already holds a record" in person.questions[0]
    assert _writes(sandbox) == [] and not world.repos[5].active


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["create_user", "create_agent", "create_forge"])
async def test_each_new_always_guarded_tool_asks_and_a_no_writes_nothing(
    sandbox: Sandbox, mode: str, tool: str
) -> None:
    args = {
        "create_user": {"login": "carol"},
        "create_agent": {"name": "runner-9", "org_id": 4},
        "create_forge": {
            "type": "gitea",
            "url": "https://gitea.example.org",
            "client": "app",
            "oauth_client_secret": "s",
        },
    }[tool]
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, args)
    assert len(person.questions) == 1 and _writes(sandbox) == []
    assert "nothing was done" in str(getattr(result.content[0], "text", ""))


async def test_an_admin_grant_never_reaches_an_existing_account(sandbox: Sandbox) -> None:
    # Woodpecker answers 500 for a login that exists: that account must not be promoted.
    bob = next(u for u in sandbox.world.users.values() if u.login == "bob")
    assert not bob.admin
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy", elicitation_callback=Person("accept")) as client:
                result = await client.call_tool("create_user", {"login": "bob", "admin": True})
    assert result.is_error
    assert _writes(sandbox) == [("POST", "/api/users")]
    assert not next(u for u in sandbox.world.users.values() if u.login == "bob").admin


async def test_an_admin_grant_goes_to_the_account_the_create_returned(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy", elicitation_callback=Person("accept")) as client:
                result = await client.call_tool("create_user", {"login": "carol", "admin": True})
    assert not result.is_error, result.content
    assert _writes(sandbox) == [("POST", "/api/users"), ("PATCH", "/api/users/carol")]
    assert next(u for u in sandbox.world.users.values() if u.login == "carol").admin
