"""Every guarded tool, both protocol revisions, every answer: only a yes reaches Woodpecker, and the question shows ids, never pushed text."""

import anyio
import pytest
from mcp import Client

from adapters.mcp_http import build_http_app
from domain.guard.fingerprint import fingerprint, short
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for, serving
from tests.mcp.guarded_calls import HARMLESS, NO_HARMLESS, WIDENING, check_guarded_call

pytestmark = pytest.mark.anyio


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_over_http_every_guarded_tool_reaches_woodpecker_only_after_a_yes(
    sandbox: Sandbox, mode: str
) -> None:
    # The full matrix (34 tools x 4 answers) over a real loopback socket, one server and one
    # client per revision; test_e2e runs the same matrix over stdio.
    assert set(WIDENING) == {t.name for t in WOODPECKER_TOOLS if t.guarded}
    person = Person()
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(60):
            async with serving(build_http_app(harness.server)) as base:
                async with Client(f"{base}/mcp", mode=mode, elicitation_callback=person) as client:
                    for tool in sorted(WIDENING):
                        await check_guarded_call(client, person, sandbox, tool)


def test_every_conditional_tool_has_a_harmless_call_to_try() -> None:
    conditional = {t.name for t in WOODPECKER_TOOLS if t.guard is not None and not t.guard.always}
    assert set(HARMLESS) == conditional - NO_HARMLESS and len(conditional) == 15


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", sorted(HARMLESS))
async def test_the_harmless_direction_applies_on_the_first_call_without_a_question(
    sandbox: Sandbox, tool: str, mode: str
) -> None:
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(HARMLESS[tool]))
    assert person.questions == []
    assert not result.is_error, result.content
    assert len(sandbox.state_changing_requests()) == 1
    assert harness.audit.events == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["trigger_pipeline", "restart_pipeline", "run_cron"])
async def test_tools_that_start_a_build_ask_only_around_an_approval_and_say_a_repeat_runs_again(
    sandbox: Sandbox, tool: str, mode: str
) -> None:
    args = {
        "trigger_pipeline": HARMLESS["trigger_pipeline"],
        "restart_pipeline": {"repo_id": 1, "number": 2},
        "run_cron": HARMLESS["run_cron"],
    }[tool]
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                result = await client.call_tool(tool, args)
    assert person.questions == []
    assert not result.is_error, result.content
    annotations = listed[tool].annotations
    assert annotations is not None and annotations.idempotent_hint is False
    assert "another" in (listed[tool].description or "")


async def test_every_question_and_answer_is_audited_without_text_or_tokens(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy", elicitation_callback=Person("accept")) as client:
                await client.call_tool("approve_pipeline", {"repo_id": 1, "number": 11})
            async with Client(harness.server, mode="legacy", elicitation_callback=Person("cancel")) as client:
                await client.call_tool("delete_secret", dict(WIDENING["delete_secret"]))
    events = harness.audit.events
    assert [(e["tool"], e["path"], e["outcome"]) for e in events] == [
        ("approve_pipeline", "dialog", "asked"),
        ("approve_pipeline", "dialog", "approved"),
        ("approve_pipeline", "dialog", "executed"),
        ("delete_secret", "dialog", "asked"),
        ("delete_secret", "dialog", "cancelled"),
    ]
    assert events[0]["targets"] == {"repo_id": 1, "number": 11}
    assert "deploy_token" not in repr(events)


async def test_an_audit_line_gives_no_way_to_test_a_guess_of_a_new_secret_value(sandbox: Sandbox) -> None:
    rotate = dict(WIDENING["update_secret"])
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(
                harness.server, mode="legacy", elicitation_callback=Person("decline")
            ) as client:
                await client.call_tool("update_secret", rotate)
                await client.call_tool("update_secret", {**rotate, "value": "another"})
    first, second = (
        {str(e["fingerprint"]) for e in harness.audit.events[:2]},
        {str(e["fingerprint"]) for e in harness.audit.events[2:]},
    )
    # Somebody reading the trail who guesses the value right must not be able to confirm it.
    guessed = short(fingerprint(WOODPECKER_TOOLS.get("update_secret"), rotate, None))
    assert guessed not in first
    assert first == second and len(first) == 1
    assert rotate["value"] not in repr(harness.audit.events)
