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
