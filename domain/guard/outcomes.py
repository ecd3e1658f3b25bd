"""What a guarded call answers when it does not run, or not yet: the guard's words, forge-agnostic.

The guarded-call use case (ports/use_cases/guarded.py) decides *which* outcome applies; this
module writes it, so that every sentence a person or a model reads about a refused, declined or
postponed call comes from the domain (ADR 0031: adapters and use cases carry facts, the domain
writes the words). Each function returns the one result type, `ToolResult`, with the same text in
`content` and in `structuredContent.message`, for clients that show only one of them.
"""

from typing import Any, Literal

from domain.calls import ToolResult
from domain.guard.question import flatten

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
    "client": (
        "This client did not declare the elicitation capability, so it cannot show a "
        "dialog: nobody was asked."
    ),
}


def error_result(kind: str, message: str, **extra: Any) -> ToolResult:
    """An error result in the runner's shape: `{"error": {"kind", "message"}}` plus `extra`."""
    return ToolResult(
        structured={"error": {"kind": kind, "message": message}, **extra}, text=message, is_error=True
    )


def unknown_tool(tool: str) -> ToolResult:
    """A tool that does not exist, or is not in this caller's list."""
    return error_result(
        "unknown_tool", f"Unknown tool: {flatten(tool, 60)}. Call tools/list to see the tools."
    )


def read_failed(why: object, *, again: bool = False) -> ToolResult:
    """Reading the stored object the guard compares against failed (`again`: at the re-check)."""
    what = "re-reading" if again else "reading"
    return error_result("read_failed", f"Nothing was done: {what} the current state failed. {why}")


def kept_changing(tool: str) -> ToolResult:
    """A dialog was asked again and again because the object moved under each answer."""
    return error_result(
        "changed",
        f"Nothing was done: what {tool} would change kept changing while the "
        "question was open. Check the object and call again.",
    )


def changed_since_token(tool: str) -> ToolResult:
    """The object changed between a token's two calls so that the second would widen more."""
    return error_result(
        "changed",
        f"Nothing was done: the object changed since the token was issued, and {tool} "
        "would now change more than its first call described. Call it again without "
        "confirm_token to see what it would do now and get a new token.",
        done=False,
    )


def store_unavailable(why: object) -> ToolResult:
    """The token or seal store could not be reached, so no approval could be checked."""
    return error_result("token_store_unavailable", str(why), done=False)


def declined(tool: str, *, cancelled: bool, answered: bool = True) -> ToolResult:
    """The person said no (`cancelled`: dismissed the dialog instead; not `answered`: no answer came
    back from the client at all, which is a no nobody gave and must not be reported as the person's)."""
    how = "Cancelled" if cancelled else "Declined"
    why = "the dialog was dismissed" if cancelled else "the person did not approve it"
    text = f"{how}, nothing was done: {why}, so {tool} was not run."
    if not answered:
        text = (
            "No answer came back from the client's dialog (it failed, timed out, or answered in a "
            f"form this server cannot read), so nothing was done and {tool} was not run. Nobody "
            "approved or declined it; call it again to ask again."
        )
    return ToolResult(
        structured={"done": False, "outcome": "cancelled" if cancelled else "declined", "message": text},
        text=text,
    )


def token_issued(
    tool: str, token: str, *, no_dialog: NoDialog, question: str, ttl_seconds: int
) -> ToolResult:
    """The first of a token's two calls: what the second will do, and that nobody approved it."""
    text = (
        f"Nothing was done yet. {_NOBODY_ASKED[no_dialog]}\n\n"
        f"To go ahead, call {tool} again with exactly the same arguments plus "
        f'confirm_token: "{token}". The token works once, only for these arguments, for '
        f"{ttl_seconds // 60} minutes.\n\n"
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


def token_rejected(tool: str) -> ToolResult:
    """A confirm_token that does not fit: one answer for every reason, so none is leaked."""
    return error_result(
        "token_rejected",
        "Nothing was done: that confirm_token is not valid for this call (wrong, expired, "
        "already used, or issued for other arguments). No new token was issued. Call "
        f"{tool} again without confirm_token to get one.",
        done=False,
    )
