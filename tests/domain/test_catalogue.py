"""The domain catalogue agrees with the shared specification on everything others depend on."""

import json
from pathlib import Path

import pytest

from domain.woodpecker.catalogue import WOODPECKER_TOOLS

SHARED = Path(__file__).resolve().parents[3] / "shared" / "spec" / "catalogue.json"


@pytest.fixture(scope="module")
def shared() -> dict[str, dict]:
    if not SHARED.exists():
        pytest.skip("the shared specification is not beside this checkout")
    return {t["name"]: t for t in json.loads(SHARED.read_text())["tools"]}


def test_counts_are_the_products_contract() -> None:
    tools = list(WOODPECKER_TOOLS)
    assert len(tools) == 71
    assert sum(t.kind == "read" for t in tools) == 34
    assert sum(t.kind == "write" for t in tools) == 37
    assert sum(t.guarded for t in tools) == 23
    assert sum(t.guarded and t.guard.always for t in tools if t.guard) == 16
    assert sum(t.essential for t in tools) == 8


def test_names_kinds_annotations_and_guards_match_the_shared_catalogue(shared: dict[str, dict]) -> None:
    assert list(WOODPECKER_TOOLS.names) == list(shared)
    for tool in WOODPECKER_TOOLS:
        spec = shared[tool.name]
        assert tool.kind == spec["kind"], tool.name
        assert tool.group == spec["group"], tool.name
        assert tool.essential == spec["essential"], tool.name
        a = spec["annotations"]
        assert (
            tool.annotations.read_only,
            tool.annotations.destructive,
            tool.annotations.idempotent,
            tool.annotations.open_world,
        ) == (a["readOnlyHint"], a["destructiveHint"], a["idempotentHint"], a["openWorldHint"]), tool.name
        g = spec["guard"]
        if g is None:
            assert tool.guard is None, tool.name
        else:
            assert tool.guard is not None, tool.name
            assert tool.guard.when == g["when"], tool.name
            assert tool.guard.targets == tuple(g["targets"]), tool.name
            assert tool.guard.body_bound == g["body_bound"], tool.name
            assert tool.guard.needs_current_state == g["needs_current_state"], tool.name


def test_parameters_match_the_shared_catalogue(shared: dict[str, dict]) -> None:
    for tool in WOODPECKER_TOOLS:
        spec = shared[tool.name]
        assert [p.name for p in tool.params] == [p["name"] for p in spec["params"]], tool.name
        for ours, theirs in zip(tool.params, spec["params"], strict=True):
            assert ours.required == theirs["required"], (tool.name, ours.name)
            if isinstance(theirs["type"], list):
                assert ours.choices == tuple(theirs["type"]), (tool.name, ours.name)
            else:
                assert ours.type == theirs["type"], (tool.name, ours.name)
