"""After a write of unknown outcome, the one read that tells what Woodpecker holds now (guard.md §7).

A write whose request may have reached Woodpecker and whose answer was lost (`faults.Unsettled`)
is said as unknown, never "try again". Where one read can tell whether its effect is in place, the
tool declares it (`WoodpeckerTool.settled`): which request to send, given the arguments and the
path the write went to, and what its answer means. The finding is worded here, from the arguments
and fixed words only: no text Woodpecker or a repository wrote reaches it (a status is named only
when it is one of Woodpecker's own words).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from domain.woodpecker.requests import Request, pipeline, repository

Args = Mapping[str, Any]

# What the read-back found. `unread`: the read failed too; `none`: no read can tell for this tool.
Found = Literal[
    "approved",
    "still_blocked",
    "declined",
    "gone",
    "still_there",
    "deactivated",
    "moved",
    "not_moved",
    "paused",
    "not_paused",
    "unread",
    "none",
]
_STATUS_WORD = re.compile(r"[a-z_]{1,20}")


@dataclass(frozen=True, slots=True)
class Finding:
    """What the read-back found (`found`, the audit's word for it) and the sentence saying so."""

    found: Found
    words: str


@dataclass(frozen=True, slots=True)
class ReadBack:
    """`request`: the read, from the arguments and the path the write was sent to. `judge`: what its
    answer (status and data; a 404 comes as status 404 with no data) says about the write's effect."""

    request: Callable[[Args, str], Request]
    judge: Callable[[Args, int, Any], Finding]


NOT_READ = "Reading it back failed too, so what Woodpecker holds now is not known."
NO_READ = Finding("none", "")


def unread(why: str) -> Finding:
    """The read-back itself failed (`why`: its own one-line message)."""
    return Finding("unread", f"{NOT_READ} (The read: {why.rstrip('.')}.)")


def status_word(data: Any) -> str | None:
    status = data.get("status") if isinstance(data, Mapping) else None
    return status if isinstance(status, str) and _STATUS_WORD.fullmatch(status) else None


def _approved(args: Args, status: int, data: Any) -> Finding:
    what = f"pipeline {args['number']} of repository {args['repo_id']}"
    state = status_word(data)
    if status == 404 or state is None:
        return Finding(
            "none", f"Read back just now, {what} could not be told apart (no status in the answer)."
        )
    if state == "blocked":
        return Finding(
            "still_blocked",
            f"Read back just now, {what} is still blocked: the approval has not taken effect, as far as one "
            "read can tell.",
        )
    if state == "declined":
        return Finding("declined", f"Read back just now, {what} is declined: it was not approved.")
    return Finding(
        "approved",
        f"Read back just now, {what} is no longer blocked (status {state}): the approval took effect.",
    )


APPROVED = ReadBack(lambda args, sent: pipeline(args), _approved)


def _gone(what: str) -> Callable[[Args, int, Any], Finding]:
    def judge(args: Args, status: int, data: Any) -> Finding:
        if status == 404:
            return Finding(
                "gone", f"Read back just now, Woodpecker no longer holds the {what}: the delete took effect."
            )
        return Finding(
            "still_there",
            f"Read back just now, Woodpecker still holds the {what}: the delete has not taken effect, as far "
            "as one read can tell.",
        )

    return judge


def gone(what: str) -> ReadBack:
    """A delete: the object read at the path the delete went to is gone (404) or still there."""
    return ReadBack(lambda args, sent: Request("GET", sent), _gone(what))


def _repository_gone(args: Args, status: int, data: Any) -> Finding:
    if status != 404 and isinstance(data, Mapping) and data.get("active") is False:
        return Finding(
            "deactivated",
            f"Read back just now, repository {args['repo_id']} is no longer active: the delete took effect.",
        )
    return _gone(f"repository {args['repo_id']}")(args, status, data)


REPOSITORY_GONE = ReadBack(lambda args, sent: repository(args["repo_id"]), _repository_gone)


def _moved(args: Args, status: int, data: Any) -> Finding:
    name = data.get("full_name") if isinstance(data, Mapping) else None
    what = f"repository {args['repo_id']}"
    if not isinstance(name, str):
        return Finding(
            "none", f"Read back just now, {what} could not be told apart (no owner/name in the answer)."
        )
    if name.casefold() == str(args["to"]).casefold():
        return Finding("moved", f"Read back just now, {what} has the new owner/name: the move took effect.")
    return Finding(
        "not_moved",
        f"Read back just now, {what} does not have the new owner/name: the move has not taken effect, as far as "
        "one read can tell.",
    )


MOVED = ReadBack(lambda args, sent: repository(args["repo_id"]), _moved)


def _paused(args: Args, status: int, data: Any) -> Finding:
    paused = data.get("paused") if isinstance(data, Mapping) else None
    if paused is True:
        return Finding("paused", "Read back just now, the queue is paused: the pause took effect.")
    if paused is False:
        return Finding(
            "not_paused",
            "Read back just now, the queue is not paused: the pause has not taken effect, as far as one read "
            "can tell.",
        )
    return Finding(
        "none", "Read back just now, the queue's state could not be told (no paused in the answer)."
    )


PAUSED = ReadBack(lambda args, sent: Request("GET", "/api/queue/info"), _paused)
