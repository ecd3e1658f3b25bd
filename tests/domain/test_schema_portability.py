"""Every schema the server lists gives each value one `type` (docs/adr/0051): no `["string", "null"]`.

A type list is legal JSON Schema, but a client that maps tool schemas onto a single-type dialect (the
OpenAPI subset behind Gemini's function declarations) may reject the tool or drop the constraint; the
MCP Inspector's `--strict` run reports each one. A value Woodpecker did not give is left out instead.
"""

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import pytest

from adapters.mcp_server import ACCOUNT_TOOLS
from domain.arguments import input_schema
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import (
    LogLine,
    LogMatch,
    Resolved,
    StepFailure,
    output_schema,
    shape,
    shape_failure_summary,
    shape_logs,
    shape_resolved,
    shape_search,
    shape_wait,
)
from domain.woodpecker.results.envelope import known

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
MANY = ("anyOf", "allOf", "oneOf", "prefixItems")
NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def type_lists(schema: Any, path: str = "") -> Iterator[str]:
    """The path of every subschema whose `type` is a list."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("type"), list):
        yield path or "(root)"
    for key in ONE:
        yield from type_lists(schema.get(key), f"{path}.{key}")
    for key in MANY:
        for i, sub in enumerate(schema.get(key) or []):
            yield from type_lists(sub, f"{path}.{key}[{i}]")
    for key in NAMED:
        for name, sub in (schema.get(key) or {}).items():
            yield from type_lists(sub, f"{path}.{key}.{name}")


SCHEMAS = [
    *((f"{t.name} output", output_schema(t)) for t in WOODPECKER_TOOLS),
    *((f"{t.name} input", input_schema(t)) for t in WOODPECKER_TOOLS),
    *((f"{t.name} output", t.output_schema) for t in ACCOUNT_TOOLS),
    *((f"{t.name} input", t.input_schema) for t in ACCOUNT_TOOLS),
]


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[name for name, _ in SCHEMAS])
def test_no_schema_gives_a_value_a_list_of_types(name: str, schema: dict[str, Any]) -> None:
    assert list(type_lists(schema)) == [], f"{name}: one type per value (docs/adr/0051)"


def test_the_walk_finds_a_type_list_however_deep() -> None:
    # The check above passes on a walk that looks nowhere: it must find one in each place it looks.
    nested = {
        "properties": {"a": {"type": "array", "items": {"properties": {"b": {"type": ["string", "null"]}}}}},
        "anyOf": [{"type": ["integer", "null"]}],
    }
    assert sorted(type_lists(nested)) == [".anyOf[0]", ".properties.a.items.properties.b"]


def test_known_leaves_out_only_what_has_no_value() -> None:
    assert known(a=None, b=0, c="", d=False) == {"b": 0, "c": "", "d": False}


# A step Woodpecker has not finished: no exit code, no state (Woodpecker's JSON says null).
UNKNOWN_STEP = {"id": 3, "pid": None, "name": None, "state": None, "exit_code": None}


def _valid(tool_name: str, structured: Mapping[str, Any]) -> None:
    jsonschema.Draft202012Validator(output_schema(WOODPECKER_TOOLS.get(tool_name))).validate(structured)


def test_a_log_of_a_step_with_no_exit_code_leaves_the_exit_code_out() -> None:
    tool = WOODPECKER_TOOLS.get("get_step_logs")
    args = {"repo_id": 1, "number": 2, "step_id": 3, "from": "tail", "limit": 200}
    empty = shape_logs(tool, args, [], 0, UNKNOWN_STEP).structured
    assert not {"exit_code", "state", "first_line", "last_line"} & set(empty)
    _valid("get_step_logs", empty)
    shown = shape_logs(tool, args, [LogLine(0, "one")], 1, UNKNOWN_STEP).structured
    assert (shown["first_line"], shown["last_line"]) == (0, 0) and "exit_code" not in shown
    _valid("get_step_logs", shown)
    search = WOODPECKER_TOOLS.get("search_step_logs")
    found = shape_search(
        search, {**args, "pattern": "one"}, [LogMatch(LogLine(0, "one"), (), ())], 1, 1, UNKNOWN_STEP
    ).structured
    assert not {"exit_code", "state"} & set(found)
    _valid("search_step_logs", found)


def test_failed_steps_with_nothing_known_but_their_workflow_validate() -> None:
    pipeline = {
        "number": 2,
        "status": None,
        "workflows": [{"name": "ci", "children": [{"state": "failure", "id": None, "name": None}]}],
    }
    waited = shape_wait({"repo_id": 1, "number": 2, "timeout_seconds": 5}, pipeline, waited=1.0, polls=1)
    assert "status" not in waited.structured
    _valid("wait_for_pipeline", waited.structured)
    failure = StepFailure("ci", {"state": "failure", "id": None, "exit_code": None})
    summary = shape_failure_summary(
        WOODPECKER_TOOLS.get("get_pipeline_failure_summary"),
        {"repo_id": 1, "number": 2},
        {"number": 2, "status": "failure"},
        [failure],
    )
    step = summary.structured["failed_steps"][0]
    assert step["workflow"] == "ci" and not {"step_id", "name", "exit_code"} & set(step)
    _valid("get_pipeline_failure_summary", summary.structured)


def test_a_resolved_step_with_no_name_or_state_leaves_them_out() -> None:
    found = Resolved(
        repository={"id": 1, "full_name": "ada/app"},
        pipeline={"number": 2, "status": None},
        workflow={"name": None},
        step={"id": 3, "pid": None, "name": None, "state": None},
    )
    out = shape_resolved(found).structured
    assert out["step_id"] == 3 and not {
        "pipeline_status",
        "step_pid",
        "step_name",
        "step_state",
        "workflow",
    } & set(out)
    _valid("resolve", out)


def test_a_filtered_trigger_leaves_the_pipeline_out() -> None:
    tool = WOODPECKER_TOOLS.get("trigger_pipeline")
    out = shape(tool, {"repo_id": 1, "branch": "main"}, None, status=204, headers={}).structured
    assert out["created"] is False and "pipeline" not in out
    _valid("trigger_pipeline", out)
