"""Secrets at the repository, organization or global level; their values are never returned."""

from collections.abc import Mapping
from typing import Any

from domain.tools import Arg, Endpoint, GuardRule, Is, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, because
from domain.woodpecker.before_asking import EXISTING
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
from domain.woodpecker.read_back import gone
from domain.woodpecker.reads import Probe
from domain.woodpecker.requests import Request, scoped, segment

_SECRET_EVENTS_RULES: Mapping[str, Any] = {
    "items": {"enum": list(EVENTS)},
    "minItems": 1,
    "maxItems": 9,
    "uniqueItems": True,
}

# An image reference as Woodpecker's secret validation reads one (server/model/secret.go), with ASCII
# classes (Go's \w): [host[:port]/][path/]name[:tag][@sha256:digest]. No space, comma or control can
# pass, so a question shows every image whole (guard.md §1c) and a list of them reads unambiguously.
IMAGE_PATTERN = (
    r"^([A-Za-z0-9_.-]+(:[0-9]+)?/)?([A-Za-z0-9_.-][A-Za-z0-9_./-]*/)?([A-Za-z0-9_.-]+)"
    r"(:[A-Za-z0-9_-]+)?(@sha256:[a-f0-9]{64})?$"
)

_IMAGES_RULES: Mapping[str, Any] = {
    "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": IMAGE_PATTERN},
    "maxItems": 50,
}

_SECRET_NAME = Param(
    "name",
    "string",
    True,
    "Case-sensitive.",
    constraints={"minLength": 1, "maxLength": 100, "pattern": r"^(?!\.\.?$)[A-Za-z0-9_.-]+$"},
)


def _secret_before_update(args: Mapping[str, Any]) -> Mapping[str, Request | Probe] | None:
    """The stored secret, when events or images is passed (the guard compares the lists); and, when
    events names manual or cron for a repository secret, its repository's approval settings (a failed
    read of those counts as requiring approval)."""
    if "events" not in args and "images" not in args:
        return None
    reads: dict[str, Request | Probe] = {"secret": Request("GET", scoped("secrets", args, "name"))}
    events = args.get("events")
    unheld = not isinstance(events, list | tuple) or bool(r.UNHELD_EVENTS & set(events))
    if args.get("scope") == "repository" and unheld:
        reads["repo"] = Probe(Request("GET", f"/api/repos/{segment(args['repo_id'])}"))
    return reads


def _global_secret(args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request:
    return Request("GET", f"/api/secrets/{segment(args['name'])}")


def _repository(args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request:
    return Request("GET", f"/api/repos/{segment(args['repo_id'])}")


def _organization_secret(args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
    """The secret of that name of the repository's organization; None (nothing to read, so it counts
    as existing) when the repository read gave no usable org_id or answered for another repository."""
    repo = answers.get("repo")
    if not isinstance(repo, Mapping) or repo.get("id") != args["repo_id"]:
        return None
    org_id = repo.get("org_id")
    if not isinstance(org_id, int) or isinstance(org_id, bool) or org_id < 1:
        return None
    return Request("GET", f"/api/orgs/{segment(org_id)}/secrets/{segment(args['name'])}")


def _wider_secrets(args: Mapping[str, Any]) -> Mapping[str, Probe] | None:
    """One read per wider level (repository < organization < global) for a secret of the new one's name:
    a repository's organization is read from the repository first. A global secret has none wider."""
    if args.get("scope") == "repository":
        return {
            "repo": Probe(_repository),
            "organization": Probe(_organization_secret),
            "global": Probe(_global_secret),
        }
    if args.get("scope") == "organization":
        return {"global": Probe(_global_secret)}
    return None


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
            when="pull_request_events_or_shadows",
            condition=(
                "Asks when events includes pull_request, pull_request_closed or pull_request_metadata, "
                "and when a secret of that name exists at a wider level (repository < organization < "
                "global): it then replaces that one for these pipelines. One read per wider level; a "
                "read that fails other than with 404 counts as an existing secret."
            ),
            targets=("scope", "repo_id", "org_id", "name"),
            body_bound=True,
            needs_current_state=True,
        ),
        annotations=WRITE_ADDS,
        admin="instance_scope",
        admin_when="scope=global",
        description=(
            "Stores a secret; its value is never returned. Asks a person if events "
            "has a pull-request event or the name is taken at a wider level. Global: instance admin."
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
        endpoints=(
            Endpoint(
                "GET",
                "/api/repos/{repo_id}",
                when=Is("scope", "repository"),
                step="before the create (the repository's organization)",
            ),
            Endpoint(
                "GET",
                "/api/orgs/{org_id}/secrets/{name}",
                when=Is("scope", "repository"),
                step="before the create (org_id: the repository's; a secret the new one would shadow)",
            ),
            Endpoint(
                "GET",
                "/api/secrets/{name}",
                when=Is("scope", "repository"),
                step="before the create (a global secret the new one would shadow)",
            ),
            Endpoint(
                "GET",
                "/api/secrets/{name}",
                when=Is("scope", "organization"),
                step="before the create (a global secret the new one would shadow)",
            ),
            *at_each_level(
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
        ),
        notes=(
            (
                "Validation failures (no event, an unknown event, a bad image name) answer 422 at "
                "every level; an existing name answers 500, not 409."
            ),
            "Answers 200 with the secret, value stripped.",
            (
                "Pipelines get a repository's secret over an organization's of the same name, and an "
                "organization's over a global one: a new secret at a narrower level replaces the wider "
                "one for them. Only a 404 says the wider level has none (an organization's secrets "
                "need organization admin: without it, the read fails and the call asks)."
            ),
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
                because(
                    r.SHADOWS_ORGANIZATION_SECRET,
                    "The organization has a secret of this name, or this server could not check: pipelines "
                    "of this repository would get this new value instead of the organization's.",
                ),
                because(
                    r.SHADOWS_GLOBAL_SECRET,
                    "There is a global secret of this name, or this server could not check: pipelines "
                    "here would get this new value instead of the global one.",
                ),
            ),
            fields=True,
        ),
        why=(
            "Pull-request code can come from a fork, and would see the secret; a secret named like a "
            "wider one replaces it for these pipelines."
        ),
        current=_wider_secrets,
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
                    # The images are listed whole on the "New images" line: each is an image reference
                    # (IMAGE_PATTERN), which carries no sentence.
                    "It adds an image the secret is not limited to now (the new list is above), "
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
        settled=gone("secret"),
        before_asking=EXISTING,
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
