"""Hypothesis strategies shared by the guard tests: catalogue-shaped arguments and JSON values."""

from typing import Any

from hypothesis import strategies as st

from domain.tools import Param, ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS

GUARDED = tuple(t for t in WOODPECKER_TOOLS if t.guarded)
GUARDED_NAMES = tuple(t.name for t in GUARDED)

SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
IDS = st.integers(min_value=1, max_value=10**6)


def value_for(param: Param) -> st.SearchStrategy[Any]:
    """A value the catalogue's schema would accept (roughly; the guard does not validate)."""
    if param.choices:
        return st.sampled_from(param.choices)
    if param.type == "boolean":
        return st.booleans()
    if param.type == "integer":
        return IDS
    if param.type == "array":
        items = param.constraints.get("items", {})
        if "enum" in items:
            return st.lists(st.sampled_from(items["enum"]), unique=True, max_size=len(items["enum"]))
        return st.lists(st.text(min_size=1, max_size=12), max_size=3)
    return st.text(min_size=1, max_size=24)


_ARGUMENTS: dict[tuple[str, bool], st.SearchStrategy[dict[str, Any]]] = {}


def arguments_for(tool: ToolSpec, *, with_token: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """Required parameters always present, optional ones sometimes; `confirm_token` left out unless asked.

    Built once per tool: `tool_and_arguments` asks for it in every example, and a strategy made
    anew each time is validated anew (the same values, drawn the same way, at a fraction of the CPU).
    """
    key = (tool.name, with_token)
    if key not in _ARGUMENTS:
        _ARGUMENTS[key] = _arguments_for(tool, with_token=with_token)
    return _ARGUMENTS[key]


def _arguments_for(tool: ToolSpec, *, with_token: bool) -> st.SearchStrategy[dict[str, Any]]:
    required = {p.name: value_for(p) for p in tool.params if p.required}
    optional = {
        p.name: value_for(p)
        for p in tool.params
        if not p.required and (with_token or p.name != "confirm_token")
    }
    return st.fixed_dictionaries(required, optional=optional)


_PAIRS: dict[tuple[str, ...], st.SearchStrategy[tuple[ToolSpec, dict[str, Any]]]] = {}


def tool_and_arguments(
    tools: tuple[ToolSpec, ...] = GUARDED,
) -> st.SearchStrategy[tuple[ToolSpec, dict[str, Any]]]:
    """A tool of `tools` and its arguments; built once per set of tools and once per tool, as the
    tests ask for it inside their draws (see `arguments_for`)."""
    key = tuple(t.name for t in tools)
    if key not in _PAIRS:
        pairs = {t.name: st.tuples(st.just(t), arguments_for(t)) for t in tools}
        _PAIRS[key] = st.sampled_from(tools).flatmap(lambda t: pairs[t.name])
    return _PAIRS[key]
