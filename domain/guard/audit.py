"""One audit record per guarded decision: ids and digests only, never forge-written text or a token."""

import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Literal

from domain.guard.fingerprint import short

Path = Literal["dialog", "token", "sealed", "app", "page"]
# On the `page` path: the server opened the page in the browser, or the client offered its link.
Reached = Literal["browser", "url_elicitation"]
# Every `asked` is closed by one of: approved, declined (the person said no), cancelled (the person
# dismissed the dialog), no_answer (an error, a time-out or something that is no answer came back),
# abandoned (the call ended while the question was open: the client cancelled it, timed out on its
# own, or went away), seal_rejected (2026-07-28), or failed. After `approved`, `abandoned` means the
# call ended before its result was known (ADR 0048). `denied`: the operator's policy refuses every call
# of the tool, so nothing was asked or sent (ADR 0079). `nothing_to_decide`: the read before the question
# found the target gone or its effect in place, so nothing was asked or sent (issue 37). `unknown`: after `approved`, the write may have
# reached the forge and no answer said how it went; the record's `read_back` says what one read found.
# On the approval page (path `page`, ADR 0063): `pending` (no decision in this call's window; the page
# stays open and a retry of the same call waits on it) and `expired` (its life ended unanswered).
# `refused` (OAuth mode's page): a signed-in person who may not answer tried to (not listed, or the
# caller on a four-eyes tool); the question stays open for someone who may.
Outcome = Literal[
    "asked",
    "approved",
    "declined",
    "cancelled",
    "no_answer",
    "abandoned",
    "token_issued",
    "token_rejected",
    "seal_rejected",
    "ticket_issued",
    "ticket_rejected",
    "executed",
    "failed",
    "unknown",
    "denied",
    "nothing_to_decide",
    "pending",
    "expired",
    "refused",
]

# Target names whose string values are a fixed vocabulary (not typed by anyone) and may be kept.
PLAIN_TARGETS = frozenset({"scope"})
_PLAIN_VALUE = re.compile(r"[a-z_]{1,32}")


# A URL's user info (`user:password@`), wherever a parser could end the authority.
_USER_INFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def _digest(value: str) -> str:
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:12]


def _without_user_info(value: str) -> str:
    """A URL without `user:password@`: an unsalted digest of a password could be tested against
    guesses, so the password never enters it (the same URL with any password digests alike)."""
    return _USER_INFO.sub(r"\1@", value, count=1)


def _target_value(name: str, value: object) -> object:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if name in PLAIN_TARGETS and _PLAIN_VALUE.fullmatch(value):
            return value
        # A secret name, login, address or URL: correlate by digest, never store the text.
        return _digest(_without_user_info(value))
    return _digest(repr(value))


def audit_event(
    *,
    now: float,
    tool: str,
    targets: Mapping[str, object],
    fingerprint: str,
    path: Path,
    outcome: Outcome,
    principal: str | None,
    policy: str | None = None,
    read_back: str | None = None,
    reached: Reached | None = None,
    approver: tuple[str, str] | None = None,
    four_eyes: bool | None = None,
) -> dict[str, object]:
    """The record: ISO-8601 UTC time, tool, target ids, short fingerprint, path, outcome, principal.

    `fingerprint` should be the call's `audit_fingerprint` (which depends on no body value, so
    no secret value can be tested against it); it is shortened. `principal` is already a keyed
    digest; it is shortened further. No token value, no secret and no text written by the forge
    or a repository can reach the record. `policy`, when the operator's policy refused the call or
    added its question, names that rule (`tools.NAME.deny`, `tools.NAME.ask`): the record then has it.
    `read_back`, for an `unknown` outcome, is the forge's fixed word for what one read found since
    ("approved", "still_blocked", "gone", "none" when no read can tell, ...).
    `approver` (OAuth mode's page): the subject and the name or e-mail of the person who signed in to
    answer; `four_eyes`: whether that person is someone other than the caller.
    """
    event: dict[str, object] = {
        "event": "guard",
        "time": datetime.fromtimestamp(now, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "tool": tool,
        "targets": {name: _target_value(name, value) for name, value in targets.items()},
        "fingerprint": short(fingerprint),
        "path": path,
        "outcome": outcome,
        "principal": short(principal) if principal is not None else None,
    }
    if policy is not None:
        event["policy"] = policy
    if reached is not None:
        # The `page` path: how the page came before the person (ADR 0063, 0064).
        event["reached"] = reached
    if approver is not None:
        event["approver"] = {"sub": approver[0], "name": approver[1]}
    if four_eyes is not None:
        event["four_eyes"] = four_eyes
    if read_back is not None:
        event["read_back"] = read_back if _PLAIN_VALUE.fullmatch(read_back) else "unreadable"
    return event


def signed_by(
    event: Mapping[str, object], *, now: float, approver: tuple[str, str], four_eyes: bool
) -> dict[str, object]:
    """`event` (a record made ahead, without its approver) as of `now`, by `approver`: the refused line
    a replica writes for a page another replica asked (ADR 0085)."""
    signed = dict(event)
    signed["time"] = (
        datetime.fromtimestamp(now, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )
    signed["approver"] = {"sub": approver[0], "name": approver[1]}
    signed["four_eyes"] = four_eyes
    return signed
