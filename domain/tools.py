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


# ------------------------------------------------------------------- conditions on the arguments


@dataclass(frozen=True, slots=True)
class Is:
    """The argument `name` has the value `value`."""

    name: str
    value: str

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        return arguments.get(self.name) == self.value

    def describe(self) -> str:
        return f"{self.name} is '{self.value}'"

    def __str__(self) -> str:
        return f"{self.name} == '{self.value}'"


@dataclass(frozen=True, slots=True)
class Passed:
    """The argument `name` is given."""

    name: str

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        return self.name in arguments

    def describe(self) -> str:
        return f"{self.name} is passed"

    __str__ = describe


@dataclass(frozen=True, slots=True)
class Omitted:
    """The argument `name` is left out."""

    name: str

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        return self.name not in arguments

    def describe(self) -> str:
        return f"{self.name} is omitted"

    __str__ = describe


When = Is | Passed | Omitted


@dataclass(frozen=True, slots=True)
class Param:
    """One tool argument.

    `type` is "enum" when `choices` is set. `sensitive` marks a value that may be a secret
    (a secret's content, a password, a confirmation token): it is never echoed back. `constraints` holds JSON-Schema-like keys
    (minimum, maximum, minLength, maxLength, pattern, format, default, items, minItems,
    maxItems, uniqueItems, additionalProperties, propertyNames, maxProperties).
    `required_when`: the argument is required exactly when this condition on another argument
    holds (and refused when it does not); `only_when`: accepted only when it holds. `str()` of a
    condition is the shared catalogue's own wording (`scope == 'repository'`).
    """

    name: str
    type: ParamType
    required: bool
    description: str
    choices: tuple[str, ...] = ()
    constraints: Mapping[str, Any] = field(default_factory=dict)
    sensitive: bool = False
    required_when: When | None = None
    only_when: When | None = None


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


# ------------------------------------------------------------- where a request's values come from


@dataclass(frozen=True, slots=True)
class Arg:
    """The value of the argument `name`, left out when the call does not pass it. In a query a
    boolean goes as "true" when true and is left out when false (flags are off unless "true")."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Fixed:
    """A value every request carries, whatever the arguments."""

    value: str | bool | int

    def __str__(self) -> str:
        return "true" if self.value is True else "false" if self.value is False else str(self.value)


@dataclass(frozen=True, slots=True)
class Merged:
    """The argument `name` when passed, else the stored record's value: the tool's plan reads the
    record and builds this body (an update Woodpecker applies as a whole, never field by field)."""

    name: str

    def __str__(self) -> str:
        return f"{self.name} (merged over the stored record)"


Source = Arg | Fixed | Merged
# A body field is a value, or an object of values (Woodpecker's nested `trusted: {network, ...}`).
BodyField = Source | Mapping[str, Source]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One upstream request a tool makes.

    `when` picks it among the tool's alternatives (one per scope, say); `step` marks a request
    beyond the main one (a read before a write, a read-back after it) and says when it is sent,
    for people: a step is never picked as the main request, the tool's plan sends it. `query`
    and `body` map each key on the wire to where its value comes from.
    """

    method: str
    path: str
    when: When | None = None
    step: str | None = None
    root: bool = False
    query: Mapping[str, Source] = field(default_factory=dict)
    body: Mapping[str, BodyField] = field(default_factory=dict)
    success: int = 200

    def picked_by(self, arguments: Mapping[str, Any]) -> bool:
        """Whether this is the tool's main request for these arguments."""
        return self.step is None and (self.when is None or self.when.holds(arguments))


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """What the operator's policy file adds to a tool (docs/adr/0079). It only tightens.

    `deny`: every call is refused before anything is asked or sent. `ask_always`: every call asks
    a person, reads included (`domain.guard.policy.decide`). `expires_in`: the life, in seconds, of
    this tool's questions, seals, tickets and tokens, never longer than their defaults (None: the
    defaults). `four_eyes`: the approver of its questions must be someone other than the caller
    (OAuth mode's signed-in page, ADR 0084). The policy file's rules are `domain.guard.policy_file`.
    """

    deny: bool = False
    ask_always: bool = False
    expires_in: int | None = None
    four_eyes: bool = False


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
    # The operator's policy for this tool (WOODPECKER_MCP_POLICY); None: no rule names it.
    policy: ToolPolicy | None = None

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
