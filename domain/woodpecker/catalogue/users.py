"""Woodpecker accounts (instance admin)."""

from collections.abc import Mapping
from typing import Any

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
from domain.woodpecker.plans import Answers, Args, Call, Calls
from domain.woodpecker.read_back import gone
from domain.woodpecker.requests import Request, record, segment

_USER_FORGE_ID = id_param(
    "forge_id",
    "From list_forges (1 with one forge).",
)

_LOGIN = Param(
    "login",
    "string",
    True,
    "Exactly as in the forge.",
    constraints={"minLength": 1, "maxLength": 200, "pattern": r"^(?!\.\.?$)[A-Za-z0-9._-]+$"},
)


# ------------------------------------------------------------------ the read-modify-write of an account


def _user(login: str, forge_id: int) -> Request:
    return Request("GET", f"/api/users/{segment(login)}", {"forge_id": str(forge_id)})


def _user_patch(login: str, body: Mapping[str, Any]) -> Request:
    return Request("PATCH", f"/api/users/{segment(login)}", body=dict(body))


def merge_user(current: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The complete user record for PATCH /users/{login}: Woodpecker overwrites login, email,
    avatar_url and admin from the body and finds the row by forge_id and forge_remote_id."""
    stored = record(current, "user")
    return {
        "login": stored.get("login", args.get("login")),
        "email": args["email"] if "email" in args else stored.get("email", ""),
        "avatar_url": stored.get("avatar_url", ""),
        "admin": args["admin"] if "admin" in args else bool(stored.get("admin", False)),
        "forge_id": stored.get("forge_id", args.get("forge_id", 1)),
        "forge_remote_id": stored.get("forge_remote_id", ""),
    }


# What PATCH /users/{login} overwrites: the whole record, merged by merge_user.
_USER_RECORD = {
    name: Merged(name) for name in ("login", "email", "avatar_url", "admin", "forge_id", "forge_remote_id")
}


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _grants_admin(args: Args) -> bool:
    return bool(args.get("admin"))


def _names_the_new_account(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    """The grant goes only to the account this create returned, and only after a 200: an existing
    login answers 500 (a failure before this) and must not be promoted by the second request."""
    if not _grants_admin(args):
        return None
    account: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    user_id: Any = account.get("id")
    if (
        status != 200
        or account.get("login") != args["login"]
        or not _is_id(account.get("forge_id"))
        or not _is_id(user_id)
        or user_id < 1
    ):
        return (
            f"Woodpecker's answer to creating {args['login']} did not name the new account, so it was "
            "not made admin. Call get_user to check the account, then update_user with admin=true."
        )
    return None


def _the_created_account(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    if not isinstance(data, Mapping) or data.get("id") != answers["created"]["id"]:
        return "the account read back is not the one just created"
    return None


def _stored_admin(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    if not isinstance(data, Mapping) or not data.get("admin") or not data.get("id"):
        return "Woodpecker did not store the admin flag."
    return None


def _created_without_admin(args: Args, answers: Answers, message: str) -> str:
    return (
        f"The account {args['login']} was created, but without admin: making it admin failed ({message}). "
        "Call update_user with admin=true to finish."
    )


def _the_named_account(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    """The PATCH finds its row by the forge_id + forge_remote_id of the record read here, whatever its
    path says: a read that answered another account (a cache keyed without the query, a server that
    ignores forge_id) would move the approved change onto that account."""
    if (
        not isinstance(data, Mapping)
        or data.get("login") != args["login"]
        or data.get("forge_id", args["forge_id"]) != args["forge_id"]
    ):
        return (
            f"Woodpecker's answer for {args['login']} on forge {args['forge_id']} named another account, "
            "so nothing was changed. Call get_user to check the account."
        )
    return None


def _matched_an_account(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    """Woodpecker finds the row by forge_id + forge_remote_id; when none matches it stores nothing and
    echoes the body with id 0, so the stored record read next would read as a success."""
    if isinstance(data, Mapping) and not data.get("id"):
        return (
            f"Woodpecker did not apply the update to {args['login']}: it matched no account by forge "
            "id and forge_remote_id, so nothing changed. Call get_user to read the account, then try again."
        )
    return None


# Woodpecker's POST ignores admin: a grant is update_user's read-modify-write of the created account.
_CREATE_THEN_GRANT = Calls(
    (
        Call("created", check=_names_the_new_account),
        Call(
            "current",
            lambda args, answers: _user(args["login"], answers["created"]["forge_id"]),
            check=_the_created_account,
            only_if=_grants_admin,
            failed=_created_without_admin,
        ),
        Call(
            "patched",
            lambda args, answers: _user_patch(args["login"], merge_user(answers["current"], args)),
            check=_stored_admin,
            only_if=_grants_admin,
            failed=_created_without_admin,
        ),
    )
)
# The PATCH answer echoes the request; the stored record read back is what to report.
_READ_MERGE_WRITE_READ = Calls(
    (
        Call(
            "current", lambda args, answers: _user(args["login"], args["forge_id"]), check=_the_named_account
        ),
        Call(
            "patched",
            lambda args, answers: _user_patch(args["login"], merge_user(answers["current"], args)),
            check=_matched_an_account,
        ),
        Call("stored", lambda args, answers: _user(args["login"], args["forge_id"])),
    )
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_users",
        group="users",
        admin="always",
        description=("Every Woodpecker account. Instance admin only."),
        params=PAGING,
        endpoints=(Endpoint("GET", "/api/users", query=PAGING_QUERY),),
        notes=("Ordered by login; null when empty.",),
        answer=Listed("users"),
    ),
    read_tool(
        "get_user",
        group="users",
        admin="always",
        description="One account. Instance admin only.",
        params=(
            _LOGIN,
            _USER_FORGE_ID,
            Param(
                "forge_remote_id",
                "string",
                False,
                "Forge user id, if the login is ambiguous.",
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
            "Creates an account for a forge user before sign-in. Instance admin only. Always asks a person."
        ),
        params=(
            _LOGIN,
            Param(
                "email",
                "string",
                False,
                "",
                constraints={"maxLength": 500, "format": "email"},
            ),
            Param(
                "admin",
                "boolean",
                False,
                "Instance admin (asks).",
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
                body=_USER_RECORD,
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
        plan=_CREATE_THEN_GRANT,
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
            "Changes an account's email or admin flag. Instance admin only. Granting "
            "admin (admin=true) asks a person."
        ),
        params=(
            _LOGIN,
            _USER_FORGE_ID,
            Param(
                "email",
                "string",
                False,
                "",
                constraints={"maxLength": 500, "format": "email"},
            ),
            Param("admin", "boolean", False, "true asks a person."),
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
                body=_USER_RECORD,
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
        plan=_READ_MERGE_WRITE_READ,
    ),
    write_tool(
        "delete_user",
        settled=gone("user"),
        group="users",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=asks_always("login", "forge_id"),
        description=(
            "Deletes an account; its repositories stop getting pipelines "
            "(chown_repository first). Instance admin only. Always asks a person."
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
