"""What a conditional guard may read before it decides, beyond one plain request (see tool.CurrentReads).

A tool's `current` names its reads; a mapping of several gives the rule one object with each answer
under its key, read in the mapping's order. Besides a plain `Request` (a failure ends the call with
nothing done) a read may be:

- a `Probe`: a read that may fail without failing the call. A clear 404 answers `ABSENT`; any
  other failure (a 403 for want of rights, a 5xx, a timeout, an unreadable answer) leaves its key
  out. A rule counts a missing key, and an `ABSENT` where it needs an object, as the case that asks
  (fail closed: for a wider secret "it is there", for a branch's pipelines "unread"). Its request is
  fixed, or built from the arguments and the answers so far, so it can depend on an earlier read
  (None: nothing to read, the key is left out).
- a `FindInPages` (domain/woodpecker/plans.py): walk a list until an entry matches.

Nothing here sends anything.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from domain.woodpecker.requests import Request

Args = Mapping[str, Any]
Answers = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Probe:
    """A read that may find nothing: 404 answers ABSENT, any other failure leaves the key out."""

    request: Request | Callable[[Args, Answers], Request | None]

    def planned(self, args: Args, answers: Answers) -> Request | None:
        """The request to send now, or None when there is nothing to read."""
        return self.request if isinstance(self.request, Request) else self.request(args, answers)


class _Absent:
    """The answer of a probe that Woodpecker answered 404. No JSON value is this object."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


def absent(current: Mapping[str, Any] | None, key: str) -> bool:
    """Whether the probe under `key` clearly found nothing; unread, failed or found is False."""
    return current is not None and current.get(key) is ABSENT
