"""Every guarded tool, both protocol revisions, every answer: only a yes reaches Woodpecker, and the question shows ids, never pushed text."""

from typing import Any

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, REPLIES, Person, harness_for
from tests.mcp.guarded_calls import HARMLESS, WIDENING, WRITES, assert_clean_question

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", sorted(WIDENING))
async def test_a_guarded_call_reaches_woodpecker_only_after_a_yes(
    sandbox: Sandbox, tool: str, mode: str
) -> None:
    args = WIDENING[tool]
    seen: dict[str, Any] = {}
    person = Person()
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                for reply in REPLIES:
                    sandbox.reset()
                    person.reply, person.questions = reply, []
                    result = await client.call_tool(tool, dict(args))
                    writes = sandbox.state_changing_requests()
                    seen[reply] = (len(writes), result.is_error)
                    assert len(person.questions) == 1, f"{reply}: asked {len(person.questions)} times"
                    assert_clean_question(person.questions[0], args)
                    if reply == "accept":
                        assert not result.is_error, result.content
                        assert len(writes) == WRITES[tool], [(w.method, w.path) for w in writes]
                    else:
                        assert writes == [], f"{reply} still wrote {[(w.method, w.path) for w in writes]}"
                        assert "nothing was done" in result.content[0].text
    assert set(seen) == set(REPLIES)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", sorted(HARMLESS))
async def test_the_harmless_direction_applies_on_the_first_call_without_a_question(
    sandbox: Sandbox, tool: str, mode: str
) -> None:
    person = Person("decline")
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(HARMLESS[tool]))
    assert person.questions == []
    assert not result.is_error, result.content
    assert len(sandbox.state_changing_requests()) == 1
    assert harness.audit.events == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["trigger_pipeline", "restart_pipeline", "run_cron"])
async def test_tools_that_start_a_build_never_ask(sandbox: Sandbox, tool: str, mode: str) -> None:
    args = {
        "trigger_pipeline": {"repo_id": 1, "branch": "main"},
        "restart_pipeline": {"repo_id": 1, "number": 2},
        "run_cron": {"repo_id": 1, "cron_id": 1},
    }[tool]
    person = Person("decline")
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
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
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
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
