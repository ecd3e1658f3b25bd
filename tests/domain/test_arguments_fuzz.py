"""Generated arguments for every tool: valid ones pass, broken ones are refused by name, never with another exception."""

import datetime
import re
from collections.abc import Mapping
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from domain.arguments import ArgumentError, input_schema, validate, validation_schema
from domain.tools import Param, ToolSpec, When
from domain.woodpecker.catalogue import WOODPECKER_TOOLS

TOOLS = list(WOODPECKER_TOOLS)
# What validation enforces per argument; the listed schema (LISTED) is looser, never stricter.
VALIDATORS = {t.name: jsonschema.Draft202012Validator(validation_schema(t)) for t in TOOLS}
LISTED = {t.name: jsonschema.Draft202012Validator(input_schema(t)) for t in TOOLS}
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def _text(spec: Mapping[str, Any]) -> st.SearchStrategy[str]:
    lo, hi = spec.get("minLength", 0), spec.get("maxLength", 50)
    fmt, pattern = spec.get("format"), spec.get("pattern")
    if fmt == "uri":
        host = st.from_regex(r"[a-z]{1,12}(\.[a-z]{2,5}){1,2}", fullmatch=True)
        path = st.from_regex(r"(/[a-z0-9]{1,8}){0,3}", fullmatch=True)
        return st.builds(lambda s, h, p: f"{s}://{h}{p}", st.sampled_from(["http", "https"]), host, path)
    if fmt == "email":
        return st.from_regex(r"[a-z0-9._]{1,12}@[a-z]{1,10}\.[a-z]{2,5}", fullmatch=True)
    if fmt == "date-time":
        zones = st.sampled_from([datetime.UTC, datetime.timezone(datetime.timedelta(hours=2))])
        moments = st.datetimes(
            min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2100, 1, 1), timezones=zones
        )
        return moments.map(lambda d: d.replace(microsecond=0).isoformat().replace("+00:00", "Z"))
    if pattern is not None:
        return st.from_regex(pattern, fullmatch=True).filter(lambda s: lo <= len(s) <= hi)
    return st.text(min_size=lo, max_size=min(hi, 50))


_VALUES: dict[int, tuple[Param, st.SearchStrategy[Any]]] = {}


def value_of(param: Param) -> st.SearchStrategy[Any]:
    """Values `param` accepts. Built once per parameter (kept beside it, so its id stays its own):
    `valid_arguments` asks in every example, and a strategy made anew is validated anew and its
    regular expressions compiled anew (the same values, drawn the same way, at a fraction of the CPU).
    """
    if id(param) not in _VALUES:
        _VALUES[id(param)] = (param, _value_of(param))
    return _VALUES[id(param)][1]


def _value_of(param: Param) -> st.SearchStrategy[Any]:
    c = param.constraints
    if param.choices:
        return st.sampled_from(param.choices)
    if param.type == "boolean":
        return st.booleans()
    if param.type == "integer":
        return st.integers(c.get("minimum"), c.get("maximum"))
    if param.type == "string":
        return _text(c)
    if param.type == "array":
        items = c["items"]
        element = st.sampled_from(items["enum"]) if "enum" in items else _text(items)
        return st.lists(
            element,
            min_size=c.get("minItems", 0),
            max_size=min(c.get("maxItems", 5), 5),
            unique=bool(c.get("uniqueItems")),
        )
    names = c.get("propertyNames", {})
    keys = _text({**names, "maxLength": min(names.get("maxLength", 20), 20)})
    if c.get("propertyNamesAnyCase"):  # the same names in another case are refused too
        keys = keys.filter(lambda k: re.search(names["pattern"], k.upper()) is not None)
    return st.dictionaries(
        keys,
        _text({"maxLength": 20}),
        max_size=4,
    )


def _condition(param: Param) -> When | None:
    return param.only_when or param.required_when


@st.composite
def valid_arguments(draw: st.DrawFn, tool: ToolSpec) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for p in tool.params:
        if _condition(p) is None and (p.required or draw(st.booleans())):
            args[p.name] = draw(value_of(p))
    seen = dict(args)
    for p in tool.params:
        if _condition(p) is None and p.name not in seen and "default" in p.constraints:
            seen[p.name] = p.constraints["default"]
    for p in tool.params:
        when = _condition(p)
        if when is None or not when.holds(seen):
            continue
        if p.required_when is not None or draw(st.booleans()):
            args[p.name] = draw(value_of(p))
    return args


TOOL = st.sampled_from(TOOLS)


@FUZZ
@given(st.data())
def test_generated_valid_arguments_pass_both_our_validation_and_the_published_schema(
    data: st.DataObject,
) -> None:
    tool = data.draw(TOOL, label="tool")
    args = data.draw(valid_arguments(tool), label="args")
    VALIDATORS[tool.name].validate(args)
    LISTED[tool.name].validate(args)
    result = validate(tool, args)
    assert {k: result[k] for k in args} == args
    VALIDATORS[tool.name].validate(result)


def _wrong_type(param: Param) -> st.SearchStrategy[Any]:
    if param.type == "integer":
        return (
            st.text(max_size=10) | st.booleans() | st.none() | st.floats(0.1, 0.9) | st.lists(st.integers())
        )
    if param.type == "boolean":
        return st.integers() | st.text(max_size=10) | st.none() | st.just("true")
    if param.type == "array":
        return (
            st.text(max_size=10)
            | st.integers()
            | st.dictionaries(st.text(max_size=3), st.integers())
            | st.none()
        )
    if param.type == "object":
        return st.lists(st.text(max_size=3)) | st.text(max_size=10) | st.integers() | st.none()
    return (
        st.integers()
        | st.booleans()
        | st.none()
        | st.lists(st.text(max_size=3))
        | st.dictionaries(st.text(max_size=3), st.integers())
    )


@st.composite
def broken_arguments(draw: st.DrawFn, tool: ToolSpec) -> tuple[dict[str, Any], str]:
    """Valid arguments with one thing broken, and the name of the argument a refusal must mention."""
    args = draw(valid_arguments(tool))
    params = list(tool.params)
    kinds = ["unknown"]
    if any(p.required for p in params):
        kinds.append("missing")
    if params:
        kinds.append("type")
    if any(p.type == "integer" for p in params):
        kinds.append("range")
    if any(p.choices for p in params):
        kinds.append("choice")
    if any(p.type == "string" and "maxLength" in p.constraints for p in params):
        kinds.append("long")
    kind = draw(st.sampled_from(kinds))
    if kind == "unknown":
        key = draw(st.text(min_size=1, max_size=300).filter(lambda k: k not in {p.name for p in params}))
        args[key] = draw(JSON_VALUES)
        return args, key
    if kind == "missing":
        p = draw(st.sampled_from([p for p in params if p.required]))
        args.pop(p.name, None)
        return args, p.name
    if kind == "type":
        p = draw(st.sampled_from(params))
        args[p.name] = draw(_wrong_type(p))
        return args, p.name
    if kind == "range":
        p = draw(st.sampled_from([p for p in params if p.type == "integer"]))
        lo, hi = p.constraints["minimum"], p.constraints["maximum"]
        # The listed schema leaves out a maximum no id reaches (2**53 - 1); our validation still
        # applies it (test_no_listed_schema_carries_a_meaningless_bound_and_validation_still_applies_it).
        above = st.integers(min_value=hi + 1) if hi < 2**31 else st.nothing()
        args[p.name] = draw(st.integers(max_value=lo - 1) | above)
        return args, p.name
    if kind == "choice":
        p = draw(st.sampled_from([p for p in params if p.choices]))
        args[p.name] = draw(st.text(max_size=40).filter(lambda s: s not in p.choices))
        return args, p.name
    p = draw(st.sampled_from([p for p in params if p.type == "string" and "maxLength" in p.constraints]))
    hi = p.constraints["maxLength"]
    args[p.name] = "a" * draw(st.sampled_from([hi + 1, hi * 2, 200_000]))
    return args, p.name


@FUZZ
@given(st.data())
def test_broken_arguments_are_refused_naming_the_argument(data: st.DataObject) -> None:
    tool = data.draw(TOOL, label="tool")
    args, name = data.draw(broken_arguments(tool), label="broken")
    assert not VALIDATORS[tool.name].is_valid(args)
    with pytest.raises(ArgumentError) as caught:
        validate(tool, args)
    message = str(caught.value)
    assert name[:100] in caught.value.arguments
    if name in {p.name for p in tool.params}:
        assert name in message
    else:  # an unknown key is shown escaped and cut short, never raw
        assert "unknown argument" in message
    assert len(message) < 1_000


@FUZZ
@given(st.data())
def test_anything_the_published_schema_refuses_is_refused_and_nothing_else_escapes(
    data: st.DataObject,
) -> None:
    tool = data.draw(TOOL, label="tool")
    names = [p.name for p in tool.params] or ["x"]
    args = data.draw(
        st.dictionaries(st.sampled_from(names) | st.text(max_size=5), JSON_VALUES, max_size=6), label="args"
    )
    try:
        validate(tool, args)
    except ArgumentError as e:
        assert 0 < len(str(e)) < 1_000
    else:
        assert VALIDATORS[tool.name].is_valid(args)


def _closed_list(param: Param) -> tuple[str, ...]:
    """The values a parameter takes when they are a closed list: an enum's, or an array of an enum's."""
    if param.choices:
        return param.choices
    return tuple(param.constraints.get("items", {}).get("enum", ())) if param.type == "array" else ()


# Every (tool, parameter) whose value is one of a closed list and that a call may have to give.
REQUIRED_CHOICES = [
    (tool, param)
    for tool in TOOLS
    for param in tool.params
    if _closed_list(param) and (param.required or param.required_when is not None)
]


def test_the_catalogue_has_required_arguments_with_a_closed_list_of_values() -> None:
    # The test below passes on an empty list: make sure it is the catalogue's, scope among them.
    named = {(tool.name, param.name) for tool, param in REQUIRED_CHOICES}
    assert {("list_secrets", "scope"), ("delete_registry", "scope"), ("set_log_level", "level")} <= named
    assert ("create_secret", "events") in named and ("create_forge", "type") in named


@FUZZ
@pytest.mark.parametrize(
    ("tool", "param"), REQUIRED_CHOICES, ids=[f"{t.name}.{p.name}" for t, p in REQUIRED_CHOICES]
)
@given(data=st.data())
def test_a_missing_argument_with_a_closed_list_of_values_is_refused_naming_every_value(
    tool: ToolSpec, param: Param, data: st.DataObject
) -> None:
    args = data.draw(valid_arguments(tool), label="args")
    assume(param.name in args)  # a conditional one is left out where its condition does not hold
    del args[param.name]
    with pytest.raises(ArgumentError) as caught:
        validate(tool, args)
    message = str(caught.value)
    assert caught.value.arguments == (param.name,), message  # the one problem: every other argument is valid
    for value in _closed_list(param):
        assert re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", message), (value, message)
