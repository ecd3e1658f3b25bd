"""What the Woodpecker tool declarations share: annotations, argument rules, common arguments and the two builders."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from domain.tools import Annotations, Arg, BodyField, Endpoint, GuardRule, Is, Param, Source, When
from domain.woodpecker.answers import Answer
from domain.woodpecker.asking import Builder
from domain.woodpecker.before_asking import BeforeAsking
from domain.woodpecker.plans import Plan
from domain.woodpecker.read_back import ReadBack
from domain.woodpecker.rules import HELD_EVENTS
from domain.woodpecker.tool import CurrentReads, Hint, WoodpeckerTool

# Every call leaves this process for the Woodpecker server, so open_world is true throughout.
READ = Annotations(read_only=True, destructive=False, idempotent=True, open_world=True)

# A repeat finds the work done: activating, cancelling, pausing, setting a level.
WRITE_IDEMPOTENT = Annotations(read_only=False, destructive=False, idempotent=True, open_world=True)

# Overwrites or removes stored state; a repeat changes nothing more.
WRITE_DESTRUCTIVE = Annotations(read_only=False, destructive=True, idempotent=True, open_world=True)

# Every call stores one more object.
WRITE_ADDS = Annotations(read_only=False, destructive=False, idempotent=False, open_world=True)

# Every call starts a build, and what a build does is written in the repository, not here.
WRITE_STARTS_BUILD = Annotations(read_only=False, destructive=True, idempotent=False, open_world=True)

# 2**53 - 1: the largest integer a JSON client is sure to carry without rounding.
MAX_ID = 9007199254740991

# Every event Woodpecker knows, in its own order: the ones it may hold for approval, then cron and manual.
EVENTS = (*HELD_EVENTS, "cron", "manual")

BRANCH_RULES: Mapping[str, Any] = {"minLength": 1, "maxLength": 250, "pattern": r"^[^\s\\~^:?*\[\]]+$"}


def id_param(
    name: str, description: str, *, required: bool = True, required_when: When | None = None
) -> Param:
    """A Woodpecker id; `required_when`: the condition under which it is required (see Param)."""
    return Param(
        name,
        "integer",
        required,
        description,
        constraints={"minimum": 1, "maximum": MAX_ID},
        required_when=required_when,
    )


def optional(param: Param) -> Param:
    """The same argument where it may be left out, as in an update that keeps what is not passed."""
    return replace(param, required=False)


def only_when(param: Param, condition: When) -> Param:
    """The same argument, accepted only under `condition` (see Param)."""
    return replace(param, only_when=condition)


CONFIRM_TOKEN = Param(
    "confirm_token",
    "string",
    False,
    "",
    constraints={"pattern": "^[0-9a-f]{32}$"},
    sensitive=True,
)

PAGE = Param(
    "page",
    "integer",
    False,
    "",
    constraints={"minimum": 1, "maximum": 10000, "default": 1},
)

PER_PAGE = Param(
    "per_page",
    "integer",
    False,
    "",
    constraints={"minimum": 1, "maximum": 50, "default": 50},
)

PAGING = (PAGE, PER_PAGE)

REPO_ID = id_param("repo_id", "Not owner/name (lookup_repository).")

NUMBER = id_param("number", "As in the UI; not the id.")

ORG_ID = id_param("org_id", "Not the name (lookup_organization).")

# Secrets and registries live at one of three levels; these three arguments pick it.
SCOPE = Param(
    "scope",
    "enum",
    True,
    "",
    choices=("repository", "organization", "global"),
)

SCOPE_REPO_ID = id_param(
    "repo_id", REPO_ID.description, required=False, required_when=Is("scope", "repository")
)

SCOPE_ORG_ID = id_param(
    "org_id", ORG_ID.description, required=False, required_when=Is("scope", "organization")
)

AT_SCOPE = (SCOPE, SCOPE_REPO_ID, SCOPE_ORG_ID)

PAGING_QUERY: Mapping[str, Source] = {"page": Arg("page"), "perPage": Arg("per_page")}

_LEVELS = (
    ("repository", "/api/repos/{repo_id}"),
    ("organization", "/api/orgs/{org_id}"),
    ("global", "/api"),
)


def at_each_level(
    method: str,
    path: str,
    *,
    step: str | None = None,
    query: Mapping[str, Source] | None = None,
    body: Mapping[str, BodyField] | None = None,
    success: int = 200,
) -> tuple[Endpoint, ...]:
    """One request per level (repository, organization, global) for `path` below the level's route."""
    return tuple(
        Endpoint(
            method,
            prefix + path,
            when=Is("scope", level),
            step=step,
            query=query or {},
            body=body or {},
            success=success,
        )
        for level, prefix in _LEVELS
    )


# The hint after a timeout of a call that starts a pipeline.
MAY_HAVE_STARTED = (
    "If the request timed out, a pipeline may have started anyway: check list_pipelines before retrying."
)


def asks_always(*targets: str, body_bound: bool = False) -> GuardRule:
    """A guard that asks on every call, bound to `targets` (and to the body when `body_bound`)."""
    return GuardRule("always", "Every call asks, whatever the arguments.", targets, body_bound, False)


def read_tool(
    name: str,
    *,
    group: str,
    description: str,
    answer: Answer,
    params: tuple[Param, ...] = (),
    endpoints: tuple[Endpoint, ...],
    notes: tuple[str, ...] = (),
    admin: str = "never",
    admin_when: str | None = None,
    essential: bool = False,
    untrusted_output: bool = False,
    hints: Mapping[str, Hint] | None = None,
    wildcard: str | None = None,
    plan: Plan | None = None,
) -> WoodpeckerTool:
    """A read tool: read-only annotations, never guarded."""
    declared = write_tool(
        name,
        group=group,
        annotations=READ,
        description=description,
        answer=answer,
        params=params,
        endpoints=endpoints,
        notes=notes,
        admin=admin,
        admin_when=admin_when,
        essential=essential,
        untrusted_output=untrusted_output,
        hints=hints,
        plan=plan,
    )
    return replace(declared, kind="read", wildcard=wildcard)


def write_tool(
    name: str,
    *,
    group: str,
    annotations: Annotations,
    description: str,
    answer: Answer,
    params: tuple[Param, ...] = (),
    endpoints: tuple[Endpoint, ...],
    notes: tuple[str, ...] = (),
    guard: GuardRule | None = None,
    question: Builder | None = None,
    why: str | None = None,
    admin: str = "never",
    admin_when: str | None = None,
    essential: bool = False,
    untrusted_output: bool = False,
    hints: Mapping[str, Hint] | None = None,
    changes: tuple[str, ...] = (),
    unsupported: tuple[str, str] | None = None,
    current: CurrentReads | None = None,
    plan: Plan | None = None,
    settled: ReadBack | None = None,
    before_asking: BeforeAsking | None = None,
) -> WoodpeckerTool:
    """A write tool, with its annotations and, when it asks a person, its guard rule, question and why."""
    return WoodpeckerTool(
        name=name,
        title=_title(name),
        group=group,
        kind="write",
        admin=admin,
        admin_when=admin_when,
        essential=essential,
        annotations=annotations,
        guard=guard,
        untrusted_output=untrusted_output,
        description=description,
        params=params,
        endpoints=endpoints,
        notes=notes,
        answer=answer,
        question=question,
        why=why,
        hints=hints or {},
        changes=changes,
        unsupported=unsupported,
        current=current,
        plan=plan,
        settled=settled,
        before_asking=before_asking,
    )


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()
