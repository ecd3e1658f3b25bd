"""Secrets at the repository, organization or global level; their values are never returned."""

from collections.abc import Mapping
from typing import Any

from domain.tools import Arg, Endpoint, GuardRule, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, because
from domain.woodpecker.catalogue.common import (
    AT_SCOPE,
    CONFIRM_TOKEN,
    EVENTS,
    PAGING,
    PAGING_QUERY,
    WRITE_ADDS,
    WRITE_DESTRUCTIVE,
    asks_always,
    at_each_level,
    read_tool,
    write_tool,
)
from domain.woodpecker.requests import Request, scoped, segment
from domain.woodpecker.tool import Read

_SECRET_EVENTS_RULES: Mapping[str, Any] = {
    "items": {"enum": list(EVENTS)},
    "minItems": 1,
    "maxItems": 9,
    "uniqueItems": True,
}

_IMAGES_RULES: Mapping[str, Any] = {
    "items": {"type": "string", "minLength": 1, "maxLength": 200},
    "maxItems": 50,
}

_SECRET_NAME = Param(
    "name",
    "string",
    True,
    "Case-sensitive.",
    constraints={"minLength": 1, "maxLength": 100, "pattern": r"^(?!\.\.?$)[A-Za-z0-9_.-]+$"},
)


def _secret_before_update(args: Mapping[str, Any]) -> Mapping[str, Request | Read] | None:
    """The stored secret, when events or images is passed (the guard compares the lists); and, when
    events names manual or cron for a repository secret, its repository's approval settings (a failed
    read of those counts as requiring approval)."""
    if "events" not in args and "images" not in args:
        return None
    reads: dict[str, Request | Read] = {"secret": Request("GET", scoped("secrets", args, "name"))}
    events = args.get("events")
    unheld = not isinstance(events, list | tuple) or bool(r.UNHELD_EVENTS & set(events))
    if args.get("scope") == "repository" and unheld:
        reads["repo"] = Read(Request("GET", f"/api/repos/{segment(args['repo_id'])}"))
    return reads


TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_secrets",
        group="secrets",
        description=(
            "Secrets of one level; values are never returned. Pipelines also get other levels' secrets."
        ),
        params=(*AT_SCOPE, *PAGING),
        endpoints=at_each_level("GET", "/secrets", query=PAGING_QUERY),
        notes=(
            (
                "Repository level needs push permission, organization level organization admin, global "
                "level any signed-in user."
            ),
            "The repository list is null when empty; ordered by name.",
            "Woodpecker strips values; drop any value field anyway.",
        ),
        answer=Listed("secrets"),
    ),
    read_tool(
        "get_secret",
        group="secrets",
        description=("One secret's settings; its value is never returned."),
        params=(*AT_SCOPE, _SECRET_NAME),
        endpoints=at_each_level("GET", "/secrets/{name}"),
        notes=("The name is URL-encoded as a single path segment. 404 when absent.",),
        answer=One(
            "secret",
            "Secret {name} at {scope_text} (its value is never returned).",
        ),
    ),
    write_tool(
        "create_secret",
        group="secrets",
        guard=GuardRule(
            when="pull_request_events",
            condition="Asks when events includes pull_request, pull_request_closed or pull_request_metadata.",
            targets=("scope", "repo_id", "org_id", "name"),
            body_bound=True,
            needs_current_state=False,
        ),
        annotations=WRITE_ADDS,
        admin="instance_scope",
        admin_when="scope=global",
        description=(
            "Stores a secret; its value is never returned. Asks a person if events "
            "has a pull-request event. Global: instance admin."
        ),
        params=(
            *AT_SCOPE,
            _SECRET_NAME,
            Param(
                "value",
                "string",
                True,
                "Never readable again.",
                constraints={"minLength": 1, "maxLength": 100000},
                sensitive=True,
            ),
            Param(
                "events",
                "array",
                True,
                "Events whose pipelines get it.",
                constraints=_SECRET_EVENTS_RULES,
            ),
            Param(
                "images",
                "array",
                False,
                "Images that may get it; [] any.",
                constraints=_IMAGES_RULES,
            ),
            Param(
                "note",
                "string",
                False,
                "",
                constraints={"maxLength": 500},
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=at_each_level(
            "POST",
            "/secrets",
            body={
                "name": Arg("name"),
                "value": Arg("value"),
                "events": Arg("events"),
                "images": Arg("images"),
                "note": Arg("note"),
            },
        ),
        notes=(
            (
                "Validation failures (no event, an unknown event, a bad image name) answer 422 at "
                "every level; an existing name answers 500, not 409."
            ),
            "Answers 200 with the secret, value stripped.",
        ),
        answer=One("secret", "Created secret {name} at {scope_text}."),
        question=Ask(
            "This will create {secret}.",
            lines=(("Secret name", "name"),),
            when=(
                because(
                    r.ADDS_PULL_REQUEST_EVENT,
                    "It makes the secret available to pull-request pipelines, whose code can come from a fork.",
                ),
            ),
            fields=True,
        ),
        why="Pull-request code can come from a fork, and would see the secret.",
    ),
    write_tool(
        "update_secret",
        group="secrets",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="scope=global",
        guard=GuardRule(
            when="new_value_or_widening",
            condition=(
                "Asks when value is passed, when events adds a pull_request, pull_request_closed or "
                "pull_request_metadata event the secret does not have yet, when images is [] while "
                "the stored list is not empty, or when images adds an image the stored list lacks; "
                "and when events adds manual or cron to a secret of a repository that requires approval "
                "(require_approval other than none; an organization or global secret, or an unread "
                "repository, counts as requiring it)."
            ),
            targets=("scope", "repo_id", "org_id", "name"),
            body_bound=True,
            needs_current_state=True,
        ),
        description=(
            "Changes a secret (values never returned); lists replace stored ones."
            " Asks a person for a new value, an emptied image list, an added image,"
            " pull-request event, manual or cron. Global: instance admin."
        ),
        params=(
            *AT_SCOPE,
            _SECRET_NAME,
            Param(
                "value",
                "string",
                False,
                "New value (asks).",
                constraints={"minLength": 1, "maxLength": 100000},
                sensitive=True,
            ),
            Param(
                "events",
                "array",
                False,
                "Replaces the list; adding a PR event asks.",
                constraints=_SECRET_EVENTS_RULES,
            ),
            Param(
                "images",
                "array",
                False,
                "Replaces the list; [] any image (asks).",
                constraints=_IMAGES_RULES,
            ),
            Param("note", "string", False, "", constraints={"maxLength": 500}),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            *at_each_level(
                "GET",
                "/secrets/{name}",
                step="when events or images is passed (current lists, for the comparison)",
            ),
            Endpoint(
                "GET",
                "/api/repos/{repo_id}",
                step="for a repository secret when events names manual or cron (its approval settings)",
            ),
            *at_each_level(
                "PATCH",
                "/secrets/{name}",
                body={
                    "value": Arg("value"),
                    "events": Arg("events"),
                    "images": Arg("images"),
                    "note": Arg("note"),
                },
            ),
        ),
        notes=(
            "Woodpecker ignores an empty value and any name in the body.",
            "Validation answers 422 at repository and organization level but 400 at global level.",
            (
                "The current secret is read only when events or images is named, and only compared; "
                "nothing read goes into the question."
            ),
            "A call with nothing to change is an error.",
        ),
        answer=One("secret", "Updated secret {name} at {scope_text}."),
        question=Ask(
            "This will change {secret}.",
            lines=(("Secret name", "name"),),
            when=(
                because(
                    r.NEW_VALUE,
                    "It stores a new value (not shown here); pipelines that use the secret get it from "
                    "their next run, and the old value cannot be read back.",
                ),
                because(
                    r.ADDS_PULL_REQUEST_EVENT,
                    "It makes the secret available to pull-request pipelines, whose code can come from a fork.",
                ),
                because(
                    r.EMPTIES_IMAGES,
                    "It removes the image restriction, so any image of a matching pipeline can read the secret.",
                ),
                because(
                    r.ADDS_IMAGE,
                    # The images are not listed: a name copied from a pipeline or a registry could speak
                    # to the person. The call's own images argument says which.
                    "It adds an image the secret is not limited to now (see the call's images argument), "
                    "so steps running that image, a plugin included, can read the secret.",
                ),
                because(
                    r.ADDS_UNHELD_EVENT,
                    "It makes the secret available to manual or cron pipelines, which Woodpecker never holds "
                    "for approval, where approval is required (for an organization or global secret: in "
                    "repositories this server did not read).",
                ),
            ),
            fields=True,
        ),
        why=(
            "The secret reaches code or images it did not reach (manual and cron pipelines are never held "
            "for approval), or gets a value nobody can read back."
        ),
        changes=("value", "events", "images", "note"),
        current=_secret_before_update,
    ),
    write_tool(
        "delete_secret",
        group="secrets",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="scope=global",
        guard=asks_always("scope", "repo_id", "org_id", "name"),
        description=("Deletes a secret. Global: instance admin. Always asks a person."),
        params=(*AT_SCOPE, _SECRET_NAME, CONFIRM_TOKEN),
        endpoints=at_each_level("DELETE", "/secrets/{name}", success=204),
        notes=("404 when absent.",),
        answer=Done("Deleted secret {name} at {scope_text}."),
        question=Ask(
            "This will delete {secret}.",
            ("Its value was never readable, so it is lost for good, and pipelines that use it get nothing.",),
            (("Secret name", "name"),),
        ),
        why="A secret's value cannot be read back, so it is lost for good.",
    ),
)
