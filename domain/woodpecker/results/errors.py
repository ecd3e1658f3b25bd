"""Error results: what went wrong, safe to show, and what to do next, with each tool's own quirks first."""

import json
from collections.abc import Mapping
from typing import Any

from domain import visible
from domain.calls import ToolResult
from domain.tools import ToolSpec
from domain.woodpecker.faults import Answered, Fault, NoSuchStep, Step
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, UNTRUSTED_WARNING
from domain.woodpecker.results.render import compact
from domain.woodpecker.results.text import short, strip_terminal
from domain.woodpecker.tool import woodpecker

SETUP = (
    "This server is not connected to a Woodpecker instance yet. Set WOODPECKER_URL (the server root, "
    "for example https://ci.example.org) and WOODPECKER_TOKEN (a personal access token from your "
    "Woodpecker user settings) in the MCP server's environment and restart it; see the README. "
    "get_server_info works without a token."
)
SETUP_WITHOUT_LOGIN = (
    "No Woodpecker token is configured, so only get_server_info can be used. Set WOODPECKER_TOKEN (a "
    "personal access token from your Woodpecker user settings) in the MCP server's environment and "
    "restart it; see the README."
)

# Kind of failure -> what to do next, whatever the tool, and which next step that is (a message
# that gave the same step already makes the hint a repetition). forbidden and not_found depend on
# the arguments (`_hint`).
_HINTS: Mapping[str, tuple[str, Step | None]] = {
    "not_configured": (SETUP, "setup"),
    "unauthorized": (
        "Woodpecker did not accept the token (401). Check that WOODPECKER_TOKEN (or, for a client of a "
        "per-client HTTP server, the bearer it presents) is a valid personal access token, and call "
        "get_server_info to check the connection itself.",
        "check_connection",
    ),
    "server_error": ("Woodpecker failed on its side; try again later or check its logs.", "retry_later"),
    "unavailable": (
        "Woodpecker could not be reached. Call get_server_info to check the connection.",
        "check_connection",
    ),
    **dict.fromkeys(
        ("web_ui", "redirect"),
        (
            "Check WOODPECKER_URL: it must be the Woodpecker server root, not a web page or proxy that redirects.",
            "check_url",
        ),
    ),
    "too_large": ("Narrow the request (page, per_page, filters).", None),
    "request_not_as_planned": (
        "Nothing was sent. Check the arguments: a name must not hold '.', '..' or '//' segments; if they "
        "are plain names, check WOODPECKER_URL and any proxy settings (HTTP_PROXY) of this server.",
        "check_url",
    ),
    "conflict": (
        "Woodpecker reported a conflict (409) with the stored state; read the current object before retrying.",
        None,
    ),
    "rejected": (
        "Woodpecker refused the request's content: check the arguments against the tool's description.",
        None,
    ),
    # The read before the question found no approval waiting (issue 37): nothing was sent.
    "not_blocked": ("Only a blocked pipeline waits for approval: get_pipeline shows its status.", None),
    # An argument refused after validation (a search pattern the engine cannot compile): the message
    # names it, and nothing about the connection or the rights could help.
    "invalid_arguments": ("Correct the argument the message names and call again.", None),
    "foreign_link": ("Nothing was looked up.", None),
    # The message says what echoed the token and what to check (docs/adr/0047).
    "token_echoed": (
        "Nothing of the answer was shown. Check WOODPECKER_URL and any proxy of this server before calling again.",
        "check_url",
    ),
    "not_a_reference": ("Nothing was looked up.", None),
}
_DEFAULT_HINT: tuple[str, Step | None] = ("Call get_server_info to check the connection.", "check_connection")


# After a timeout or a server failure of a write that is not idempotent (a create), when its
# declaration says nothing more: "try again" alone could make two of what was asked for once.
MAY_HAVE_HAPPENED = (
    "If the request timed out or Woodpecker failed midway, it may have been done anyway: read the current "
    "state (the matching list_* or get_* tool) before calling again, or it may be done twice."
)


def _specific_hint(tool: ToolSpec, args: Mapping[str, Any], kind: str, detail: str | None) -> str | None:
    """What this tool's own quirks add to a failure of this kind, if anything (its declaration says)."""
    hint = woodpecker(tool).hints.get(kind)
    if hint is None and kind in ("unavailable", "server_error"):
        annotations = tool.annotations
        return None if annotations.read_only or annotations.idempotent else MAY_HAVE_HAPPENED
    return hint(args, detail) if callable(hint) else hint


def tool_hint(tool: ToolSpec, args: Mapping[str, Any], kind: str, detail: str | None) -> str | None:
    """What the tool's own declaration adds for a failure of this kind (none of the generic hints)."""
    hint = woodpecker(tool).hints.get(kind)
    return hint(args, detail) if callable(hint) else hint


def _hint(tool: ToolSpec, args: Mapping[str, Any], kind: str, fault: Fault | None) -> tuple[str, Step | None]:
    """What to do next after a failure of this kind, and which next step that is."""
    if isinstance(fault, NoSuchStep):
        # The pipeline was just read: the repository exists and this account sees it.
        return "The repository and the pipeline were found; only the step id is not one of its steps.", None
    if kind == "forbidden":
        return (
            "This needs more rights (403): instance admin, or admin of the repository or organization. "
            "Call get_current_user to see whether this account is an admin"
            + (", and get_repository_permissions for the repository." if "repo_id" in args else "."),
            "check_rights",
        )
    if tool.name == "get_server_info" and kind in ("unavailable", "not_found"):
        # Its message says what to check; "call get_server_info" would send the model round in a circle.
        return "", None
    if kind == "not_found":
        inside = _listed_in_repository(tool)
        if inside is not None and "repo_id" in args:
            # The words say the repository or what the call names in it is missing: say where to look.
            return f"{inside} shows the {inside.removeprefix('list_')} of repository {args['repo_id']}.", None
        if "repo_id" in args:
            return (
                f"Not found (404): repository {args['repo_id']} or an object in it does not exist, or this "
                "account may not see it. The repository may not be activated: list_repositories with "
                "include_inactive=true shows forge repositories that are not; get_repository_permissions "
                "shows this account's rights.",
                "activation",
            )
        if tool.name == "resolve":
            return (
                "list_repositories shows the repositories this account sees, list_pipelines a repository's "
                "pipelines and get_pipeline a pipeline's steps.",
                None,
            )
        if tool.name == "lookup_repository":
            return (
                "Not found (404): the repository was never activated or this account cannot pull it. "
                "list_repositories with include_inactive=true shows forge repositories that are not activated.",
                "activation",
            )
        if not any(p.required for p in tool.params):
            # A call that names nothing can miss nothing on a Woodpecker server: the URL is the likelier cause.
            return (
                "This call names no object, so WOODPECKER_URL may not be the root of a Woodpecker server: call "
                "get_server_info to check it.",
                None,
            )
        listing = f"list_{tool.group}"
        if listing in _LISTS and listing != tool.name:
            return f"Check the id or name: {listing} shows the existing ones.", None
        return "Check the id or name: the matching list_* tool shows the existing ones.", None
    return _HINTS.get(kind, _DEFAULT_HINT)


# The list tool of each group of tools whose objects live in a repository, and the list tools by name.
_IN_REPOSITORY = {"pipelines": "list_pipelines", "logs": "list_pipelines", "crons": "list_crons"}
_SCOPED = {"secrets": "list_secrets", "registries": "list_registries"}
_LISTS = frozenset(
    f"list_{group}"
    for group in ("pipelines", "secrets", "registries", "crons", "organizations", "users", "agents", "forges")
)
# Arguments that only pick or page, never name the object a call is about.
_NOT_NAMES = frozenset({"repo_id", "scope", "confirm_token", "page", "per_page"})


def _listed_in_repository(tool: ToolSpec) -> str | None:
    """The list tool that shows the object a call names inside a repository (a pipeline's number,
    a cron's id, a secret's name), or None when it names only the repository or creates something."""
    listing = _IN_REPOSITORY.get(tool.group) or _SCOPED.get(tool.group)
    if listing is None or tool.name.startswith(("create_", "list_", "trigger_")):
        return None
    names = [p for p in tool.params if p.required and p.name not in _NOT_NAMES]
    return listing if names else None


def unreadable(tool: ToolSpec, args: Mapping[str, Any], why: object) -> ToolResult:
    """Woodpecker answered something the shaping cannot read (a ShapeError, a record that is no object)."""
    return failure(tool, args, kind="bad_response", message=f"Woodpecker's answer could not be read: {why}.")


def no_such_organization(tool: ToolSpec, args: Mapping[str, Any], org_id: int) -> ToolResult:
    """A call on the routes of an organization Woodpecker answered as the empty one (it holds no such id)."""
    message = (
        f"Organization {org_id} does not exist: Woodpecker answered an empty organization for it, "
        "whose routes reach the secrets and registries of every repository and of the instance, so "
        "this call was not sent."
    )
    return failure(tool, args, kind="not_found", message=message)


def failure(
    tool: ToolSpec,
    args: Mapping[str, Any],
    *,
    kind: str,
    message: str,
    status: int | None = None,
    detail: str | None = None,
    fault: Fault | None = None,
    data: Mapping[str, Any] | None = None,
) -> ToolResult:
    """An error result: what went wrong and what to do next. `message` must already be safe to show;
    `fault` is what the gateway observed when the message is (or quotes) its wording: it says which
    next step the message gives already and whether it quotes Woodpecker's `detail`.

    The text is one line (line breaks and controls removed, invisible characters escaped), whatever
    a message or a detail quotes. `data` is what Woodpecker's own strings the error needs (the names
    of a pipeline's steps): it joins the error object and, after the untrusted warning, the text as
    one line of JSON below that line, never the sentence itself (docs/adr/0045)."""
    generic, step = _hint(tool, args, kind, fault)
    specific = _specific_hint(tool, args, kind, detail)
    # After a tool-specific server error "try again later" would be wrong advice (a move may have happened).
    replaces_generic = bool(specific) and kind == "server_error"
    hint = specific if replaces_generic else " ".join(h for h in (specific, generic) if h)
    error: dict[str, Any] = {"kind": kind, "message": message, "hint": hint}
    if status is not None:
        error["status"] = status
    if detail:
        flat = strip_terminal(detail, keep_newlines=False)
        error["detail"] = flat if len(flat) <= 300 else flat[:299] + "…"
    failed = failed_repos(detail) if tool.name == "repair_repository" else []
    if failed:
        error["failed_repos"] = failed
    text = f"{tool.name} failed: {message.rstrip('.')}."
    if detail and not (isinstance(fault, Answered) and fault.quotes_detail):
        text += f" Woodpecker said: {error['detail']}"
    if specific:
        text += f" Important: {specific}"
    if generic and not replaces_generic and (fault is None or step not in fault.gives()):
        text += f" {generic}"
    text = one_line(text)
    if not data:
        return ToolResult({"error": error}, text, is_error=True)
    error.update(data)
    return ToolResult(
        {**UNTRUSTED_MARKERS, "error": error},
        "\n".join((UNTRUSTED_WARNING, text, compact(dict(data)))),
        is_error=True,
    )


def one_line(text: str) -> str:
    """An error's text as one line: its sentences in a row, no line break or control, nothing invisible."""
    return visible.escape(strip_terminal(text, keep_newlines=False))


def failed_repos(detail: str | None) -> list[str]:
    """The repositories a failed instance repair names in its JSON body ({error, failed_repos})."""
    if not detail or not detail.lstrip().startswith("{"):
        return []
    try:
        body = json.loads(detail)
    except ValueError:
        return []  # cut short by the gateway, or not JSON after all
    names = body.get("failed_repos") if isinstance(body, dict) else None
    if not isinstance(names, list):
        return []
    return [short(n) for n in names[:100] if isinstance(n, str | int)]
