"""The WorkflowSyntax port: ruamel.yaml reads the YAML (1.2, as Woodpecker's go-yaml does), jsonschema
checks it against the Woodpecker schema that check-jsonschema vendors (docs/adr/0071).

The schema is read from the installed check-jsonschema distribution's files, without importing the
package (its import loads its command line, about 1.5 s), once, at the first check. ruamel.yaml and
jsonschema are imported at the first call too: a server that never checks a config never loads them
(start-up, docs/adr/0052).
"""

import datetime
import json
from collections.abc import Iterator
from functools import cached_property
from importlib import metadata
from typing import TYPE_CHECKING, Any

from domain.woodpecker.workflow_lint import Mark, Parsed, Path, SchemaFault, YamlFault

if TYPE_CHECKING:
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import ValidationError

SCHEMA_FILE = "check_jsonschema/builtin_schemas/vendor/woodpecker-ci.json"
_COMPOSITION = ("oneOf", "anyOf")


def vendored_schema() -> dict[str, Any]:
    """Woodpecker's schema as the installed check-jsonschema vendors it."""
    found = metadata.distribution("check-jsonschema").locate_file(SCHEMA_FILE)
    return dict(json.loads(found.read_text()))


class RuamelWorkflowSyntax:
    def __init__(self, schema: dict[str, Any] | None = None) -> None:
        self._schema = schema

    @cached_property
    def _validator(self) -> "Draft7Validator":
        from jsonschema import Draft7Validator

        return Draft7Validator(self._schema if self._schema is not None else vendored_schema())

    def parse(self, text: str) -> Parsed | YamlFault:
        from ruamel.yaml import YAML
        from ruamel.yaml.constructor import DuplicateKeyError
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        yaml = YAML(typ="rt", pure=True)
        try:
            loaded = yaml.load(text)
        except DuplicateKeyError as e:
            # ruamel's own words quote both values (kilobytes of a file, and values stay out of messages).
            return _duplicate(yaml, text, e.problem_mark)
        except MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            return YamlFault(line, column, str(e.problem or e.context or "not valid YAML").strip())
        except YAMLError as e:
            return YamlFault(1, 1, str(e).splitlines()[0] if str(e) else "not valid YAML")
        values: dict[Path, Mark] = {(): Mark(1, 1)}
        keys: dict[Path, Mark] = {}
        document = _plain(loaded, (), values, keys)
        return Parsed(document, values, keys, text)

    def schema_faults(self, document: Any) -> tuple[SchemaFault, ...]:
        return tuple(_faults(self._validator.iter_errors(document)))


def _duplicate(yaml: Any, text: str, mark: Any) -> YamlFault:
    """Where a key is written a second time, and where it was first."""
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    found = _find_duplicate(yaml.compose(text), (), line, column) if mark is not None else None
    if found is None:
        return YamlFault(line, column, f"duplicate key at line {line}", "duplicate_key")
    first, path = found
    return YamlFault(
        line, column, f"duplicate key at line {line}; first defined at line {first}", "duplicate_key", path
    )


def _find_duplicate(node: Any, path: Path, line: int, column: int) -> tuple[int, Path] | None:
    """The first line of the key written again at `line`, `column`, and the path of that key."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if isinstance(node, MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, ScalarNode) else None
            if name is not None:
                if (key.start_mark.line + 1, key.start_mark.column + 1) == (line, column) and name in seen:
                    return seen[name], path + (name,)
                seen.setdefault(name, key.start_mark.line + 1)
            found = _find_duplicate(value, path + ((name if name is not None else "?"),), line, column)
            if found is not None:
                return found
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            found = _find_duplicate(item, path + (i,), line, column)
            if found is not None:
                return found
    return None


def _plain(node: Any, path: Path, values: dict[Path, Mark], keys: dict[Path, Mark]) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            name = _scalar(key) if not isinstance(key, CommentedMap | CommentedSeq) else str(key)
            name = (
                "true"
                if name is True
                else "false"
                if name is False
                else "null"
                if name is None
                else str(name)
            )
            at = path + (name,)
            try:
                k_line, k_col = node.lc.key(key)
                keys[at] = Mark(k_line + 1, k_col + 1)
                v_line, v_col = node.lc.value(key)
                values[at] = Mark(v_line + 1, v_col + 1)
            except (KeyError, TypeError, AttributeError):  # a merged key has no place of its own
                pass
            out[name] = _plain(value, at, values, keys)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for i, value in enumerate(node):
            at = path + (i,)
            try:
                line, col = node.lc.item(i)
                values[at] = Mark(line + 1, col + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            items.append(_plain(value, at, values, keys))
        return items
    return _scalar(node)


def _scalar(value: Any) -> Any:
    """ruamel's round-trip scalars as the plain values JSON has (dates as the text go-yaml gives)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    return str(value)


def _faults(errors: Iterator["ValidationError"]) -> Iterator[SchemaFault]:
    for error in errors:
        if error.validator in _COMPOSITION and error.context:
            # As Woodpecker's filter keeps them: the errors of the alternative that came closest.
            yield from _faults(iter(_closest(error.context)))
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            path: Path = tuple(error.absolute_path)
            for key in (k for k in error.instance if k not in allowed):  # one each, as gojsonschema says them
                yield SchemaFault(
                    path + (key,), "additionalProperties", "Additional property is not allowed", True
                )
        else:
            yield _fault(error)


def _closest(context: list["ValidationError"]) -> list["ValidationError"]:
    """The alternative whose kind of value matches (no `type` error at the value itself), with the
    fewest errors, the first on a tie: the one gojsonschema scores best, whose errors Woodpecker keeps."""
    by_alternative: dict[int, list[ValidationError]] = {}
    for e in context:
        by_alternative.setdefault(int(e.relative_schema_path[0]), []).append(e)

    def score(item: tuple[int, list["ValidationError"]]) -> tuple[bool, int, int, int]:
        index, errors = item
        mismatched = any(e.validator == "type" and not e.relative_path for e in errors)
        # One that got inside the value (an item of a list) came closer than one refusing it whole.
        depth = min(len(e.relative_path) for e in errors)
        return (mismatched, -depth, len(errors), index)

    return min(by_alternative.items(), key=score)[1]


def _fault(error: "ValidationError") -> SchemaFault:
    path: Path = tuple(error.absolute_path)
    keyword = str(error.validator)
    expected = error.validator_value
    if keyword == "required":
        missing = [k for k in expected if isinstance(error.instance, dict) and k not in error.instance]
        return SchemaFault(path, keyword, f"{missing[0] if missing else 'a key'} is required")
    if keyword == "enum":
        return SchemaFault(
            path, keyword, "must be one of the following: " + ", ".join(json.dumps(v) for v in expected)
        )
    if keyword == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return SchemaFault(path, keyword, "Invalid type. Expected: " + " or ".join(str(k) for k in kinds))
    if keyword == "const":
        return SchemaFault(path, keyword, f"must be {json.dumps(expected)}")
    return SchemaFault(
        path, keyword, f"does not match the schema's `{keyword}`: {json.dumps(expected)[:200]}"
    )
