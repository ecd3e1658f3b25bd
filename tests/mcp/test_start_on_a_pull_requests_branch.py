"""A start on the branch a held pull request comes from asks (found on a real Woodpecker 3.17 by the real
suite's fork work): Woodpecker files a pull request's pipeline under the branch it goes into, so the
branch's own lists show nothing, yet a manual pipeline there runs the held code with the secrets. Through
the SDK's client against the sandbox, whose repository 2 holds pull request 5 from v2 into main.
"""

import anyio
import pytest
from mcp import Client

from domain.woodpecker import rules as r
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, harness_for

pytestmark = pytest.mark.anyio


async def test_a_start_on_the_branch_of_a_held_pull_request_asks_and_a_no_starts_nothing(
    sandbox: Sandbox,
) -> None:
    person = Person("decline")
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool("trigger_pipeline", {"repo_id": 2, "branch": "v2"})
    assert len(person.questions) == 1, result
    assert "The branch has a pipeline that is waiting for approval" in person.questions[0], person.questions[
        0
    ]
    assert (result.structured_content or {}).get("outcome") == "declined"
    assert sandbox.state_changing_requests() == []
    # It read the repository's pull requests into any branch, and named why in the audit's reasons.
    reads = [
        (q.path, dict(q.query))
        for q in sandbox.requests
        if q.method == "GET" and q.path.endswith("/pipelines")
    ]
    assert any("branch" not in query and query.get("status") == "blocked" for _, query in reads), reads
    assert harness.audit.outcomes()[:2] == ["asked", "declined"]


async def test_the_rule_names_the_held_pull_request_as_the_branch_held(sandbox: Sandbox) -> None:
    # The same decision, read from the audit's record of the question's reasons where it keeps them.
    from domain.guard.policy import decide
    from domain.woodpecker.catalogue import WOODPECKER_TOOLS
    from domain.woodpecker.rules import WOODPECKER_RULES

    held = [{"branch": "main", "event": "pull_request", "status": "blocked", "refspec": "v2:main"}]
    current = {
        "repo": {"id": 2, "require_approval": "pull_requests"},
        "blocked": [],
        "declined": [],
        "unreviewed": [],
        "pr_blocked": held,
        "pr_declined": [],
        "pr_unreviewed": [],
        "branches_1": ["main", "v2"],
    }
    tool = WOODPECKER_TOOLS.get("trigger_pipeline")
    assert decide(tool, {"repo_id": 2, "branch": "v2"}, current, WOODPECKER_RULES).reasons == {r.BRANCH_HELD}
