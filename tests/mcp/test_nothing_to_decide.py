"""A question only when there is something to decide (issue 37), through the SDK's client on both protocol
revisions against the sandbox: a delete whose target Woodpecker does not hold, and an approval of a
pipeline that is not blocked, are answered without a question and without a write; the approve question
says a fork on its own line; a read that fails asks as before, and says what it could not read.
"""

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

FORK = {"repo_id": 1, "number": 11}  # blocked, from a fork (sandbox/seed_pipelines.py)
NOT_FORK = {"repo_id": 2, "number": 2}  # blocked, from the repository itself
FINISHED = {"repo_id": 1, "number": 1}  # a successful push: nothing waits for approval


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def first_call(sandbox: Sandbox, mode: str, tool: str, args: dict[str, Any]) -> tuple[Any, Person, Any]:
    """One call on `mode`, the person at a dialog saying yes to whatever is asked."""
    person = Person("accept")
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.session.call_tool(tool, args, allow_input_required=True)
    return result, person, harness


def question_of(result: Any, person: Person) -> str:
    """The question a call put: pushed to the dialog (2025-11-25) or returned with its state (2026-07-28)."""
    if person.questions:
        return person.questions[-1]
    assert isinstance(result, types.InputRequiredResult), result
    request = (result.input_requests or {})["confirm"]
    assert isinstance(request, types.ElicitRequest)
    return request.params.message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("tool", "args", "kind", "words"),
    [
        (
            "delete_secret",
            {"scope": "repository", "repo_id": 1, "name": "no_such_secret"},
            "not_found",
            "delete",
        ),
        ("delete_secret", {"scope": "global", "name": "nope"}, "not_found", "delete"),
        ("delete_pipeline", {"repo_id": 1, "number": 999}, "not_found", "delete"),
        ("delete_cron", {"repo_id": 1, "cron_id": 99}, "not_found", "delete"),
        ("delete_registry", {"scope": "global", "address": "nope.example.org"}, "not_found", "delete"),
        ("approve_pipeline", FINISHED, "not_blocked", "approve"),
        ("approve_pipeline", {"repo_id": 1, "number": 999}, "not_found", "approve"),
    ],
)
async def test_a_call_with_nothing_to_decide_asks_nobody_and_writes_nothing(
    sandbox: Sandbox, mode: str, tool: str, args: dict[str, Any], kind: str, words: str
) -> None:
    result, person, harness = await first_call(sandbox, mode, tool, args)
    assert isinstance(result, types.CallToolResult) and result.is_error, result
    assert person.questions == []
    assert result.structured_content is not None and result.structured_content["error"]["kind"] == kind
    text = text_of(result)
    assert f"nothing to {words}; nobody was asked and no change was sent" in text
    assert sandbox.state_changing_requests() == []
    assert harness.audit.outcomes() == ["nothing_to_decide"]


async def test_a_finished_pipeline_is_named_with_its_status_and_the_way_to_read_it(sandbox: Sandbox) -> None:
    result, _, _ = await first_call(sandbox, "legacy", "approve_pipeline", FINISHED)
    text = text_of(result)
    assert "Pipeline 1 of repository 1 is not blocked (status success)" in text
    assert "get_pipeline shows its status" in text


@pytest.mark.parametrize("mode", MODES)
async def test_the_approve_question_says_a_fork_on_its_own_line_and_only_for_a_fork(
    sandbox: Sandbox, mode: str
) -> None:
    forked, person, _ = await first_call(sandbox, mode, "approve_pipeline", FORK)
    asked = question_of(forked, person)
    assert asked.startswith("This will approve pipeline 11 of repository 1.\nFrom a fork: yes")
    assert "A fork is a repository other than this one" in asked
    own, person, _ = await first_call(sandbox, mode, "approve_pipeline", NOT_FORK)
    # Not from a fork is said too: a missing line would read like a server that never looked.
    assert "\nFrom a fork: no (Woodpecker's from_fork)\n" in question_of(own, person)
    assert "A fork is a repository" not in question_of(own, person)


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_that_fails_asks_as_before_and_says_the_fork_is_unknown(
    sandbox: Sandbox, mode: str
) -> None:
    sandbox.inject_fault("GET", "/api/repos/2/pipelines/2", 500)
    result, person, harness = await first_call(sandbox, mode, "approve_pipeline", NOT_FORK)
    asked = question_of(result, person)
    assert "\nFrom a fork: unknown (the pipeline could not be read)\n" in asked
    assert "assume it does" in asked
    if mode == "legacy":
        # The person said yes to the question that said so: the approval ran, once.
        assert [r.path for r in sandbox.state_changing_requests()] == ["/api/repos/2/pipelines/2/approve"]
        assert harness.audit.outcomes()[:2] == ["asked", "approved"]
    else:
        assert sandbox.state_changing_requests() == []


async def test_once_approved_the_same_call_finds_nothing_to_approve_and_asks_nobody(sandbox: Sandbox) -> None:
    # The retry carrying the person's yes is past its question: it runs. The same call after it finds the
    # pipeline no longer blocked.
    person = Person("accept")
    yes = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=person) as client:
                question = await client.session.call_tool("approve_pipeline", FORK, allow_input_required=True)
                assert isinstance(question, types.InputRequiredResult)
                done = await client.session.call_tool(
                    "approve_pipeline", FORK, input_responses=yes, request_state=question.request_state
                )
                again = await client.session.call_tool("approve_pipeline", FORK, allow_input_required=True)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert isinstance(again, types.CallToolResult) and again.is_error
    assert again.structured_content is not None and again.structured_content["error"]["kind"] == "not_blocked"
    assert [r.path for r in sandbox.state_changing_requests()] == ["/api/repos/1/pipelines/11/approve"]
    assert harness.audit.outcomes() == ["asked", "approved", "executed", "nothing_to_decide"]
