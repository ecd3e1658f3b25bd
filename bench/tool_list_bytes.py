"""What a tool list costs a model in context: bytes of `tools/list`, for all tools, `essential` and each toolset.

    python -m bench.tool_list_bytes            the table
    python -m bench.tool_list_bytes --json     the same figures as JSON

Counted from the exact `Tool` objects the server lists (`adapters.mcp_server.tool_definition`),
serialised as compact JSON the way they go over the wire. Two figures per set: the part a
model reads to choose and call a tool (name, title, description, inputSchema; the budget in
tests/domain/test_tool_list_size.py), and the whole `tools/list` entry (plus outputSchema
and annotations). No timing: the figures are the same on every machine.
"""

import argparse
import json
from typing import Any

from adapters.mcp_server import tool_definition
from domain.tools import Catalogue
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS

CORE_FIELDS = ("name", "title", "description", "inputSchema")


def compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def wire(catalogue: Catalogue) -> list[dict[str, Any]]:
    return [
        tool_definition(spec).model_dump(mode="json", by_alias=True, exclude_none=True) for spec in catalogue
    ]


def measure(catalogue: Catalogue) -> dict[str, int]:
    tools = wire(catalogue)
    return {
        "tools": len(tools),
        "core_bytes": compact([{k: t[k] for k in CORE_FIELDS if k in t} for t in tools]),
        "list_bytes": compact({"tools": tools}),
    }


def figures() -> dict[str, dict[str, int]]:
    out = {"all": measure(WOODPECKER_TOOLS)}
    for name in WOODPECKER_TOOLSETS.names:
        if name != "all":
            out[name] = measure(WOODPECKER_TOOLSETS.select((name,), WOODPECKER_TOOLS))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    found = figures()
    if options.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{'set':<15}{'tools':>6}{'name+title+description+inputSchema':>38}{'whole tools/list':>18}")
    for name, f in found.items():
        print(f"{name:<15}{f['tools']:>6}{f['core_bytes']:>38,}{f['list_bytes']:>18,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
