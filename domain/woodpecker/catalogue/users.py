"""Woodpecker accounts (instance admin)."""

from domain.tools import Arg, Endpoint, GuardRule, Merged, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import ADMIN_COST, Ask, given
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    PAGING,
    PAGING_QUERY,
    WRITE_DESTRUCTIVE,
    WRITE_IDEMPOTENT,
    asks_always,
    id_param,
    read_tool,
    write_tool,
)

_USER_FORGE_ID = id_param(
    "forge_id",
    "The account's forge id, from list_users or list_forges (1 on an instance with one forge). "
    "The same login can exist on several forges.",
)

_LOGIN = Param(
    "login",
    "string",
    True,
    "The account's login, spelled exactly as in the forge.",
    constraints={"minLength": 1, "maxLength": 200, "pattern": r"^(?!\.\.?$)[A-Za-z0-9._-]+$"},
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_users",
        group="users",
        admin="always",
        description=(
            "Lists every Woodpecker account. Instance admin only. Accounts appear at first sign-in or "
            "through create_user, so everyone who ever used the instance is listed."
        ),
        params=PAGING,
        endpoints=(Endpoint("GET", "/api/users", query=PAGING_QUERY),),
        notes=("Ordered by login; null when empty.",),
        answer=Listed("users"),
    ),
    read_tool(
        "get_user",
        group="users",
        admin="always",
        description="Returns one account, by login and forge. Instance admin only.",
        params=(
            _LOGIN,
            _USER_FORGE_ID,
            Param(
                "forge_remote_id",
                "string",
                False,
                "The user's id on the forge, to pick the right account when a login is ambiguous.",
                constraints={"minLength": 1, "maxLength": 200},
            ),
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/users/{login}",
                query={"forge_id": Arg("forge_id"), "forge_remote_id": Arg("forge_remote_id")},
            ),
        ),
        notes=(
            (
                "Woodpecker would default a missing forge_id to 1; the tool requires it so the account "
                "is never ambiguous. 404 when absent."
            ),
        ),
        answer=One("user", "User {login} (id {id}, admin: {admin})."),
    ),
    write_tool(
        "create_user",
        group="users",
        annotations=WRITE_IDEMPOTENT,
        admin="always",
        guard=GuardRule(
            when="always",
            condition=(
                "Every call asks: a new account lets its holder sign in even where registration is "
                "closed; the question says whether it grants admin."
            ),
            targets=("login",),
            body_bound=True,
            needs_current_state=False,
        ),
        description=(
            "Creates a Woodpecker account for a forge user who has not signed in yet; the forge is not "
            "touched. Spell the login exactly as the forge does, or the real sign-in makes a second "
            "account and this one stays unused. Instance admin only. Always asks a person first (a new "
            "account can sign in even where registration is closed)."
        ),
        params=(
            _LOGIN,
            Param(
                "email",
                "string",
                False,
                "Contact address.",
                constraints={"maxLength": 500, "format": "email"},
            ),
            Param(
                "admin",
                "boolean",
                False,
                "true makes it an instance admin, with power over every repository, secret and agent; "
                "asks a person.",
                constraints={"default": False},
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint("POST", "/api/users", body={"login": Arg("login"), "email": Arg("email")}),
            Endpoint(
                "GET",
                "/api/users/{login}",
                step="after the create, when admin is true",
                query={"forge_id": Merged("forge_id")},
            ),
            Endpoint(
                "PATCH",
                "/api/users/{login}",
                step="after the create, when admin is true",
                body={
                    "login": Merged("login"),
                    "email": Merged("email"),
                    "avatar_url": Merged("avatar_url"),
                    "admin": Merged("admin"),
                    "forge_id": Merged("forge_id"),
                    "forge_remote_id": Merged("forge_remote_id"),
                },
            ),
        ),
        notes=(
            (
                "Woodpecker's POST ignores admin; setting it takes update_user's read-modify-write "
                "right after the create, and nothing is created before the approval. If that second "
                "step fails, say the account exists without admin."
            ),
            (
                'A pre-created account gets forge_id 1 and forge_remote_id "0"; (forge_id, '
                "forge_remote_id) is unique, so a second pre-created account on the same forge "
                "collides with the first (500)."
            ),
            (
                "A login outside [a-zA-Z0-9-_.] or longer than 250 characters answers 400; an existing "
                "login on the same forge answers 500, so a repeated call changes nothing."
            ),
        ),
        answer=One("user", "Created user {login} (id {id}, admin: {admin})."),
        question=Ask(
            "This will create a Woodpecker account that is not an admin.",
            (
                "The account can sign in at once, even where registration is closed, and gets what its "
                "forge account can reach.",
            ),
            (("Login", "login"),),
            when=(given(lambda args: args.get("admin") is not False, ADMIN_COST),),
            fields=True,
            what_when=(
                lambda args: args.get("admin") is not False,
                "This will create a Woodpecker account that is an instance admin.",
            ),
        ),
        why="Sign-in finds a pre-created account before the 'registration closed' check: a new account lets a person in.",
    ),
    write_tool(
        "update_user",
        group="users",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=GuardRule(
            when="grants_admin",
            condition="Asks when admin is passed as true.",
            targets=("login", "forge_id"),
            body_bound=True,
            needs_current_state=False,
        ),
        description=(
            "Changes an account's email or instance-admin flag; anything not passed keeps its value. "
            "Instance admin only. Granting admin (admin=true) hands over the whole instance and asks a "
            "person first; revoking it or fixing the email applies at once."
        ),
        params=(
            _LOGIN,
            _USER_FORGE_ID,
            Param(
                "email",
                "string",
                False,
                "New contact address.",
                constraints={"maxLength": 500, "format": "email"},
            ),
            Param("admin", "boolean", False, "true grants instance admin (asks a person); false revokes it."),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/users/{login}",
                step="before the update (current record)",
                query={"forge_id": Arg("forge_id")},
            ),
            Endpoint(
                "PATCH",
                "/api/users/{login}",
                body={
                    "login": Merged("login"),
                    "email": Merged("email"),
                    "avatar_url": Merged("avatar_url"),
                    "admin": Merged("admin"),
                    "forge_id": Merged("forge_id"),
                    "forge_remote_id": Merged("forge_remote_id"),
                },
            ),
            Endpoint(
                "GET",
                "/api/users/{login}",
                step="after the update (report the stored record)",
                query={"forge_id": Arg("forge_id")},
            ),
        ),
        notes=(
            (
                "PATCH overwrites login, email, avatar_url and admin from the body and finds the row "
                "by forge_id and forge_remote_id first: send the complete current record with the "
                "changes merged, or the account is blanked."
            ),
            "The PATCH answer echoes the request; read the account again to report it.",
            "409 on a store conflict. A call with nothing to change is an error.",
        ),
        answer=One("user", "Updated user {login} (id {id}, admin: {admin})."),
        question=Ask(
            "This will make an account of forge {forge_id} an instance admin.",
            (ADMIN_COST,),
            (("Login", "login"),),
            describes=frozenset({r.GRANTS_ADMIN}),
            fields=True,
        ),
        why="An instance admin controls every repository, secret, agent, forge and user.",
        changes=("email", "admin"),
    ),
    write_tool(
        "delete_user",
        group="users",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=asks_always("login", "forge_id"),
        description=(
            "Deletes a Woodpecker account. Instance admin only. Repositories it owns lose the forge "
            "token Woodpecker uses for them, so their pipelines stop being triggered; hand them over "
            "with chown_repository first. Always asks a person first."
        ),
        params=(_LOGIN, _USER_FORGE_ID, CONFIRM_TOKEN),
        endpoints=(
            Endpoint("DELETE", "/api/users/{login}", query={"forge_id": Arg("forge_id")}, success=204),
        ),
        notes=("404 when absent.",),
        answer=Done("Deleted user {login} of forge {forge_id}."),
        question=Ask(
            "This will delete an account of forge {forge_id} from Woodpecker.",
            (
                "Repositories it owns lose the forge token Woodpecker uses for them, so their pipelines "
                "stop being triggered; chown_repository can hand them over first.",
            ),
            (("Login", "login"),),
        ),
        why="Repositories it owns lose the forge token their pipelines run with.",
    ),
)
