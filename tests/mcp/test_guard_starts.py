"""guard.md §1c over MCP against the sandbox: a manual or cron start that would go around an approval,
a trigger's variables, and manual or cron added to a secret ask first, on both revisions and by token.

umbrella/infra (3) requires approval for every event; its push 3 on dev is blocked, main's pushes were
approved; cron 4 runs on dev, cron 5 on the default branch (main). Woodpecker never holds a manual or
cron pipeline (server/pipeline/gated.go), so each of these would run the held code unasked.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for
from tests.mcp.guarded_calls import assert_clean_question
from tests.mcp.test_guard_recheck import ChangingPerson

pytestmark = pytest.mark.anyio

Setup = Callable[[Sandbox], None]


def _nothing(sandbox: Sandbox) -> None:
    pass


def _unreviewed_main(sandbox: Sandbox) -> None:
    # A push on main that ran without the approval the repository now requires.
    sandbox.world.pipelines[301].reviewed_by = ""


def _declined_dev(sandbox: Sandbox) -> None:
    sandbox.world.pipelines[303].status = "declined"


def _default_branch_dev(sandbox: Sandbox) -> None:
    sandbox.world.repos[3].default_branch = "dev"


def _full_page_of_approved_pushes(sandbox: Sandbox) -> None:
    # 50 more approved pushes on main: the page read is full, so older ones lie beyond it.
    first = sandbox.world.pipelines[301]
    for number in range(4, 54):
        sandbox.world.pipelines[300 + number] = dataclasses.replace(first, id=300 + number, number=number)


def _failing_pipeline_list(sandbox: Sandbox) -> None:
    sandbox.inject_fault("GET", "/api/repos/3/pipelines", 500, times=100)


def _pull_requests_only(sandbox: Sandbox) -> None:
    sandbox.world.repos[3].require_approval = "pull_requests"


def _failing_repository_read(sandbox: Sandbox) -> None:
    sandbox.inject_fault("GET", "/api/repos/3", 500, times=100)


TRIGGER_MAIN = {"repo_id": 3, "branch": "main"}
VARIABLES = {
    "NODE_OPTIONS": "--import=data:text/javascript,evil",
    "PIP_INDEX_URL": "https://pkgs.evil.example",
}
ADD_CRON = {"scope": "repository", "repo_id": 1, "name": "docker_password", "events": ["push", "tag", "cron"]}

# case -> (tool, arguments, how the sandbox gets there, the one write a yes sends, reason words in the question)
CASES: dict[str, tuple[str, dict[str, Any], Setup, tuple[str, str], str]] = {
    "trigger with variables on a quiet branch": (
        "trigger_pipeline",
        {**TRIGGER_MAIN, "variables": VARIABLES},
        _pull_requests_only,
        ("POST", "/api/repos/3/pipelines"),
        "variables reach every step",
    ),
    # Review finding: every event waits, and main's newest commit may never have had a pipeline to approve.
    "trigger where every event needs approval": (
        "trigger_pipeline",
        TRIGGER_MAIN,
        _nothing,
        ("POST", "/api/repos/3/pipelines"),
        "requires approval for every event",
    ),
    "run a cron where every event needs approval": (
        "run_cron",
        {"repo_id": 3, "cron_id": 5},
        _nothing,
        ("POST", "/api/repos/3/cron/5"),
        "requires approval for every event",
    ),
    "trigger on a branch with a blocked push": (
        "trigger_pipeline",
        {"repo_id": 3, "branch": "dev"},
        _nothing,
        ("POST", "/api/repos/3/pipelines"),
        "waiting for approval or was declined",
    ),
    "trigger on a branch with a declined push": (
        "trigger_pipeline",
        {"repo_id": 3, "branch": "dev"},
        _declined_dev,
        ("POST", "/api/repos/3/pipelines"),
        "waiting for approval or was declined",
    ),
    "trigger on a branch with an unapproved push": (
        "trigger_pipeline",
        TRIGGER_MAIN,
        _unreviewed_main,
        ("POST", "/api/repos/3/pipelines"),
        "needs an approval and none is on record",
    ),
    "trigger when the branch's pipelines cannot be read": (
        "trigger_pipeline",
        TRIGGER_MAIN,
        _failing_pipeline_list,
        ("POST", "/api/repos/3/pipelines"),
        "could not read all of the branch's recent pipelines",
    ),
    "trigger when a full page hides older pipelines": (
        "trigger_pipeline",
        TRIGGER_MAIN,
        _full_page_of_approved_pushes,
        ("POST", "/api/repos/3/pipelines"),
        "could not read all of the branch's recent pipelines",
    ),
    "create a cron on a branch with a blocked push": (
        "create_cron",
        {"repo_id": 3, "name": "dev-nightly", "schedule": "0 2 * * *", "branch": "dev"},
        _nothing,
        ("POST", "/api/repos/3/cron"),
        "waiting for approval or was declined",
    ),
    "create a cron on a default branch with a blocked push": (
        "create_cron",
        {"repo_id": 3, "name": "nightly", "schedule": "0 2 * * *"},
        _default_branch_dev,
        ("POST", "/api/repos/3/cron"),
        "waiting for approval or was declined",
    ),
    "re-enable a cron on a branch with a blocked push": (
        "update_cron",
        {"repo_id": 3, "cron_id": 4, "enabled": True},
        _nothing,
        ("PATCH", "/api/repos/3/cron/4"),
        "waiting for approval or was declined",
    ),
    "move a cron to a branch with a blocked push": (
        "update_cron",
        {"repo_id": 3, "cron_id": 5, "branch": "dev"},
        _nothing,
        ("PATCH", "/api/repos/3/cron/5"),
        "waiting for approval or was declined",
    ),
    "run a cron whose branch has a blocked push": (
        "run_cron",
        {"repo_id": 3, "cron_id": 4},
        _nothing,
        ("POST", "/api/repos/3/cron/4"),
        "waiting for approval or was declined",
    ),
    "run a cron whose default branch has a blocked push": (
        "run_cron",
        {"repo_id": 3, "cron_id": 5},
        _default_branch_dev,
        ("POST", "/api/repos/3/cron/5"),
        "waiting for approval or was declined",
    ),
    "run a cron when its repository cannot be read": (
        "run_cron",
        {"repo_id": 3, "cron_id": 5},
        _failing_repository_read,
        ("POST", "/api/repos/3/cron/5"),
        "could not read all of the branch's recent pipelines",
    ),
    "add cron to a secret of a repository that requires approval": (
        "update_secret",
        ADD_CRON,
        _nothing,
        ("PATCH", "/api/repos/1/secrets/docker_password"),
        "never holds for approval",
    ),
    "add manual to an organization secret": (
        "update_secret",
        {"scope": "organization", "org_id": 5, "name": "infra_ssh_key", "events": ["push", "manual"]},
        _nothing,
        ("PATCH", "/api/orgs/5/secrets/infra_ssh_key"),
        "never holds for approval",
    ),
}


def _writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(w.method, w.path) for w in sandbox.state_changing_requests()]


def _text(result: CallToolResult) -> str:
    return str(getattr(result.content[0], "text", ""))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_start_around_an_approval_asks_and_only_a_yes_sends_it_once(
    sandbox: Sandbox, mode: str, reply: str, case: str
) -> None:
    tool, args, setup, write, why = CASES[case]
    setup(sandbox)
    person = Person(reply)  # type: ignore[arg-type]
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(args))
    assert len(person.questions) == 1, (person.questions, result.content)
    question = person.questions[0]
    assert why in question, question
    assert_clean_question(question, args)
    if reply == "decline":
        assert _writes(sandbox) == [] and "nothing was done" in _text(result), result.content
    else:
        assert not result.is_error, result.content
        assert _writes(sandbox) == [write]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_client_without_a_dialog_gets_a_token_and_only_the_second_call_sends_it(
    sandbox: Sandbox, mode: str, case: str
) -> None:
    tool, args, setup, write, why = CASES[case]
    setup(sandbox)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode) as client:
                first = await client.call_tool(tool, dict(args))
                assert _writes(sandbox) == [], first.content
                assert first.structured_content is not None, first.content
                token = first.structured_content["confirm_token"]
                second = await client.call_tool(tool, {**args, "confirm_token": token})
    assert why in _text(first)
    assert not second.is_error, second.content
    assert _writes(sandbox) == [write]


def test_every_tool_that_starts_a_manual_or_cron_pipeline_has_a_case() -> None:
    starts = {
        t.name
        for t in WOODPECKER_TOOLS
        if t.guard is not None and t.guard.when in ("starts_past_approval", "moves_cron_past_approval")
    }
    assert starts == {"trigger_pipeline", "create_cron", "update_cron", "run_cron"}
    assert {tool for tool, *_ in CASES.values()} == starts | {"update_secret"}


@pytest.mark.parametrize("mode", MODES)
async def test_the_issues_sequence_a_declined_approval_is_not_run_by_a_trigger_or_a_cron(
    sandbox: Sandbox, mode: str
) -> None:
    # The person declines approving the blocked push; the model then tries a trigger, a cron moved to dev
    # and its run. Each asks, the person declines each, and nothing reaches Woodpecker.
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                for tool, args in (
                    ("approve_pipeline", {"repo_id": 3, "number": 3}),
                    ("trigger_pipeline", {"repo_id": 3, "branch": "dev"}),
                    ("update_cron", {"repo_id": 3, "cron_id": 5, "branch": "dev"}),
                    ("run_cron", {"repo_id": 3, "cron_id": 4}),
                ):
                    result = await client.call_tool(tool, args)
                    assert "nothing was done" in _text(result), (tool, result.content)
    assert len(person.questions) == 4
    assert _writes(sandbox) == []
    assert sandbox.world.pipelines[303].status == "blocked"


@pytest.mark.parametrize("mode", MODES)
async def test_the_question_names_each_variable_on_its_own_line_and_never_a_value(
    sandbox: Sandbox, mode: str
) -> None:
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                await client.call_tool("trigger_pipeline", {**TRIGGER_MAIN, "variables": VARIABLES})
    (question,) = person.questions
    lines = question.splitlines()
    for name, value in VARIABLES.items():
        assert f"Variable name: {name}" in lines
        assert value not in question
    # The branch is pushed text: the call names it, the question never shows it.
    assert not any(line.endswith(": main") for line in lines), lines


HARMLESS_STARTS = {
    # Under pull_requests only pull requests wait: main holds nothing and dev's push stays blocked.
    "trigger on an approved branch without variables": (
        "trigger_pipeline",
        TRIGGER_MAIN,
        _pull_requests_only,
    ),
    "trigger with empty variables": (
        "trigger_pipeline",
        {**TRIGGER_MAIN, "variables": {}},
        _pull_requests_only,
    ),
    "trigger where nothing needs approval and nothing is held": (
        "trigger_pipeline",
        {"repo_id": 3, "branch": "main"},
        lambda s: setattr(s.world.repos[3], "require_approval", "none"),
    ),
    "pause a cron without moving it": (
        "update_cron",
        {"repo_id": 3, "cron_id": 4, "enabled": False},
        _nothing,
    ),
    # acme/web's nightly runs on main (a blocked fork pull request): enabled already, so nothing new runs.
    "re-enable a cron that is enabled": (
        "update_cron",
        {"repo_id": 1, "cron_id": 1, "enabled": True},
        _nothing,
    ),
    "add cron to a secret of a repository that holds nothing": (
        "update_secret",
        ADD_CRON,
        lambda s: setattr(s.world.repos[1], "require_approval", "none"),
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(HARMLESS_STARTS))
async def test_a_start_that_goes_around_nothing_applies_unasked(
    sandbox: Sandbox, mode: str, case: str
) -> None:
    tool, args, setup = HARMLESS_STARTS[case]
    setup(sandbox)
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(args))
    assert person.questions == [] and not result.is_error, result.content
    assert len(sandbox.state_changing_requests()) == 1


def _block_main(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.pipelines[302].status = "blocked"


@pytest.mark.parametrize(
    ("second", "writes"), [("decline", []), ("accept", [("POST", "/api/repos/3/pipelines")])]
)
async def test_a_branch_that_became_held_while_the_person_read_is_asked_about_again(
    sandbox: Sandbox, second: str, writes: list[tuple[str, str]]
) -> None:
    # Asked about the variables only; before the yes arrives, a push on main is held. The old yes does
    # not cover it: the person is asked again, and only a second yes sends the trigger, once.
    person = ChangingPerson(lambda: _block_main(sandbox), ["accept", second])
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool("trigger_pipeline", {**TRIGGER_MAIN, "variables": VARIABLES})
    assert len(person.questions) == 2
    held = "waiting for approval or was declined"
    assert held not in person.questions[0] and held in person.questions[1]
    assert _writes(sandbox) == writes, result.content
