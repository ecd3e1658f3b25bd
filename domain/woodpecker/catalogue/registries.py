"""Registry logins at the repository, organization or global level; their passwords are never returned."""

from domain.tools import Arg, GuardRule, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, because, given
from domain.woodpecker.before_asking import EXISTING
from domain.woodpecker.catalogue.common import (
    AT_SCOPE,
    CONFIRM_TOKEN,
    PAGING,
    PAGING_QUERY,
    WRITE_ADDS,
    WRITE_DESTRUCTIVE,
    asks_always,
    at_each_level,
    read_tool,
    write_tool,
)
from domain.woodpecker.plans import Call, Calls
from domain.woodpecker.read_back import gone
from domain.woodpecker.requests import Request, scoped

_REGISTRY_ADDRESS = Param(
    "address",
    "string",
    True,
    "Host[/path], e.g. ghcr.io; compared as written.",
    constraints={
        "minLength": 1,
        "maxLength": 200,
        "pattern": r"^(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[A-Za-z0-9.:_-]+(/[A-Za-z0-9._-]+)*$",
    },
)


# The repository route answers a copy of the request: the stored entry is read back to report it.
_WRITE_READ_BACK = Calls(
    (
        Call("updated"),
        Call("stored", lambda args, answers: Request("GET", scoped("registries", args, "address"))),
    )
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_registries",
        group="registries",
        description=("Registry logins of one level; passwords are never returned."),
        params=(*AT_SCOPE, *PAGING),
        endpoints=at_each_level("GET", "/registries", query=PAGING_QUERY),
        notes=(
            'password is always "" in responses. The repository list is null when empty; ordered by id.',
            (
                "Repository level needs push permission, organization level organization admin, global "
                "level any signed-in user."
            ),
        ),
        answer=Listed("registries"),
    ),
    read_tool(
        "get_registry",
        group="registries",
        description=("The username stored for a registry address; the password is never returned."),
        params=(*AT_SCOPE, _REGISTRY_ADDRESS),
        endpoints=at_each_level("GET", "/registries/{address}"),
        notes=(
            (
                "The address travels URL-encoded as one path segment (slashes and colons included). "
                "404 when absent."
            ),
        ),
        answer=One(
            "registry",
            "Registry {address} at {scope_text} (its password is never returned).",
        ),
    ),
    write_tool(
        "create_registry",
        group="registries",
        annotations=WRITE_ADDS,
        admin="instance_scope",
        admin_when="scope=global",
        guard=GuardRule(
            when="new_password",
            condition=(
                "Asks whenever password is passed, as update_registry does; password is required "
                "here, so every call asks."
            ),
            targets=("scope", "repo_id", "org_id", "address"),
            body_bound=True,
            needs_current_state=False,
        ),
        description=(
            "Stores a registry login for pulling private images; the password is "
            "never returned. Global: instance admin. Always asks a person (a password)."
        ),
        params=(
            *AT_SCOPE,
            _REGISTRY_ADDRESS,
            Param(
                "username",
                "string",
                True,
                "",
                constraints={"minLength": 1, "maxLength": 2000},
            ),
            Param(
                "password",
                "string",
                True,
                "Asks a person.",
                constraints={"minLength": 1, "maxLength": 100000},
                sensitive=True,
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=at_each_level(
            "POST",
            "/registries",
            body={"address": Arg("address"), "username": Arg("username"), "password": Arg("password")},
        ),
        notes=(
            (
                "Repository level answers 400 on validation and echoes a copy of the request (id 0, "
                'password "") rather than the stored row; read it back with get_registry.'
            ),
            "Validation answers 422 at organization level and 400 at global level.",
        ),
        answer=One("registry", "Created registry {address} at {scope_text}."),
        question=Ask(
            "This will store a login for {registry}.",
            lines=(("Registry address", "address"),),
            when=(
                because(
                    r.NEW_PASSWORD,
                    "It stores a password (not shown here) that nobody can read back; pipelines pull "
                    "private images with this login.",
                ),
                # Not read, so said whatever the wider levels hold: the call asks anyway (its password),
                # and a read would change no decision, only this sentence (ADR 0044).
                given(
                    lambda args: args.get("scope") != "global",
                    "Pipelines pull with the login nearest to them: if a wider level (the organization, "
                    "the instance) holds one for this address, pipelines here use this one instead.",
                ),
            ),
            fields=True,
        ),
        why="Pipelines pull with a password nobody can read back, instead of a wider login for that address.",
    ),
    write_tool(
        "update_registry",
        group="registries",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="scope=global",
        guard=GuardRule(
            when="new_password",
            condition="Asks whenever password is passed.",
            targets=("scope", "repo_id", "org_id", "address"),
            body_bound=True,
            needs_current_state=False,
        ),
        description=(
            "Replaces username and/or password (never returned). Asks a person when a"
            " password is passed. Global: instance admin."
        ),
        params=(
            *AT_SCOPE,
            _REGISTRY_ADDRESS,
            Param(
                "username",
                "string",
                False,
                "",
                constraints={"minLength": 1, "maxLength": 2000},
            ),
            Param(
                "password",
                "string",
                False,
                "Asks a person.",
                constraints={"minLength": 1, "maxLength": 100000},
                sensitive=True,
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            *at_each_level(
                "PATCH",
                "/registries/{address}",
                body={"username": Arg("username"), "password": Arg("password")},
            ),
            *at_each_level(
                "GET", "/registries/{address}", step="after the update (to report the stored entry)"
            ),
        ),
        notes=(
            "Never send address in the body: the organization and global routes would rename the entry.",
            (
                "Repository level answers 422 on validation and echoes the request, not the stored "
                "row; organization level 422, global level 400."
            ),
            "A call with nothing to change is an error.",
        ),
        answer=One("registry", "Updated registry {address} at {scope_text}."),
        question=Ask(
            "This will replace the login stored for {registry}.",
            lines=(("Registry address", "address"),),
            when=(
                because(
                    r.NEW_PASSWORD,
                    "It stores a new password (not shown here); pipelines pull private images with this "
                    "login from their next run, and the old password cannot be read back.",
                ),
            ),
            fields=True,
        ),
        why="Pipelines pull with a password nobody can read back.",
        changes=("username", "password"),
        plan=_WRITE_READ_BACK,
    ),
    write_tool(
        "delete_registry",
        settled=gone("registry"),
        before_asking=EXISTING,
        group="registries",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="scope=global",
        guard=asks_always("scope", "repo_id", "org_id", "address"),
        description=("Deletes a registry login. Global: instance admin. Always asks a person."),
        params=(*AT_SCOPE, _REGISTRY_ADDRESS, CONFIRM_TOKEN),
        endpoints=at_each_level("DELETE", "/registries/{address}", success=204),
        notes=("404 when absent.",),
        answer=Done("Deleted registry {address} at {scope_text}."),
        question=Ask(
            "This will delete the login stored for {registry}.",
            ("Private-image pulls from that address fail afterwards.",),
            (("Registry address", "address"),),
        ),
        why="Private-image pulls from that address fail afterwards.",
    ),
)
