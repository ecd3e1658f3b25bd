"""Helpers every handler module shares: pagination, null-or-list, strict body field readers, Go-style ints."""

import re
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from starlette.datastructures import QueryParams
from starlette.responses import Response

from sandbox.http import BadBody, json_response

T = TypeVar("T")
MAX_PAGE_SIZE = 50
_GO_INT = re.compile(r"^[+-]?\d+$")


def go_int(value: str | None) -> int | None:
    """strconv.ParseInt(value, 10, 64): digits with an optional sign, nothing else."""
    if value is None or not _GO_INT.match(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


def go_bool(value: str | None) -> bool:
    """strconv.ParseBool with the error ignored (as Woodpecker does): unknown text is false."""
    return value in ("1", "t", "T", "TRUE", "true", "True")


def paginate(query: QueryParams, items: Sequence[T]) -> list[T]:
    """session.Pagination: page < 1 or garbage -> 1; perPage < 1, > 50 or garbage -> 50."""
    page = go_int(query.get("page"))
    per_page = go_int(query.get("perPage"))
    if page is None or page < 1:
        page = 1
    if per_page is None or per_page < 1 or per_page > MAX_PAGE_SIZE:
        per_page = MAX_PAGE_SIZE
    start = (page - 1) * per_page
    return list(items[start : start + per_page])


class HasApi(Protocol):
    def api(self) -> Any: ...


def answer(found: HasApi | Response) -> Response:
    """A finder's result as the route's answer: its error response as is, else the row's API JSON."""
    return found if isinstance(found, Response) else json_response(found.api())


def null_if_empty(items: list[Any]) -> list[Any] | None:
    """xorm's Find into a nil slice: an empty result is JSON null, not []."""
    return items or None


def field_str(body: dict[str, Any], key: str, default: str = "") -> str:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise BadBody(
            f"json: cannot unmarshal {type(value).__name__} into Go struct field .{key} of type string"
        )
    return value


def field_opt_str(body: dict[str, Any], key: str) -> str | None:
    """A *string field: absent or null -> None."""
    if body.get(key) is None:
        return None
    return field_str(body, key)


def field_bool(body: dict[str, Any], key: str, default: bool = False) -> bool:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadBody(f"json: cannot unmarshal into Go struct field .{key} of type bool")
    return value


def field_opt_bool(body: dict[str, Any], key: str) -> bool | None:
    if body.get(key) is None:
        return None
    return field_bool(body, key)


def field_int(body: dict[str, Any], key: str, default: int = 0) -> int:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadBody(f"json: cannot unmarshal into Go struct field .{key} of type int64")
    return value


def field_opt_int(body: dict[str, Any], key: str) -> int | None:
    if body.get(key) is None:
        return None
    return field_int(body, key)


def field_str_list(body: dict[str, Any], key: str) -> list[str] | None:
    """A []string field: absent or null -> None (Go nil)."""
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadBody(f"json: cannot unmarshal into Go struct field .{key} of type []string")
    return list(value)


def field_str_map(body: dict[str, Any], key: str) -> dict[str, str] | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadBody(f"json: cannot unmarshal into Go struct field .{key} of type map[string]string")
    return dict(value)
