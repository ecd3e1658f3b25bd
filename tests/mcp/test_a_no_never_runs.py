"""A person's no runs nothing, even when the object changed meanwhile so that the call no longer asks.

Review finding: the view's Decline (ADR 0049) and a 2026-07-28 retry carrying a no (ADR 0048)
reached the guard's "harmless direction runs at once" branch when someone else had loosened the
object while the person read, so the call they refused was sent to Woodpecker (with every other
field it carried) and the view said "Approved: the call ran once". Real SDK clients against the
real server and the sandbox, whose request log says what was sent.
"""

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, Reply, elicit_result, harness_for
from tests.mcp import test_guard_recheck as recheck
from tests.mcp.test_guard_app_view import APP_TOOL, answer, apps, view_of

pytestmark = pytest.mark.anyio

# Lowers require_approval (asked while it is all_events) and changes a field nobody is asked about.
LOWER_AND_MORE = {"repo_id": 1, "require_approval": "forks", "timeout": 7}


def lowered_by_someone_else(sandbox: Sandbox) -> None:
    # Another admin lowers it while the person reads: the same call now widens nothing.
    with sandbox.state.lock:
        sandbox.world.repos[1].require_approval = "forks"


async def test_a_decline_in_the_view_runs_nothing_when_the_call_stopped_asking_meanwhile(
    sandbox: Sandbox,
) -> None:
    recheck.prepare(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                shown = view_of(await client.call_tool("update_repository", dict(LOWER_AND_MORE)))
                lowered_by_someone_else(sandbox)
                declined = await client.call_tool(APP_TOOL, answer(shown, dict(LOWER_AND_MORE), False))
    assert sandbox.state_changing_requests() == []
    assert declined.structured_content is not None
    assert declined.structured_content["outcome"] == "declined"
    assert harness.audit.outcomes()[-1] == "declined"


@pytest.mark.parametrize("reply", ["decline", "cancel", "false"])
async def test_a_sealed_no_runs_nothing_when_the_call_stopped_asking_meanwhile(
    sandbox: Sandbox, reply: Reply
) -> None:
    recheck.prepare(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                first = await client.session.call_tool(
                    "update_repository", dict(LOWER_AND_MORE), allow_input_required=True
                )
                assert isinstance(first, types.InputRequiredResult)
                lowered_by_someone_else(sandbox)
                retried: Any = await client.session.call_tool(
                    "update_repository",
                    dict(LOWER_AND_MORE),
                    allow_input_required=True,
                    input_responses={"confirm": elicit_result(reply)},
                    request_state=first.request_state,
                )
    assert sandbox.state_changing_requests() == []
    assert isinstance(retried, types.CallToolResult) and retried.structured_content is not None
    expected = "cancelled" if reply == "cancel" else "declined"
    assert retried.structured_content["outcome"] == expected
    assert harness.audit.outcomes()[-1] == expected
