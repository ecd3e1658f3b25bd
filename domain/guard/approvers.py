"""Who may answer an approval page behind a sign-in (OAuth mode, guard.md §4b [team]), with no I/O.

By default only the caller: the person whose access token made the call, recognised by the same
principal (a keyed digest of issuer and subject). The operator's list of approvers widens that to
the people it names: a subject (`sub:ID`), a verified e-mail (`email:ADDRESS`) or a group in the ID
token's `groups` claim (`group:NAME`). For a four-eyes tool the caller may never answer, whatever
the list says.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

KINDS = ("sub", "email", "group")
Verdict = Literal["allowed", "not_listed", "four_eyes"]


@dataclass(frozen=True, slots=True)
class Approvers:
    """The parsed list of approvers: beyond the caller, these subjects, e-mails and groups."""

    subjects: frozenset[str] = frozenset()
    emails: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @property
    def anyone_but_the_caller(self) -> bool:
        return bool(self.subjects or self.emails or self.groups)

    def described(self) -> list[str]:
        """Who may answer, in words for the page (ids and names the operator wrote, never a pusher)."""
        return [
            *(f"the subject {s}" for s in sorted(self.subjects)),
            *(f"the e-mail {e}" for e in sorted(self.emails)),
            *(f"members of the group {g}" for g in sorted(self.groups)),
        ]


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The person a verified ID token names."""

    subject: str
    email: str | None  # only when the provider says it is verified
    name: str
    groups: frozenset[str]

    @property
    def shown(self) -> str:
        """The name the audit and the page use: the e-mail, else the name, else the subject."""
        return self.email or self.name or self.subject


def parse_approvers(entries: Iterable[str]) -> Approvers:
    """`sub:ID`, `email:ADDRESS` or `group:NAME` entries. Raises ValueError naming the bad entry's number."""
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for number, entry in enumerate(entries, start=1):
        kind, sep, value = entry.partition(":")
        if not sep or kind not in KINDS or not value.strip():
            raise ValueError(f"entry {number} is not `sub:ID`, `email:ADDRESS` or `group:NAME`")
        found[kind].add(value.strip().lower() if kind == "email" else value.strip())
    return Approvers(frozenset(found["sub"]), frozenset(found["email"]), frozenset(found["group"]))


def verdict(
    person: SignedIn,
    *,
    is_caller: bool,
    approvers: Approvers,
    four_eyes: bool,
) -> Verdict:
    """May `person` answer a question? `is_caller`: they are the person whose call asks it."""
    if four_eyes and is_caller:
        return "four_eyes"
    if is_caller and not four_eyes:
        return "allowed"
    listed = (
        person.subject in approvers.subjects
        or (person.email is not None and person.email.lower() in approvers.emails)
        or bool(person.groups & approvers.groups)
    )
    return "allowed" if listed else "not_listed"


def who_may_answer(approvers: Approvers, *, four_eyes: bool) -> Sequence[str]:
    """Who may answer, for a person who may not: the caller (unless four eyes), then the list."""
    caller = [] if four_eyes else ["the person whose call asks it"]
    return [*caller, *approvers.described()]
