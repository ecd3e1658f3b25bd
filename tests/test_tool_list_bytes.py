"""bench/tool_list_bytes.py keeps working, and measures what the server really lists."""

import json

from bench.tool_list_bytes import figures, wire
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS


def test_it_measures_all_tools_and_every_toolset() -> None:
    found = figures()
    assert set(found) == set(WOODPECKER_TOOLSETS.names)
    assert found["all"]["tools"] == len(WOODPECKER_TOOLS)
    assert all(0 < f["core_bytes"] < f["list_bytes"] for f in found.values() if f["tools"])
    assert sum(found[n]["tools"] for n in WOODPECKER_TOOLSETS.names if n not in ("all", "essential")) == len(
        WOODPECKER_TOOLS
    )


def test_the_listed_tools_carry_no_meaningless_bound() -> None:
    assert "9007199254740991" not in json.dumps(wire(WOODPECKER_TOOLS))


def test_all_tools_fit_the_35_kb_a_model_reads() -> None:
    # Issue 15 / docs/adr/0029: name, title, description and inputSchema of every tool, compact JSON.
    assert figures()["all"]["core_bytes"] <= 35_000


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
