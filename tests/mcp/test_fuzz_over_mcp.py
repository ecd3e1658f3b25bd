"""Wrong arguments through the real MCP surface: a validation error result, never a crash, never a request upstream."""

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from domain.tools import ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from tests.domain.test_arguments_fuzz import JSON_VALUES, broken_arguments
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import MODES, Person, build_harness_on

pytestmark = pytest.mark.anyio

HUGE = st.integers(1_000, 50_000).map(lambda n: "x" * n)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
async def test_a_broken_call_of_any_tool_is_refused_by_name_and_reaches_nobody(
    mode: str, data: st.DataObject
) -> None:
    tool = data.draw(st.sampled_from(list(WOODPECKER_TOOLS)), label="tool")
    args, name = data.draw(broken_arguments(tool), label="broken")
    woodpecker = FakeWoodpecker()
    person = Person("accept")
    harness = build_harness_on(woodpecker, Credential("fuzz"))
    # Bounded, and far above what one in-process call takes even on a loaded 2-core machine.
    with anyio.fail_after(60):
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool(tool.name, args)
    text = result.content[0].text if result.content else ""
    assert result.is_error, (tool.name, args)
    assert (name in text) if name in {p.name for p in tool.params} else ("unknown argument" in text)
    assert woodpecker.calls == [] and person.questions == []


@pytest.mark.parametrize("tool", list(WOODPECKER_TOOLS), ids=lambda t: t.name)
async def test_a_huge_string_or_a_nested_object_in_every_parameter_is_refused_without_a_request(
    tool: ToolSpec,
) -> None:
    woodpecker = FakeWoodpecker()
    harness = build_harness_on(woodpecker, Credential("fuzz"))
    wrong = {"huge": "x" * 20_000, "nested": {"a": [{"b": None}]}, "negative": -1}
    # Bounded, and far above what one in-process call takes even on a loaded 2-core machine.
    with anyio.fail_after(60):
        async with Client(harness.server, mode="2026-07-28") as client:
            for param in tool.params:
                for label, value in wrong.items():
                    if label == "negative" and param.type != "integer":
                        continue
                    if label == "huge" and (tool.name, param.name) == ("validate_pipeline_config", "config"):
                        continue  # a workflow file's text, up to 32,000 characters by design
                    result = await client.call_tool(tool.name, {param.name: value})
                    assert result.is_error, (tool.name, param.name, label)
                    assert len(result.content[0].text) < 2_000, "an error never echoes a huge value"
    assert woodpecker.calls == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
async def test_arbitrary_json_arguments_never_crash_the_server(data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(list(WOODPECKER_TOOLS)), label="tool")
    names = [p.name for p in tool.params] or ["x"]
    args = data.draw(
        st.dictionaries(st.sampled_from(names) | st.text(max_size=5), JSON_VALUES | HUGE, max_size=6),
        label="args",
    )
    woodpecker = FakeWoodpecker()
    harness = build_harness_on(woodpecker, Credential("fuzz"), elicitation=False)
    # Bounded, and far above what one in-process call takes even on a loaded 2-core machine.
    with anyio.fail_after(60):
        async with Client(harness.server, mode="legacy") as client:
            result = await client.call_tool(tool.name, args)
    structured = result.structured_content or {}
    assert "internal error" not in str(structured.get("error", "")), (tool.name, args)
    # ELICITATION=false: a guarded call that passed validation only gets a token, never a write.
    if tool.guarded:
        assert woodpecker.writes == [], (tool.name, args)
