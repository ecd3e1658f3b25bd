"""An attacker's review of guard.md §1c's start rule (trigger_pipeline): ways a manual pipeline still
runs held code with no question, over MCP against the sandbox.

The rule reads the branch's pipelines by the name the call gives (`GET /pipelines?branch=`, an exact
SQL match in Woodpecker 3.17's store) and decides from what that list holds. Woodpecker starts the
manual pipeline at whatever commit the forge's BranchHead answers for that name. Two gaps follow:

- a name the forge resolves to another branch: GitHub answers a renamed branch's old name with a
  redirect that go-github's GetBranch(..., maxRedirects=1) follows, so `branch="<old name>"` starts
  the held branch's head while the list by that name is empty;
- a branch with no pipeline at all: under `all_events` a push whose pipeline was never created
  (a `[skip ci]` commit message, or a config whose `when` leaves out push) has nothing on record to
  find, and a manual run of it is never held. A repository that holds every event therefore asks for
  every start (ADR 0043): nothing on record can show the branch's newest commit was approved.
"""

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

INFRA = "1003"  # umbrella/infra's forge id: repository 3, require_approval all_events, push 3 on dev blocked


def _writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(w.method, w.path) for w in sandbox.state_changing_requests()]


async def _trigger(sandbox: Sandbox, mode: str, branch: str) -> Person:
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                await client.call_tool("trigger_pipeline", {"repo_id": 3, "branch": branch})
    return person


async def test_the_sandbox_starts_a_renamed_branchs_old_name_at_the_new_branchs_head(
    sandbox: Sandbox,
) -> None:
    # The state the test below needs is real: with nothing held, the old name (the two-call token
    # approving it) starts dev's head.
    sandbox.world.forge_repos[INFRA].renamed["develop"] = "dev"
    sandbox.world.repos[3].require_approval = "none"
    sandbox.world.pipelines[303].status = "success"
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy") as client:
                first = await client.call_tool("trigger_pipeline", {"repo_id": 3, "branch": "develop"})
                token = (first.structured_content or {}).get("confirm_token")
                old = await client.call_tool(
                    "trigger_pipeline", {"repo_id": 3, "branch": "develop", "confirm_token": token}
                )
                new = await client.call_tool("trigger_pipeline", {"repo_id": 3, "branch": "dev"})
    assert old.structured_content is not None and new.structured_content is not None, old.content
    started = [sandbox.world.pipelines[p.structured_content["pipeline"]["id"]] for p in (old, new)]
    assert started[0].branch == "develop" and started[1].branch == "dev"
    assert started[0].commit == started[1].commit


@pytest.mark.parametrize("mode", MODES)
async def test_a_trigger_by_a_renamed_branchs_old_name_asks_like_the_held_branch(
    sandbox: Sandbox, mode: str
) -> None:
    sandbox.world.forge_repos[INFRA].renamed["develop"] = "dev"
    person = await _trigger(sandbox, mode, "develop")
    assert len(person.questions) == 1
    assert "does not list a branch by exactly this name" in person.questions[0]
    assert _writes(sandbox) == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_trigger_of_a_branch_with_no_pipeline_under_all_events_asks(
    sandbox: Sandbox, mode: str
) -> None:
    sandbox.world.forge_repos[INFRA].branches.append("feature")
    assert not [p for p in sandbox.world.pipelines.values() if p.repo_id == 3 and p.branch == "feature"]
    person = await _trigger(sandbox, mode, "feature")
    assert len(person.questions) == 1
    assert _writes(sandbox) == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_cron_created_or_moved_to_a_renamed_branchs_old_name_asks(
    sandbox: Sandbox, mode: str
) -> None:
    # Woodpecker checks a cron's branch with BranchHead and its scheduler starts BranchHead's answer.
    sandbox.world.forge_repos[INFRA].renamed["develop"] = "dev"
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                for tool, args in (
                    (
                        "create_cron",
                        {"repo_id": 3, "name": "n", "schedule": "0 2 * * *", "branch": "develop"},
                    ),
                    ("update_cron", {"repo_id": 3, "cron_id": 5, "branch": "develop"}),
                ):
                    result = await client.call_tool(tool, args)
                    assert "nothing was done" in str(getattr(result.content[0], "text", "")), result.content
    assert len(person.questions) == 2
    assert all("does not list a branch by exactly this name" in q for q in person.questions)
    assert _writes(sandbox) == []
