"""Validated tool arguments turned into Woodpecker requests: paths escaped per segment, query and body mapped, partial updates merged over the stored record so no field is blanked."""

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import quote, unquote

from domain.arguments import ArgumentError, show
from domain.tools import BodyField, Endpoint, Fixed, Source, ToolSpec
from domain.woodpecker.tool import woodpecker

if TYPE_CHECKING:
    from domain.woodpecker.tool import GuardRead

Method = Literal["GET", "POST", "PATCH", "DELETE"]


@dataclass(frozen=True, slots=True)
class Request:
    """One planned request, as the planner makes it and the gateway sends it (the one type for
    both). `path` is complete (ids filled in, each segment escaped) and starts with "/api/" or,
    for the root routes, is "/version" or "/healthz"."""

    method: Method
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    body: Any = None

    @property
    def root(self) -> bool:
        """Served at the server root (/version, /healthz), sent without a credential."""
        return not self.path.startswith("/api/")

    @property
    def idempotent_read(self) -> bool:
        """A GET: the gateway may retry it; writes are never retried."""
        return self.method == "GET"


_PATH_PARAM = re.compile(r"\{(\w+)\}")
# How often a value is percent-decoded when looking for a dot segment: a proxy that decodes
# twice is broken, but it exists, and a name never needs "%252e" to be a name.
_DECODE_ROUNDS = 3


def path_params(tool: ToolSpec) -> tuple[str, ...]:
    """The tool's string arguments that become part of a request path, in catalogue order."""
    named = {name for endpoint in tool.endpoints for name in _PATH_PARAM.findall(endpoint.path)}
    return tuple(p.name for p in tool.params if p.name in named and p.type == "string")


def is_path_step(value: str) -> bool:
    """Whether `value` holds a segment an HTTP client, a proxy or a server would fold or drop:
    ".", "..", or an empty one, also once percent-decoded, Unicode-normalised (a fullwidth or
    leader dot) or split at a backslash (which some servers read as a slash)."""
    text = value
    for _ in range(_DECODE_ROUNDS):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    for form in {text, unicodedata.normalize("NFKC", text)}:
        if any(part in ("", ".", "..") for part in re.split(r"[/\\]", form)):
            return True
    return False


def check_path_values(tool: ToolSpec, args: Mapping[str, Any]) -> None:
    """Refuse a path argument that is (or holds) a dot segment or an empty one, before anything else.

    `/api/repos/1/secrets/..` *is* `/api/repos/1` once any HTTP client or proxy has read it: an
    approval for a secret would delete the repository. Not a name Woodpecker can hold, so never sent.

    Raises:
        ArgumentError: naming the argument.
    """
    for name in path_params(tool):
        value = args.get(name)
        if isinstance(value, str) and is_path_step(value):
            raise ArgumentError(
                f"Invalid arguments for {tool.name}: {name} must not be '.', '..' or empty, nor hold such "
                "a segment between slashes (also percent-encoded): it would not name an object but move "
                f"the request to another route; got {show(value)}.",
                (name,),
            )


def check(tool: ToolSpec, args: Mapping[str, Any]) -> None:
    """Woodpecker rules beyond the schema, checked before anything is asked or sent.

    Raises:
        ArgumentError: an update with nothing to change, or an argument Woodpecker would discard.
    """
    declared = woodpecker(tool)
    unsupported = declared.unsupported
    if unsupported is not None and unsupported[0] in args:
        name, why = unsupported
        raise ArgumentError(
            f"Invalid arguments for {tool.name}: {name} is not supported by Woodpecker's API ({why}); "
            f"remove {name} and call again.",
            (name,),
        )
    if args.get("from_line", -1) > args.get("to_line", 2**63):
        raise ArgumentError(
            f"Invalid arguments for {tool.name}: from_line ({args['from_line']}) is after to_line "
            f"({args['to_line']}); pass from_line <= to_line.",
            ("from_line", "to_line"),
        )
    own = declared.arguments_check(args) if declared.arguments_check is not None else None
    if own is not None:
        raise ArgumentError(f"Invalid arguments for {tool.name}: {own}")
    changes = declared.changes
    if changes and not any(name in args for name in changes):
        raise ArgumentError(
            f"Invalid arguments for {tool.name}: nothing to change; pass at least one of {', '.join(changes)}.",
            changes,
        )


def segment(value: Any) -> str:
    """One path segment, every reserved character escaped (a registry address keeps its slashes inside).

    Raises:
        ArgumentError: a dot segment or an empty one (a last line behind `check_path_values`).
    """
    text = str(value)
    if is_path_step(text):
        raise ArgumentError(
            f"{show(text)} cannot be a path segment: it would move the request to another route."
        )
    return quote(text, safe="")


def fill(template: str, args: Mapping[str, Any], wildcard: str | None = None) -> str:
    """The template with `{name}` replaced by the escaped argument."""
    path = template
    for name, value in args.items():
        token = "{" + name + "}"
        if token not in path:
            continue
        if name == wildcard:
            text = "/".join(segment(part) for part in str(value).split("/"))
        else:
            text = segment(value)
        path = path.replace(token, text)
    if "{" in path:
        raise ValueError(f"unfilled path parameter in {template}")  # a catalogue or planning bug
    return path


def _query_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else None  # Woodpecker's flags are off unless "true"
    return str(value)


def _value(source: Source, args: Mapping[str, Any]) -> tuple[bool, Any]:
    """Whether the request carries this value, and the value. From the arguments alone a merged
    field is the argument; the tool's plan merges it over the stored record."""
    if isinstance(source, Fixed):
        return True, source.value
    return source.name in args, args.get(source.name)


def _query(endpoint: Endpoint, args: Mapping[str, Any]) -> dict[str, str]:
    query: dict[str, str] = {}
    for key, source in endpoint.query.items():
        present, value = _value(source, args)
        text = _query_value(value) if present else None
        if text is not None:
            query[key] = text
    return query


def _fields(fields: Mapping[str, BodyField], args: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key, source in fields.items():
        if isinstance(source, Mapping):
            inner = _fields(source, args)
            if inner:
                body[key] = inner
            continue
        present, value = _value(source, args)
        if present:
            body[key] = value
    return body


def _body(endpoint: Endpoint, args: Mapping[str, Any]) -> dict[str, Any] | None:
    return _fields(endpoint.body, args) if endpoint.body else None


def _picked(tool: ToolSpec, args: Mapping[str, Any]) -> Endpoint | None:
    return next((endpoint for endpoint in tool.endpoints if endpoint.picked_by(args)), None)


def main_endpoint(tool: ToolSpec, args: Mapping[str, Any]) -> Endpoint:
    """The endpoint that does the tool's work for these arguments (scope dispatch included)."""
    endpoint = _picked(tool, args)
    if endpoint is None:
        raise ValueError(f"{tool.name}: no endpoint for these arguments")  # validation prevents this
    return endpoint


def plan(tool: ToolSpec, args: Mapping[str, Any]) -> Request:
    """The tool's main request, straight from its catalogue endpoint."""
    endpoint = main_endpoint(tool, args)
    return Request(
        cast(Method, endpoint.method),
        fill(endpoint.path, args, woodpecker(tool).wildcard),
        _query(endpoint, args),
        _body(endpoint, args),
    )


def organization_addressed(tool: ToolSpec, args: Mapping[str, Any]) -> int | None:
    """The organization whose routes (`/api/orgs/{org_id}/...`) the call's main request takes, or None.

    Woodpecker 3.17 loads the organization of such a route with a lookup that, for an id it does not
    hold, gives an empty organization (id 0) instead of a 404, and an admin passes on with it: every
    secret and registry of a repository or of the instance has org_id 0, so a read there lists them,
    a write there reaches them, and deleting that organization deletes every one of its secrets.
    The call may go ahead only once `organization(org_id)` answers an object with that id."""
    main = _picked(tool, args)  # None for a tool whose plan sends its own requests (resolve)
    if main is None or not main.path.startswith("/api/orgs/{org_id}"):
        return None
    org_id = args.get("org_id")
    return org_id if isinstance(org_id, int) and not isinstance(org_id, bool) else None


def organization(org_id: int) -> Request:
    return Request("GET", f"/api/orgs/{segment(org_id)}")


def is_organization(answer: Any, org_id: int) -> bool:
    """Whether `organization(org_id)` answered that organization (not the empty one of a missing id)."""
    return (
        isinstance(answer, Mapping) and answer.get("id") == org_id and not isinstance(answer.get("id"), bool)
    )


# --------------------------------------------------------------------------- reads before a write


def scoped(kind: str, args: Mapping[str, Any], key: str) -> str:
    """The path of one secret or registry (`kind`) named by `args[key]`, at the call's scope."""
    scope = args["scope"]
    if scope == "repository":
        base = f"/api/repos/{segment(args['repo_id'])}/{kind}"
    elif scope == "organization":
        base = f"/api/orgs/{segment(args['org_id'])}/{kind}"
    else:
        base = f"/api/{kind}"
    return f"{base}/{segment(args[key])}"


def current_for_guard(tool: ToolSpec, args: Mapping[str, Any]) -> "Request | Mapping[str, GuardRead] | None":
    """The read a conditional guard compares against (the tool declares it), or None when no
    comparing field is present. A mapping names several reads; the guard then gets one object with
    each answer under its key."""
    reads = woodpecker(tool).current
    return reads(args) if reads is not None else None


def repository(repo_id: int) -> Request:
    return Request("GET", f"/api/repos/{segment(repo_id)}")


def lookup_repository(full_name: str) -> Request:
    """The repository by its full name (a wildcard route: its slashes travel literally)."""
    return Request("GET", fill("/api/repos/lookup/{full_name}", {"full_name": full_name}, "full_name"))


def pipeline(args: Mapping[str, Any]) -> Request:
    return Request("GET", f"/api/repos/{segment(args['repo_id'])}/pipelines/{segment(args['number'])}")


def step_log_path(args: Mapping[str, Any]) -> str:
    return f"/api/repos/{segment(args['repo_id'])}/logs/{segment(args['number'])}/{segment(args['step_id'])}"


# ------------------------------------------------------------------------------------- merging


def record(current: Any, what: str) -> Mapping[str, Any]:
    """A stored record read before an update; raises ValueError when it is not an object."""
    if not isinstance(current, Mapping):
        raise ValueError(f"the stored {what} is not an object")
    return current
