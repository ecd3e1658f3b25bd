"""A tool's arguments as JSON Schema, and their validation in pure Python: every refusal names the argument, the problem and the fix."""

import copy
import datetime
import difflib
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from domain.guard.fingerprint import CONFIRM_TOKEN_ARG
from domain.parsing.urls import BadUrl, Url, split_url
from domain.tools import Is, Param, ToolSpec, When

# The JSON Schema keywords of Param.constraints that the listed inputSchema carries: what a model
# can use to fill an argument in. The others (minLength, maxLength, pattern, maxItems,
# maxProperties, propertyNames) guard what reaches Woodpecker's URLs and bodies; validation
# applies them all, the listed schema leaves them out (docs/adr/0029: the tool list budget).
_SCHEMA_KEYS = (
    "minimum",
    "maximum",
    "format",
    "default",
    "minItems",
    "uniqueItems",
)
_ITEM_KEYS = ("type", "enum", "format")
# What `validate` also enforces, for `validation_schema` (tests hold the two to the same verdicts).
_GUARD_KEYS = ("minLength", "maxLength", "pattern", "maxItems", "maxProperties")
_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
}
# A maximum at or above this says nothing a model can use (ids are bounded at 2**53 - 1 only so
# that a JSON client carries them exactly, pages at 10,000 only to bound a request): validation
# still applies it, the listed schema leaves it out (see bench/tool_list_bytes.py).
_MEANINGLESS_MAXIMUM = 10_000
_MAX_PROBLEMS = 4
_MAX_MESSAGE = 900
_SHOW = 40

_RFC3339 = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|[+-]([0-9]{2}):([0-9]{2}))\Z"
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+\Z")


class ArgumentError(ValueError):
    """Arguments that do not fit a tool. `str(e)` says which argument, what is wrong and how to fix it;
    `arguments` lists the argument names involved (first problem first)."""

    def __init__(self, message: str, arguments: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.arguments = arguments


def _applies_when(param: Param) -> When | None:
    """The condition under which a parameter may be given at all. A parameter that is required
    under a scope is meaningless under the others, so it is refused there too rather than ignored."""
    return param.only_when or param.required_when


# ------------------------------------------------------------------------------------------- schema


def _words(when: When) -> str:
    """A condition in the fewest words a model reads right (`scope=repository`), for listed schemas."""
    return f"{when.name}={when.value}" if isinstance(when, Is) else when.describe()


def _describe(param: Param) -> str:
    text = param.description.rstrip()
    if param.required_when is not None:
        text += f" Required iff {_words(param.required_when)}."
    elif param.only_when is not None:
        text += f" Only if {_words(param.only_when)}."
    return text.strip()


def _sub_schema(spec: Mapping[str, Any], complete: bool) -> dict[str, Any]:
    schema = dict(spec) if complete else {k: spec[k] for k in _ITEM_KEYS if k in spec}
    if "enum" in schema and "type" not in schema:
        schema = {"type": "string", **schema}
    return schema


def _listed(key: str, value: Any, c: Mapping[str, Any]) -> bool:
    """Whether a constraint tells a model something (validation applies it either way)."""
    if key == "maximum":
        return bool(value < _MEANINGLESS_MAXIMUM)
    if key == "default" and value is False:
        return False  # a flag is off unless passed: no news either
    if key == "minimum":
        # An id's floor of 1 is no news; a floor that goes with a listed ceiling is part of a range.
        return not (value == 1 and c.get("maximum", _MEANINGLESS_MAXIMUM) >= _MEANINGLESS_MAXIMUM)
    return True


def _param_schema(param: Param, complete: bool) -> dict[str, Any]:
    c = param.constraints
    schema: dict[str, Any] = {}
    if param.type == "enum" or param.choices:
        schema["type"] = "string"
        schema["enum"] = list(param.choices)
    else:
        schema["type"] = _JSON_TYPES[param.type]
    description = _describe(param)
    if description:
        schema["description"] = description
    for key in _SCHEMA_KEYS:
        if key in c and (complete or _listed(key, c[key], c)):
            schema[key] = c[key]
    for key in _GUARD_KEYS if complete else ():
        if key in c:
            schema[key] = c[key]
    if "items" in c:
        schema["items"] = _sub_schema(c["items"], complete)
    if "additionalProperties" in c:
        extra = c["additionalProperties"]
        schema["additionalProperties"] = _sub_schema(extra, complete) if isinstance(extra, Mapping) else extra
    if complete and "propertyNames" in c:
        schema["propertyNames"] = dict(c["propertyNames"])
    return schema


def _object_schema(tool: ToolSpec, complete: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: _param_schema(p, complete) for p in tool.params},
    }
    required = [p.name for p in tool.params if p.required]
    if required or complete:
        schema["required"] = required
    if complete:
        schema["additionalProperties"] = False
    return copy.deepcopy(schema)  # a caller may change its copy; the catalogue stays as it is


def input_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's inputSchema as listed: one property per parameter, with what a model needs to fill
    it in. Cross-argument rules are stated in the descriptions, not as keywords; unknown arguments
    and everything the listed schema leaves out are still refused by `validate`."""
    return _object_schema(tool, complete=False)


def validation_schema(tool: ToolSpec) -> dict[str, Any]:
    """Every per-argument rule `validate` applies, as a closed JSON Schema (the cross-argument rules
    aside): what the listed `input_schema` loosens, for tests that hold the two to one verdict."""
    return _object_schema(tool, complete=True)


# --------------------------------------------------------------------------------------- validation


def show(value: Any, limit: int = _SHOW) -> str:
    """A value as JSON on one line, cut short, so a refusal never echoes a huge or multi-line input."""
    if isinstance(value, str):
        value = value[: limit + 1]  # never serialise more of a huge string than is shown
    elif isinstance(value, list | tuple | Mapping) and len(value) > limit:
        return f"an {'object' if isinstance(value, Mapping) else 'array'} of {len(value)} entries"
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (ValueError, TypeError, RecursionError):  # circular, exotic or absurdly deep values
        text = _kind(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    # A JSON Schema `$` means the end of the text; Python's also matches before a final newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _check_format(fmt: str, value: str) -> str | None:
    if fmt == "date-time":
        m = _RFC3339.match(value)
        if m:
            try:
                y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
                datetime.datetime(y, mo, d, h, mi, sec)
                if m.group(9) is None or (int(m.group(9)) < 24 and int(m.group(10)) < 60):
                    return None
            except ValueError:
                pass
        return "must be an RFC 3339 date-time such as 2026-08-01T12:00:00Z"
    if fmt == "email":
        return None if _EMAIL.match(value) else "must be an email address such as name@example.org"
    if fmt == "uri":
        try:
            parts: Url | None = split_url(value)
        except BadUrl:
            parts = None
        if parts is None or not parts.scheme or not parts.netloc:
            return "must be an absolute URL such as https://forge.example.org"
    return None


def _check_string(value: Any, spec: Mapping[str, Any]) -> str | None:
    if not isinstance(value, str):
        return f"must be a string, got {_kind(value)} ({show(value)})"
    lo, hi = spec.get("minLength"), spec.get("maxLength")
    if lo is not None and len(value) < lo:
        return "must not be empty" if lo == 1 else f"must have at least {lo} characters, got {len(value)}"
    if hi is not None and len(value) > hi:
        return f"is too long: {len(value)} characters, at most {hi} allowed"
    if "enum" in spec and value not in spec["enum"]:
        return f"must be one of {', '.join(spec['enum'])}; got {show(value)}"
    pattern = spec.get("pattern")
    if pattern is not None and not _regex(pattern).search(value):
        return f"does not have the expected form (pattern {pattern}); got {show(value)}"
    fmt = spec.get("format")
    if fmt is not None:
        problem = _check_format(fmt, value)
        if problem is not None:
            return f"{problem}; got {show(value)}"
    return None


def _check_integer(value: Any, spec: Mapping[str, Any]) -> tuple[str | None, Any]:
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        value = int(value)  # JSON has one number type; 12.0 is the integer 12
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be an integer, got {_kind(value)} ({show(value)})", value
    lo, hi = spec.get("minimum"), spec.get("maximum")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        if lo is not None and hi is not None:
            return f"must be between {lo} and {hi}, got {show(value)}", value
        if lo is not None:
            return f"must be at least {lo}, got {show(value)}", value
        return f"must be at most {hi}, got {show(value)}", value
    return None, value


def _check_array(value: Any, spec: Mapping[str, Any]) -> tuple[str | None, Any]:
    if not isinstance(value, list | tuple):
        return f"must be an array, got {_kind(value)} ({show(value)})", value
    lo, hi = spec.get("minItems"), spec.get("maxItems")
    if lo is not None and len(value) < lo:
        return f"must have at least {lo} item{'s' if lo != 1 else ''}, got {len(value)}", value
    if hi is not None and len(value) > hi:
        return f"has too many items: {len(value)}, at most {hi} allowed", value
    items = spec.get("items")
    if items is not None:
        for i, item in enumerate(value):
            problem = _check_string(item, items)
            if problem is not None:
                return f"item {i} {problem}", value
    if spec.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if item in seen:
                return f"lists {show(item)} twice; give each item once", value
            seen.append(item)
    return None, list(value)


def _check_object(value: Any, spec: Mapping[str, Any]) -> tuple[str | None, Any]:
    if not isinstance(value, Mapping):
        return f"must be an object, got {_kind(value)} ({show(value)})", value
    hi = spec.get("maxProperties")
    if hi is not None and len(value) > hi:
        return f"has too many keys: {len(value)}, at most {hi} allowed", value
    names = spec.get("propertyNames")
    extra = spec.get("additionalProperties")
    for key, item in value.items():
        if names is not None:
            problem = _check_string(key, names)
            if problem is None and spec.get("propertyNamesAnyCase") and _check_string(key.upper(), names):
                # An environment that ignores case (a Windows agent's) reads `ci_commit_sha` as CI_COMMIT_SHA.
                problem = (
                    f"is refused: where variable names ignore case (Windows agents) it is {show(key.upper())}, "
                    "which is refused"
                )
            if problem is not None:
                return f"key {show(key)} {problem}", value
        if isinstance(extra, Mapping):
            problem = _check_string(item, extra)
            if problem is not None:
                return f"value of key {show(key)} {problem}", value
    return None, dict(value)


def check_value(param: Param, value: Any) -> tuple[str | None, Any]:
    """(problem or None, normalised value) for one argument, without cross-argument rules.

    A sensitive argument's value (a secret, a password, a token) is never part of the problem.
    """
    problem, normalised = _check_value(param, value)
    if problem is not None and param.sensitive:
        problem = problem.replace(show(value), "a value that is not shown")
    return problem, normalised


def _check_value(param: Param, value: Any) -> tuple[str | None, Any]:
    spec = param.constraints
    if param.type == "enum" or param.choices:
        if not isinstance(value, str):
            return f"must be one of {', '.join(param.choices)}; got {_kind(value)} ({show(value)})", value
        if value not in param.choices:
            return f"must be one of {', '.join(param.choices)}; got {show(value)}", value
        return None, value
    if param.type == "string":
        problem = _check_string(value, spec)
        if problem is not None and "expected form" in problem and param.name == CONFIRM_TOKEN_ARG:
            # Its listed schema says nothing of it: a model that made one up learns here where one comes from.
            problem = (
                "is not a token this server issued (32 lower-case hex characters); call this tool again "
                "without confirm_token to get one, then pass it unchanged"
            )
        elif problem is not None and "expected form" in problem:
            problem += _brief(param)
        return problem, value
    if param.type == "integer":
        return _check_integer(value, spec)
    if param.type == "boolean":
        if not isinstance(value, bool):
            return f"must be true or false, got {_kind(value)} ({show(value)})", value
        return None, value
    if param.type == "array":
        return _check_array(value, spec)
    problem, normalised = _check_object(value, spec)
    if problem is not None and ("expected form" in problem or "ignore case" in problem):
        problem += _brief(param)
    return problem, normalised


def _message(tool: ToolSpec, problems: list[tuple[str, str]]) -> ArgumentError:
    text = f"Invalid arguments for {tool.name}: " + "; ".join(p for _, p in problems[:_MAX_PROBLEMS])
    if len(problems) > _MAX_PROBLEMS:
        text += f"; and {len(problems) - _MAX_PROBLEMS} more"
    text += "."
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 1] + "…"
    return ArgumentError(text, tuple(name for name, _ in problems))


def _unknown(tool: ToolSpec, key: Any) -> str:
    names = [p.name for p in tool.params]
    shown = show(key) if isinstance(key, str) else show(str(key))
    close = difflib.get_close_matches(str(key)[:100], names, n=1) if isinstance(key, str) else []
    hint = f"did you mean {close[0]}? " if close else ""
    valid = ", ".join(names) if names else "none: call it with {}"
    return f"unknown argument {shown}: {hint}remove it (valid arguments: {valid})"


def validate(tool: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments checked against the tool and normalised: defaults applied (a default is
    applied only where its parameter may be given), keys in catalogue order.

    Raises:
        ArgumentError: unknown, missing, mistyped, out-of-range or misplaced arguments.
    """
    arguments = _an_object(tool, arguments)
    known = {p.name for p in tool.params}
    problems: list[tuple[str, str]] = []
    for key in arguments:
        if key not in known:
            problems.append((str(key)[:100], _unknown(tool, key)))
    values: dict[str, Any] = {}
    for param in tool.params:
        if param.name not in arguments:
            if param.required:
                problems.append(
                    (param.name, f"missing required argument {param.name}{_brief(param, allowed=True)}")
                )
            continue
        problem, value = check_value(param, arguments[param.name])
        if problem is not None:
            problems.append((param.name, f"{param.name} {problem}"))
        else:
            values[param.name] = value
    if problems:
        raise _message(tool, problems)

    # Defaults of unconditional parameters first: conditions read them (list_repositories' scope).
    for param in tool.params:
        if param.name not in values and "default" in param.constraints and _applies_when(param) is None:
            values[param.name] = param.constraints["default"]
    for param in tool.params:
        required_when = param.required_when
        applies = _applies_when(param)
        if applies is None:
            continue
        if applies.holds(values):
            if param.name not in values:
                if "default" in param.constraints:
                    values[param.name] = param.constraints["default"]
                elif required_when is not None:
                    problems.append(
                        (
                            param.name,
                            f"{param.name} is required when {required_when.describe()}; add it"
                            f"{_brief(param, allowed=True)}",
                        )
                    )
        elif param.name in arguments:
            problems.append((param.name, _misplaced(param, applies, values)))
    if problems:
        raise _message(tool, problems)
    return {p.name: values[p.name] for p in tool.params if p.name in values}


def _an_object(tool: ToolSpec, arguments: Any) -> Mapping[str, Any]:
    """The arguments as an object (none: an empty one), or the error that says to send one."""
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        # A string is mostly the arguments as JSON text, passed on by a client that did not parse them.
        fix = ": send the object itself, not JSON inside a string" if isinstance(arguments, str) else ""
        raise ArgumentError(
            f"Invalid arguments for {tool.name}: the arguments must be a JSON object with one member per "
            f"argument, got {_kind(arguments)}{fix}."
        )
    return arguments


def _misplaced(param: Param, applies: When, values: Mapping[str, Any]) -> str:
    if not isinstance(applies, Is):
        return f"{param.name} is only accepted when {applies.describe()}; remove it"
    current = values.get(applies.name)
    now = f"{applies.name} is {show(current)}" if current is not None else f"{applies.name} is not given"
    return (
        f"{param.name} applies only when {applies.describe()}, but {now}; remove {param.name} "
        f"or set {applies.name} to '{applies.value}'"
    )


def _brief(param: Param, *, allowed: bool = False) -> str:
    """The first sentence of the parameter's description, in parentheses after a space; "" without one.

    `allowed`: for an argument that is missing, also the values it takes when they are a closed list
    (an enum, or an array of an enum's values), so that one more call can supply it.
    """
    first = param.description.split(". ")[0].rstrip(".")
    parts = [first if len(first) <= 100 else first[:99] + "…"] if first else []
    if allowed:
        parts += _allowed(param)
    return f" ({'; '.join(parts)})" if parts else ""


def _allowed(param: Param) -> list[str]:
    if param.type == "enum" or param.choices:
        return [f"one of {', '.join(param.choices)}"]
    items = param.constraints.get("items", {})
    if param.type == "array" and isinstance(items, Mapping) and items.get("enum"):
        return [f"any of {', '.join(items['enum'])}"]
    return []
