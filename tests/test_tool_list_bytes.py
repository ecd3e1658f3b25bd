"""bench/tool_list_bytes.py keeps working, and measures what the server really lists."""

import json
from typing import Any

from bench.tool_list_bytes import CORE_FIELDS, compact, figures, wire
from domain.woodpecker.catalogue import ADDED_TOOLS, WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS


def test_it_measures_all_tools_and_every_toolset() -> None:
    found = figures()
    assert set(found) == set(WOODPECKER_TOOLSETS.names)
    assert found["all"]["tools"] == len(WOODPECKER_TOOLS)
    assert all(0 < f["core_bytes"] < f["list_bytes"] for f in found.values() if f["tools"])
    # What a client pays: each toolset's own tools plus the ones every selection keeps.
    for name in WOODPECKER_TOOLSETS.names:
        own = WOODPECKER_TOOLSETS.members(name, WOODPECKER_TOOLS)
        assert found[name]["tools"] == len(own | WOODPECKER_TOOLSETS.always), name
    assert sum(
        len(WOODPECKER_TOOLSETS.members(n, WOODPECKER_TOOLS))
        for n in WOODPECKER_TOOLSETS.names
        if n not in ("all", "essential")
    ) == len(WOODPECKER_TOOLS)


def test_the_listed_tools_carry_no_meaningless_bound() -> None:
    assert "9007199254740991" not in json.dumps(wire(WOODPECKER_TOOLS))


def _core_bytes(tools: list[dict[str, Any]]) -> int:
    return compact([{k: t[k] for k in CORE_FIELDS if k in t} for t in tools])


def test_the_71_shared_tools_fit_the_35_kb_a_model_reads() -> None:
    # Issue 15 / docs/adr/0029: name, title, description and inputSchema of the shared catalogue's
    # 71 tools, compact JSON. The documented additions have a budget each (below), so a new
    # addition is judged on its own cost, not on how much room the others happened to leave.
    added = {tool.name for tool in ADDED_TOOLS}
    shared = [t for t in wire(WOODPECKER_TOOLS) if t["name"] not in added]
    assert len(shared) == 71
    assert _core_bytes(shared) <= 35_000


def test_each_addition_costs_at_most_1_5_kb() -> None:
    added = {tool.name for tool in ADDED_TOOLS}
    for tool in wire(WOODPECKER_TOOLS):
        if tool["name"] in added:
            assert _core_bytes([tool]) <= 1_500, tool["name"]


def test_the_default_on_tools_still_say_which_id_is_which() -> None:
    tools = {t["name"]: t for t in wire(WOODPECKER_TOOLS)}
    described = {
        (name, arg): prop.get("description", "")
        for name in WOODPECKER_TOOLS.names
        if WOODPECKER_TOOLS.get(name).essential
        for arg, prop in tools[name]["inputSchema"]["properties"].items()
    }
    for (name, arg), text in described.items():
        if arg == "repo_id":
            assert "not owner/name" in text.lower(), name
        if arg == "number":
            assert "not the id" in text, name
        if arg == "step_id":
            assert "get_pipeline" in text and "not the pid" in text, name
    assert "number, not the id" in tools["list_pipelines"]["description"]
    assert "step ids" in tools["get_pipeline"]["description"]
