"""What a tool is, as data: parameters, annotations, guard rule. Knows no forge and no transport."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ParamType = Literal["string", "integer", "boolean", "array", "object", "enum"]
Kind = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class Annotations:
    """The four MCP tool annotations. Hints for a client, never enforcement."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


@dataclass(frozen=True, slots=True)
class Param:
    """One tool argument.

    `type` is "enum" when `choices` is set. `sensitive` marks a value that may be a secret
    (a secret's content, a password, a confirmation token): it is never echoed back. `constraints` holds JSON-Schema-like keys
    (minimum, maximum, minLength, maxLength, pattern, format, default, items, minItems,
    maxItems, uniqueItems, additionalProperties, propertyNames, maxProperties) plus two
    of our own: `required_when` and `only_when`, conditions on another argument written
    as `"<name> == '<value>'"`, `"<name> is passed"` or `"<name> is omitted"`.
    """

    name: str
    type: ParamType
    required: bool
    description: str
    choices: tuple[str, ...] = ()
    constraints: Mapping[str, Any] = field(default_factory=dict)
    sensitive: bool = False


@dataclass(frozen=True, slots=True)
class GuardRule:
    """When a tool asks a person, and what an approval is bound to.

    `when` is "always" or the name of a condition the forge's rule set defines.
    `targets` are argument names in the order the tool names them (never sorted).
    `body_bound`: the canonical request body is part of the fingerprint too.
    `needs_current_state`: deciding may need the stored object (read only when a
    comparing field is present).
    """

    when: str
    condition: str
    targets: tuple[str, ...]
    body_bound: bool
    needs_current_state: bool

    @property
    def always(self) -> bool:
        return self.when == "always"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One upstream request a tool may make (documentation and contract tests)."""

    method: str
    path: str
    when: str | None = None
    root: bool = False
    query: Mapping[str, str] = field(default_factory=dict)
    body: tuple[str, ...] = ()
    success: int = 200


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    group: str
    kind: Kind
    admin: str
    admin_when: str | None
    essential: bool
    annotations: Annotations
    guard: GuardRule | None
    untrusted_output: bool
    description: str
    params: tuple[Param, ...]
    endpoints: tuple[Endpoint, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def is_read(self) -> bool:
        return self.kind == "read"

    @property
    def guarded(self) -> bool:
        return self.guard is not None


@dataclass(frozen=True, slots=True)
class Catalogue:
    """An ordered, immutable set of tools, looked up by name."""

    tools: tuple[ToolSpec, ...]

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError("tool names must be unique")

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return any(t.name == name for t in self.tools)

    def get(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)
