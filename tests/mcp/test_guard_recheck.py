"""Re-check at apply time: when the stored object changes while the person reads, so that the call now widens something the question did not show, the person is asked again and nothing is written on the old answer."""

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from sandbox.models import Secret
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, elicit_result, harness_for

pytestmark = pytest.mark.anyio

# Lowers require_approval on a public repository; visibility stays public, so only the lowering is asked.
LOWER = {"repo_id": 1, "require_approval": "forks", "visibility": "public"}
# A new value on a secret that already has the pull_request event: only the new value is asked.
ROTATE = {
    "scope": "global",
    "name": "sonar_token",
    "value": "rotated",
    "events": ["push", "pull_request"],
}


def make_private(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.repos[1].visibility = "private"


def drop_pull_request_event(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.secrets[7].events = ["push"]


def clear_the_review(sandbox: Sandbox) -> None:
    # The declined pull request 7 loses its approval record: restarting it now also goes around approval.
    with sandbox.state.lock:
        for pipeline in sandbox.world.pipelines.values():
            if (pipeline.repo_id, pipeline.number) == (1, 7):
                pipeline.reviewed_by = ""


# A repository secret for pull requests, named like no wider secret yet: only the pull-request event is asked.
PR_SECRET = {
    "scope": "repository",
    "repo_id": 1,
    "name": "gh_token",
    "value": "fresh",
    "events": ["push", "pull_request"],
}


def add_an_organization_secret_of_that_name(sandbox: Sandbox) -> None:
    # guard.md §1c: organization acme (repository 1's) now has gh_token, which the new secret would shadow.
    with sandbox.state.lock:
        sandbox.world.secrets[99] = Secret(
            99, 4, 0, "gh_token", value="org", events=["push"], images=[], note=""
        )


def prepare(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.repos[1].require_approval = "all_events"
        sandbox.world.repos[1].visibility = "public"


class ChangingPerson(Person):
    """Says yes to everything, but before answering the first question someone changes the object."""

    def __init__(self, change: Callable[[], None], replies: list[Any]) -> None:
        super().__init__()
        self.change = change
        self.replies = replies

    async def __call__(
        self, ctx: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if not self.questions:
            self.change()
        self.questions.append(params.message)
        return elicit_result(self.replies[len(self.questions) - 1])


CASES = [
    ("update_repository", LOWER, make_private, "public"),
    ("update_secret", ROTATE, drop_pull_request_event, "pull_request"),
    ("restart_pipeline", {"repo_id": 1, "number": 7}, clear_the_review, "approve_pipeline"),
    ("create_secret", PR_SECRET, add_an_organization_secret_of_that_name, "instead of the organization's"),
]


@pytest.mark.parametrize(("tool", "args", "change", "newly_shown"), CASES)
async def test_a_dialog_answered_after_the_object_changed_is_asked_again(
    sandbox: Sandbox, tool: str, args: dict[str, Any], change: Any, newly_shown: str
) -> None:
    prepare(sandbox)
    person = ChangingPerson(lambda: change(sandbox), ["accept", "decline"])
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(args))
    assert len(person.questions) == 2
    assert newly_shown not in person.questions[0].split("\n\n", 1)[1]
    assert newly_shown in person.questions[1]
    assert "nothing was done" in result.content[0].text  # type: ignore[union-attr]  # text content
    assert sandbox.state_changing_requests() == []


async def test_the_second_yes_after_a_change_acts_once(sandbox: Sandbox) -> None:
    prepare(sandbox)
    person = ChangingPerson(lambda: make_private(sandbox), ["accept", "accept"])
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool("update_repository", dict(LOWER))
    assert len(person.questions) == 2 and not result.is_error
    assert len(sandbox.state_changing_requests()) == 1


@pytest.mark.parametrize(("tool", "args", "change", "newly_shown"), CASES)
async def test_a_sealed_answer_given_before_the_object_changed_earns_a_new_question(
    sandbox: Sandbox, tool: str, args: dict[str, Any], change: Any, newly_shown: str
) -> None:
    prepare(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                first = await client.session.call_tool(tool, dict(args), allow_input_required=True)
                assert isinstance(first, types.InputRequiredResult)
                change(sandbox)
                retried = await client.session.call_tool(
                    tool,
                    dict(args),
                    allow_input_required=True,
                    input_responses={"confirm": elicit_result("accept")},
                    request_state=first.request_state,
                )
    assert isinstance(retried, types.InputRequiredResult)
    request = (retried.input_requests or {})["confirm"]
    assert isinstance(request, types.ElicitRequest)
    assert newly_shown in request.params.message
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize(("tool", "args", "change", "newly_shown"), CASES)
async def test_a_token_issued_before_the_object_changed_does_nothing(
    sandbox: Sandbox, tool: str, args: dict[str, Any], change: Any, newly_shown: str
) -> None:
    prepare(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy") as client:
                first = await client.call_tool(tool, dict(args))
                assert first.structured_content is not None
                change(sandbox)
                second = await client.call_tool(
                    tool, {**args, "confirm_token": first.structured_content["confirm_token"]}
                )
    assert second.is_error
    assert sandbox.state_changing_requests() == []
