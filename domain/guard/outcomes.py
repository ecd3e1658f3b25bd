"""What a guarded call answers when it does not run, or not yet: the guard's words, forge-agnostic.

The guarded-call use case (ports/use_cases/guarded.py) decides *which* outcome applies; this
module writes it, so that every sentence a person or a model reads about a refused, declined or
postponed call comes from the domain (ADR 0031: adapters and use cases carry facts, the domain
writes the words). Each function returns the one result type, `ToolResult`, with the same text in
`content` and in `structuredContent.message`, for clients that show only one of them.
"""

from typing import Any, Literal

from domain.calls import ToolResult
from domain.guard.audit import Reached
from domain.guard.question import flatten
from domain.guard.view_ticket import ViewState

# Who did not ask, on the token path: the client (it declared no dialog), this server (started with
# ELICITATION=false), or this server's connection (the client can show a dialog, but this connection
# has no way to reach it during the call). Only the first blames the client.
NoDialog = Literal["client", "server", "connection"]

_NOBODY_ASKED: dict[NoDialog, str] = {
    "server": "This server was started with ELICITATION=false, so it shows no dialog: nobody was asked.",
    "connection": (
        "This server cannot reach the client during a call on this connection, so it could not "
        "show the client's dialog: nobody was asked."
    ),
    # A gateway may drop the capability of a client that declared it: the text names both, and guesses
    # neither (guard.md §4: never blame a client that works).
    "client": (
        "The client connected to this server, or a gateway between it and the person, did not declare "
        "the elicitation capability, so this server cannot show a dialog: nobody was asked."
    ),
}

# Why a question ended without an answer from anyone (ADR 0048): the client (or a gateway) answered it
# with an error, nothing came back within the question's time, or what came back is no answer to it.
NoAnswer = Literal["error", "timeout", "malformed"]

_WHY_NO_ANSWER: dict[NoAnswer, str] = {
    "error": (
        "the client connected to this server, or a gateway between it and the person, answered the "
        "question with an error (it could not show it, or could not reach the person)"
    ),
    "timeout": "the question timed out before anyone answered it",
    "malformed": (
        "the client connected to this server, or a gateway between it and the person, sent back "
        "something that is no answer to the question"
    ),
}


EARLIER_UNKNOWN = (
    "An earlier approved attempt of this same call had an unknown outcome: its request may have reached "
    "the server it was sent to, and no answer said how it went. It may have taken effect already: check "
    "before you approve it again."
)


def with_earlier_unknown(question: str) -> str:
    """A question for a call whose earlier approved attempt ended unknown: the question, then a note."""
    return f"{question}\n\n{EARLIER_UNKNOWN}"


def error_result(kind: str, message: str, **extra: Any) -> ToolResult:
    """An error result in the runner's shape: `{"error": {"kind", "message"}}` plus `extra`."""
    return ToolResult(
        structured={"error": {"kind": kind, "message": message}, **extra}, text=message, is_error=True
    )


def audit_unwritable(reason: str, named: str) -> ToolResult:
    """A guarded call whose audit record could not be written (guard.md §8): nothing was done. The
    file is `named` by its setting, never its path; `reason` is the system's word for why."""
    message = (
        f"Nothing was done: {named} could not be written ({reason}), and "
        "a guarded call does not run without its audit record. The operator must make the file writable "
        "again (free the disk, put back a writable file); calls that read go on meanwhile."
    )
    return error_result("audit_unwritable", message, done=False, outcome="audit_unwritable")


def unknown_tool(tool: str) -> ToolResult:
    """A tool that does not exist, or is not in this caller's list."""
    return error_result(
        "unknown_tool", f"Unknown tool: {flatten(tool, 60)}. Call tools/list to see the tools."
    )


def denied_by_policy() -> ToolResult:
    """A tool the operator's policy denies: refused before anything was asked or sent (ADR 0079)."""
    return error_result(
        "denied_by_policy",
        "Nothing was done: this server's policy denies this tool, so every call of it is refused "
        "before anything is asked or sent. Only the operator can change that, in the server's policy "
        "file; do not retry it.",
        done=False,
    )


def four_eyes_unreachable() -> ToolResult:
    """A four-eyes tool (ADR 0084) whose question cannot reach the signed-in approval page on this
    request: no dialog or token may answer it, since the caller would approve their own call."""
    return error_result(
        "four_eyes_unreachable",
        "Nothing was done: this tool needs a second person's approval on this server's signed-in "
        "approval page, and this request cannot offer that page (the client does not declare URL-mode "
        "elicitation on a connection that can carry it, or the server runs with ELICITATION=false). "
        "A dialog or a confirmation token would let the caller approve their own call. Call it from a "
        "client that can open the page.",
        done=False,
    )


def duration_words(seconds: int) -> str:
    """`5 minutes`, `1 minute`, `90 seconds`: how a question's or a token's life is said."""
    if seconds % 60 == 0:
        minutes = seconds // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def read_failed(why: object, *, again: bool = False) -> ToolResult:
    """Reading the stored object the guard compares against failed (`again`: at the re-check)."""
    what = "re-reading" if again else "reading"
    return error_result(
        "read_failed", f"Nothing was done: {what} the current state failed. {why}", done=False
    )


# The texts below say "this tool" and "this same tool", never the tool's name: a gateway in front of
# this server may list it under another name (`ci__delete_secret`), and a call by our name
# would reach nothing there.


def kept_changing() -> ToolResult:
    """A dialog was asked again and again because the object moved under each answer."""
    return error_result(
        "changed",
        "Nothing was done: what this tool would change kept changing while the "
        "question was open. Check the object and call again.",
    )


def changed_since_token() -> ToolResult:
    """The object changed between a token's two calls so that the second would widen more."""
    return error_result(
        "changed",
        "Nothing was done: the object changed since the token was issued, and this same tool "
        "would now change more than its first call described. Call it again without "
        "confirm_token to see what it would do now and get a new token.",
        done=False,
    )


def store_unavailable(why: object) -> ToolResult:
    """The token or seal store could not be reached, so no approval could be checked."""
    return error_result("token_store_unavailable", str(why), done=False)


def declined(*, cancelled: bool) -> ToolResult:
    """The person said no (`cancelled`: dismissed the dialog instead). Not an error: nothing went wrong."""
    how = "Cancelled" if cancelled else "Declined"
    why = "the dialog was dismissed" if cancelled else "the person did not approve it"
    text = f"{how}, nothing was done: {why}, so this tool was not run."
    return ToolResult(
        structured={"done": False, "outcome": "cancelled" if cancelled else "declined", "message": text},
        text=text,
    )


# Where the approval page was put before the person (guard.md §4b), as the results say it.
_PAGE_WHERE: dict[Reached, str] = {
    "browser": "a person was asked in a browser on this machine",
    "url_elicitation": "a person was asked on a page whose link the client showed them",
}


def page_pending(ttl_seconds: int, reached: Reached = "browser") -> ToolResult:
    """The approval page is open before the person and has no decision yet. Its link is never said:
    only the person, at the page, can answer (ADR 0063)."""
    text = (
        f"Nothing was done yet: {_PAGE_WHERE[reached]}, and they have not answered "
        "yet. Call this same tool again with the same arguments to collect the answer; it waits on "
        f"the same page, which stays open for up to {duration_words(ttl_seconds)} from when it was "
        "shown. No answer there is a no."
    )
    return ToolResult(
        structured={
            "done": False,
            "outcome": "pending",
            "path": "page",
            "reached": reached,
            "message": text,
        },
        text=text,
    )


def page_expired(reached: Reached = "browser") -> ToolResult:
    """The approval page's life ended unanswered: a no nobody gave."""
    text = (
        f"Nothing was done: {_PAGE_WHERE[reached]}, and the question expired unanswered, so this "
        "tool was not run. Call it again to ask again."
    )
    return ToolResult(
        structured={
            "done": False,
            "outcome": "expired",
            "path": "page",
            "reached": reached,
            "message": text,
        },
        text=text,
    )


def no_answer(cause: NoAnswer) -> ToolResult:
    """No answer came back at all: a no nobody gave, never reported as the person's (fail closed all
    the same). `structuredContent.outcome` is `no_answer`, and `cause` says which of the three."""
    text = (
        f"No answer came back: {_WHY_NO_ANSWER[cause]}. Nobody approved or declined it, so nothing was "
        "done and this tool was not run. Call it again to ask again."
    )
    return ToolResult(
        structured={"done": False, "outcome": "no_answer", "cause": cause, "message": text},
        text=text,
    )


def token_issued(token: str, *, no_dialog: NoDialog, question: str, ttl_seconds: int) -> ToolResult:
    """The first of a token's two calls: what the second will do, and that nobody approved it."""
    text = (
        f"Nothing was done yet. {_NOBODY_ASKED[no_dialog]}\n\n"
        "To go ahead, call this same tool again with exactly the same arguments plus "
        f'confirm_token: "{token}". The token works once, only for these arguments, for '
        f"{duration_words(ttl_seconds)}.\n\n"
        f"What the second call will do:\n{question}\n\n"
        "The token proves only that the call was made twice with the same arguments. It "
        "does not show that a person saw or approved anything."
    )
    return ToolResult(
        structured={
            "done": False,
            "outcome": "confirmation_required",
            "confirm_token": token,
            "expires_in_seconds": ttl_seconds,
            "not_asked_by": "client" if no_dialog == "client" else "server",
            "message": text,
        },
        text=text,
    )


def token_rejected(*, local_store: str | None = None) -> ToolResult:
    """A confirm_token that does not fit: one answer for every reason, so none is leaked.

    The store answers only whether the token fits this call (it keeps digests under the call's
    fingerprint), so the text names the four ways a token fails without picking one; a token of the
    wrong form is refused earlier, by the argument check, with its own words. `local_store`, when
    pending tokens live in this process's memory, is the setting that shares them between processes:
    a second call that reaches another process (one per request, or a replica) can never redeem its
    token, so the text says that retrying cannot help and names the fix. At most 300 characters.
    """
    text = (
        "Nothing was done: confirm_token is wrong, expired, used, or for other arguments; no new one "
        "was issued. Call this same tool again without confirm_token."
    )
    if local_store is not None:
        text += (
            " If all fail, calls reach other processes, each with its own tokens in memory; retrying "
            f"cannot help: set {local_store}."
        )
    extra = {"token_store": "process_memory"} if local_store is not None else {}
    return error_result("token_rejected", text, done=False, **extra)


# The key of the approval view's data in a result's `_meta` (MCP Apps, ADR 0049): read by the forge's view
# only, and named for no forge, so the guard package serves another forge's server as it is.
APPROVAL_META_KEY = "approval_view"


def view_issued(
    ticket: str, *, tool: str, question: str, ttl_seconds: int, resource_uri: str, changed: bool = False
) -> ToolResult:
    """A guarded call on a host that shows MCP Apps views: the question goes to the approval view.

    The text says what an approval there proves and what to do where no view is shown. The view
    reads only `_meta` (the question, the tool's name and the ticket), never this text. `changed`:
    a new question, because what the call would do changed since the view's question was shown
    (the view shows it as a new question, below the record of the one it replaces; ADR 0066).
    """
    first = (
        "What this call would do changed since the question was shown, so that answer ran nothing; "
        "this is a new question. "
        if changed
        else ""
    )
    text = (
        f"Nothing was done yet. {first}The approval view of this server shows the person this question "
        f"with Approve and Decline buttons; the call runs once if they approve within "
        f"{duration_words(ttl_seconds)}, and not at all if they decline or nobody answers.\n\n"
        f"The question shown:\n{question}\n\n"
        "An approval there means it was approved in the host's view: the host keeps that button's tool "
        "from the model, as the MCP Apps specification requires. If no view with Approve and Decline "
        "appears in this host, it does not show MCP Apps views: nobody can approve this call here. Tell "
        "the person so: they can connect a client that shows a dialog, or the operator can start this "
        "server with ELICITATION=false for the two-call token, which asks nobody."
    )
    approval: dict[str, Any] = {
        "tool": tool,
        "question": question,
        "ticket": ticket,
        "expires_in_seconds": ttl_seconds,
    }
    if changed:
        approval["replaces"] = "changed"
    return ToolResult(
        structured={
            "done": False,
            "outcome": "approval_view",
            "expires_in_seconds": ttl_seconds,
            "message": text,
        },
        text=text,
        meta={"ui": {"resourceUri": resource_uri}, APPROVAL_META_KEY: approval},
    )


# What a view's ticket came to, as its state check and a closed ticket's answer name it (ADR 0066).
_TICKET_ENDED: dict[ViewState, str] = {
    "open": "it is still open",
    "expired": "it expired unanswered, and nothing was done",
    "unknown": (
        "this server has no record of it for this caller (it expired or was answered long ago, the "
        "server restarted, or it was another caller's)"
    ),
    "declined": "it was declined, and nothing was done",
    "approved": "it was approved and the call was started; how the call ended was not recorded",
    "ran": "it was approved, and the call ran once",
    "failed": "it was approved, and the call ended with an error",
    "not_run": "it was approved, but nothing was sent: the call could not go ahead",
    "unsettled": (
        "it was approved, and its outcome is unknown: the request may have reached the server it was sent "
        "to, and no answer said how it went"
    ),
    "changed": (
        "it was not run: what the call would do changed before it ran, so a new question replaced it"
    ),
}


def _ended(state: ViewState, then: ViewState | None) -> str:
    said = _TICKET_ENDED[state]
    if state == "changed" and then is not None:
        said += f"; of the new question, {_TICKET_ENDED[then]}"
    return said


def view_closed(state: ViewState, then: ViewState | None = None) -> ToolResult:
    """An approval view's answer whose ticket was closed already (answered before, in this showing of
    the view or another, expired, or not this caller's): this answer did nothing and asks nothing
    again; `state` says what the ticket came to, for the view to show instead of buttons."""
    text = f"This answer did nothing: its question was closed already ({_ended(state, then)})."
    structured: dict[str, Any] = {"done": False, "outcome": "view_closed", "state": state}
    if then is not None:
        structured["then"] = then
    return ToolResult(structured={**structured, "message": text}, text=text)


def view_state(
    state: ViewState, *, expires_in_seconds: int | None = None, then: ViewState | None = None
) -> ToolResult:
    """What the approval view learns when it is shown: whether its question is open (and for how
    long), else what it came to. Reading it changes nothing."""
    if state == "open" and expires_in_seconds is not None:
        text = f"This question is open for {expires_in_seconds} more seconds."
    else:
        text = f"Of this question, {_ended(state, then)}."
    structured: dict[str, Any] = {"outcome": "view_state", "state": state}
    if expires_in_seconds is not None:
        structured["expires_in_seconds"] = expires_in_seconds
    if then is not None:
        structured["then"] = then
    return ToolResult(structured={**structured, "message": text}, text=text)
