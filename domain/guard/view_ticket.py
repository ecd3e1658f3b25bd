"""What became of an approval view's ticket (ADR 0066): the record a view reads whenever it is shown.

A host may render a view again long after its question was answered (a conversation reloaded),
from the same tool result and so with the same ticket. The ticket alone cannot run twice, but the
view must also be able to say what was decided instead of offering buttons. So each ticket has a
record beside it in the token store: `open` while it waits (with its expiry, and the binding its
pending entry is kept under, so that a question replaced by a new one can be closed), then the
answer's end. Pure: values in, values out; the store holds the encoded text.
"""

from dataclasses import dataclass
from typing import Literal

from domain.calls import ToolResult
from domain.guard.tokens import digest

# What an answer made of a ticket. `approved`: the call was started and its end was not recorded
# (still running, or the server stopped meanwhile). `not_run`: approved, but nothing was sent (the
# re-read before the write failed). `changed`: not run, because what the call would do changed
# before it ran; a new question (`then`) replaced it. `unsettled`: approved, and its outcome is unknown (the
# write may have reached the forge and no answer said how it went; ADR 0080).
Decided = Literal["declined", "approved", "ran", "failed", "not_run", "changed", "unsettled"]
DECIDED: tuple[Decided, ...] = ("declined", "approved", "ran", "failed", "not_run", "changed", "unsettled")
# What a view is told: `open`, a decided state, `expired` (an open ticket past its time), or
# `unknown` (no record this caller may read: never issued to it, or forgotten).
ViewState = Literal[
    "open", "expired", "unknown", "declined", "approved", "ran", "failed", "not_run", "changed", "unsettled"
]

# How long a decided ticket's record is kept: a conversation reloaded within a week shows what
# was decided; later, the view says only that its question is closed. The store bounds the count.
RECORD_TTL_SECONDS = 7 * 24 * 3600
# How many replacements a view's state follows to the question that finally ended (each one is an
# approval the object moved under: a handful at most in practice).
MAX_HOPS = 4

_SEP = "|"


@dataclass(frozen=True, slots=True)
class OpenTicket:
    """A ticket waiting for its answer until `expires_at`, its pending entry kept under `binding`."""

    expires_at: float
    binding: str


@dataclass(frozen=True, slots=True)
class DecidedTicket:
    """An answered ticket; `then` (for `changed` only) is the record key of the question that replaced it."""

    state: Decided
    then: str | None = None


TicketRecord = OpenTicket | DecidedTicket


def record_key(ticket: str) -> str:
    """Where a ticket's record is kept: named by the ticket's digest, under a label no token key has."""
    return "app-ticket-record:" + digest(ticket)


def encode(record: TicketRecord) -> str:
    """The record as the store keeps it."""
    if isinstance(record, OpenTicket):
        return _SEP.join(("open", repr(float(record.expires_at)), record.binding))
    if record.then is not None:
        return _SEP.join((record.state, record.then))
    return record.state


def decode(value: object) -> TicketRecord | None:
    """The record `encode` wrote, or None for anything else (never raises)."""
    if not isinstance(value, str):
        return None
    parts = value.split(_SEP)
    if parts[0] == "open" and len(parts) == 3 and parts[2] and _SEP not in parts[2]:
        try:
            expires_at = float(parts[1])
        except ValueError:
            return None
        if expires_at != expires_at or expires_at in (float("inf"), float("-inf")):
            return None
        return OpenTicket(expires_at, parts[2])
    if parts[0] not in DECIDED:
        return None
    state: Decided = parts[0]
    if len(parts) == 1:
        return DecidedTicket(state)
    if len(parts) == 2 and state == "changed" and parts[1]:
        return DecidedTicket(state, parts[1])
    return None


def view_state(record: TicketRecord | None, now: float) -> tuple[ViewState, int | None]:
    """What the view is told of one record at `now`, with the seconds left to answer when it is open."""
    if record is None:
        return "unknown", None
    if isinstance(record, OpenTicket):
        left = int(record.expires_at - now)
        return ("open", left) if left > 0 else ("expired", None)
    return record.state, None


def ended(result: ToolResult) -> Decided:
    """How an approved call ended, for its ticket's record: ran, failed (an error that may have come
    after the write reached the forge), or not run (an error that says nothing was sent)."""
    if not result.is_error:
        return "ran"
    if result.unknown is not None:
        return "unsettled"
    return "not_run" if result.structured.get("done") is False else "failed"
