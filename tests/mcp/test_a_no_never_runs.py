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

from domain.guard.outcomes import APPROVAL_META_KEY
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, Reply, elicit_result, harness_for
from tests.mcp import test_guard_recheck as recheck
from tests.mcp.test_guard_app_view import APP_TOOL, APPROVE, PLANNED, answer, apps, view_of

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


async def test_a_declined_views_ticket_is_used_up_and_never_approves_afterwards(sandbox: Sandbox) -> None:
    # No fresh view is asked for in between, so nothing but the Decline can have used the ticket up.
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                shown = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                await client.call_tool(APP_TOOL, answer(shown, dict(APPROVE), False))
                after = await client.call_tool(APP_TOOL, answer(shown, dict(APPROVE), True))
    assert sandbox.state_changing_requests() == []
    # The used ticket asks nothing again (ADR 0066): it says it was declined.
    assert APPROVAL_META_KEY not in (after.meta or {})
    assert after.structured_content is not None
    assert (after.structured_content["outcome"], after.structured_content["state"]) == (
        "view_closed",
        "declined",
    )
    assert harness.audit.outcomes() == ["ticket_issued", "declined", "ticket_rejected"]


async def test_two_approvals_racing_with_one_ticket_run_the_call_once(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                shown = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                results: list[types.CallToolResult] = []

                async def approve() -> None:
                    results.append(await client.call_tool(APP_TOOL, answer(shown, dict(APPROVE), True)))

                async with anyio.create_task_group() as tg:
                    for _ in range(4):
                        tg.start_soon(approve)
    assert [(r.method, r.path) for r in sandbox.state_changing_requests()] == PLANNED
    assert sorted(harness.audit.outcomes()).count("executed") == 1
    assert not any(APPROVAL_META_KEY in (r.meta or {}) for r in results)  # no new question from a used ticket
    closed = [
        r.structured_content for r in results if (r.structured_content or {}).get("outcome") == "view_closed"
    ]
    assert len(closed) == 3


async def test_a_decline_from_a_view_already_approved_does_not_say_the_tool_was_not_run(
    sandbox: Sandbox,
) -> None:
    # The same view shown twice (a conversation open on two devices, a re-render): Approve in one,
    # then Decline in the other. The call ran once; the Decline must not report that it never ran.
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(20):
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                shown = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                approved = await client.call_tool(APP_TOOL, answer(shown, dict(APPROVE), True))
                late_no = await client.call_tool(APP_TOOL, answer(shown, dict(APPROVE), False))
    assert not approved.is_error
    assert [(r.method, r.path) for r in sandbox.state_changing_requests()] == PLANNED
    words = str(getattr(late_no.content[0], "text", ""))
    assert "was not run" not in words and "did not approve" not in words
    assert words.startswith(
        "This answer did nothing: its question was closed already (it was approved, and the call ran once)"
    )
    assert late_no.structured_content is not None and late_no.structured_content["done"] is False
    assert late_no.structured_content["state"] == "ran"
    assert harness.audit.outcomes() == ["ticket_issued", "approved", "executed", "ticket_rejected"]
