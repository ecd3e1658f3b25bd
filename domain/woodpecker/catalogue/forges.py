"""The forges Woodpecker signs in with and reads repositories from."""

from collections.abc import Mapping
from typing import Any

from domain.tools import Arg, Endpoint, GuardRule, Merged, Param, ToolSpec
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, given
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    PAGING,
    PAGING_QUERY,
    WRITE_ADDS,
    WRITE_DESTRUCTIVE,
    asks_always,
    id_param,
    optional,
    read_tool,
    write_tool,
)
from domain.woodpecker.plans import Answers, Args, Call, Calls
from domain.woodpecker.read_back import gone
from domain.woodpecker.requests import Request, record, segment

_URL_RULES: Mapping[str, Any] = {"maxLength": 500, "format": "uri", "pattern": "^https?://"}

_FORGE_ID = id_param("forge_id", "From list_forges.")

_FORGE_TYPE = Param(
    "type",
    "enum",
    True,
    "",
    choices=("github", "gitlab", "gitea", "forgejo", "bitbucket", "bitbucket-dc", "addon"),
)

_FORGE_URL = Param("url", "string", True, "", constraints=_URL_RULES)

_OAUTH_CLIENT = Param(
    "client", "string", True, "OAuth client id.", constraints={"minLength": 1, "maxLength": 500}
)

_OAUTH_HOST = Param(
    "oauth_host", "string", False, "Browser URL for OAuth, if not url.", constraints=_URL_RULES
)


# ------------------------------------------------------------------ the read-modify-write of a forge

_FORGE_FIELDS = ("type", "url", "client", "oauth_host", "skip_verify")


def merge_forge(current: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """The forge record with the changes merged; the client secret goes along only when replaced."""
    stored = record(current, "forge")
    body: dict[str, Any] = {}
    for name in _FORGE_FIELDS:
        if name in args:
            body[name] = args[name]
        elif name in stored:
            body[name] = stored[name]
    body["additional_options"] = stored.get("additional_options") or {}
    if "oauth_client_secret" in args:
        body["oauth_client_secret"] = args["oauth_client_secret"]
    return body


def _forge(args: Args) -> str:
    return f"/api/forges/{segment(args['forge_id'])}"


def _the_named_forge(args: Args, answers: Answers, data: Any, status: int) -> str | None:
    """Every field the call leaves out goes back as read: a read that answered another forge would
    send that forge's url or client with a change the person approved for this one."""
    if not isinstance(data, Mapping) or data.get("id") != args["forge_id"]:
        return (
            f"Woodpecker's answer for forge {args['forge_id']} named another forge, so nothing was changed."
        )
    return None


# PATCH overwrites the whole record: read it, merge the changes over it, send it back.
_READ_MERGE_WRITE = Calls(
    (
        Call("current", lambda args, answers: Request("GET", _forge(args)), check=_the_named_forge),
        Call(
            "patched",
            lambda args, answers: Request("PATCH", _forge(args), body=merge_forge(answers["current"], args)),
        ),
    )
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_forges",
        group="forges",
        description=(
            "Forges; their ids are the forge_id user tools take. Without instance "
            "admin: id, type, url. Secrets never returned."
        ),
        params=PAGING,
        endpoints=(Endpoint("GET", "/api/forges", query=PAGING_QUERY),),
        notes=(
            (
                "Answers even anonymously, with the public view; the full record needs an instance "
                "admin. The OAuth client secret is never returned."
            ),
            "Redact credential-like keys inside additional_options.",
        ),
        answer=Listed("forges"),
    ),
    read_tool(
        "get_forge",
        group="forges",
        description=(
            "One forge (without instance admin: id, type, url). The OAuth secret is never returned."
        ),
        params=(_FORGE_ID,),
        endpoints=(Endpoint("GET", "/api/forges/{forge_id}"),),
        notes=("Non-admins get id, type and url only. The client secret is never returned.",),
        answer=One("forge", "Forge {id} ({type})."),
    ),
    write_tool(
        "create_forge",
        group="forges",
        guard=GuardRule(
            when="always",
            condition="Every call asks, whatever the arguments.",
            targets=("type", "url"),
            body_bound=True,
            needs_current_state=False,
        ),
        annotations=WRITE_ADDS,
        admin="always",
        description=(
            "Adds a forge (needs an OAuth app redirecting here); its secret is never "
            "returned. Instance admin only. Always asks a person."
        ),
        params=(
            _FORGE_TYPE,
            _FORGE_URL,
            _OAUTH_CLIENT,
            Param(
                "oauth_client_secret",
                "string",
                True,
                "",
                constraints={"minLength": 1, "maxLength": 1000},
                sensitive=True,
            ),
            _OAUTH_HOST,
            Param(
                "skip_verify",
                "boolean",
                False,
                "No TLS checks (last resort).",
                constraints={"default": False},
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "POST",
                "/api/forges",
                body={
                    "type": Arg("type"),
                    "url": Arg("url"),
                    "client": Arg("client"),
                    "oauth_client_secret": Arg("oauth_client_secret"),
                    "oauth_host": Arg("oauth_host"),
                    "skip_verify": Arg("skip_verify"),
                },
            ),
        ),
        notes=(
            (
                "Woodpecker fetches url and oauth_host on every sign-in, so refuse schemes other than "
                "http and https."
            ),
            "The answer never contains the secret.",
        ),
        answer=One("forge", "Created forge {id} ({type})."),
        question=Ask(
            "This will add a forge to Woodpecker, through which accounts can sign in.",
            (
                "Woodpecker's admin list (WOODPECKER_ADMIN) matches logins on every forge: whoever can pick a "
                "listed login on this forge signs in as an instance admin.",
            ),
            (("New type", "type"), ("New url", "url")),
            when=(
                given(
                    lambda args: args.get("skip_verify") is True,
                    "skip_verify turns off TLS certificate checks towards the forge.",
                ),
            ),
            fields=True,
        ),
        why="WOODPECKER_ADMIN matches logins on every forge: a forge where anyone picks their login yields an instance admin.",
    ),
    write_tool(
        "update_forge",
        group="forges",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=asks_always("forge_id", body_bound=True),
        description=(
            "Changes a forge; a mistake can lock everyone out. Secret never returned."
            " Instance admin only. Always asks a person."
        ),
        params=(
            _FORGE_ID,
            optional(_FORGE_TYPE),
            optional(_FORGE_URL),
            optional(_OAUTH_CLIENT),
            Param(
                "oauth_client_secret",
                "string",
                False,
                "",
                constraints={"minLength": 1, "maxLength": 1000},
                sensitive=True,
            ),
            _OAUTH_HOST,
            Param(
                "skip_verify",
                "boolean",
                False,
                "",
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint("GET", "/api/forges/{forge_id}", step="before the update (current record)"),
            Endpoint(
                "PATCH",
                "/api/forges/{forge_id}",
                body={
                    "type": Merged("type"),
                    "url": Merged("url"),
                    "client": Merged("client"),
                    "oauth_client_secret": Arg("oauth_client_secret"),
                    "oauth_host": Merged("oauth_host"),
                    "skip_verify": Merged("skip_verify"),
                    "additional_options": Merged("additional_options"),
                },
            ),
        ),
        notes=(
            (
                "PATCH overwrites type, url, client, oauth_host, skip_verify and additional_options "
                "from the body; send the current record with the changes merged. oauth_client_secret "
                "changes only when non-empty."
            ),
            "409 on a store failure. A call with nothing to change is an error.",
        ),
        answer=One("forge", "Updated forge {id} ({type})."),
        question=Ask(
            "This will change the configuration of forge {forge_id}.",
            (
                "A mistake here can make sign-in impossible for everyone, the web UI included, and cut "
                "Woodpecker off from the forge's repositories.",
            ),
            when=(
                given(
                    lambda args: args.get("oauth_client_secret") is not None,
                    "It sets a new OAuth client secret (not shown here).",
                ),
                given(
                    lambda args: args.get("skip_verify") is True,
                    "skip_verify turns off TLS certificate checks towards the forge.",
                ),
            ),
            fields=True,
        ),
        why="A mistake locks everyone out of sign-in and cuts Woodpecker off its repositories.",
        changes=("type", "url", "client", "oauth_client_secret", "oauth_host", "skip_verify"),
        plan=_READ_MERGE_WRITE,
    ),
    write_tool(
        "delete_forge",
        settled=gone("forge"),
        group="forges",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=asks_always("forge_id"),
        description=(
            "Deletes a forge; its accounts can no longer sign in. Instance admin only. Always asks a person."
        ),
        params=(_FORGE_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/forges/{forge_id}", success=204),),
        notes=("Answers 204 (the swagger says 200).",),
        answer=Done("Deleted forge {forge_id}."),
        question=Ask(
            "This will delete forge {forge_id} from Woodpecker.",
            (
                "Accounts from that forge cannot sign in afterwards, and Woodpecker loses access to its repositories.",
            ),
        ),
        why="Its accounts cannot sign in and its repositories are cut off.",
    ),
)
