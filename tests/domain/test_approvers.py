"""Who may answer an approval page behind a sign-in: the caller by default, the listed approvers, never the caller under four eyes."""

import pytest

from domain.guard.approvers import SignedIn, parse_approvers, verdict, who_may_answer

ALICE = SignedIn("alice", "alice@example.org", "alice", frozenset({"developers"}))
BOB = SignedIn("bob", "bob@example.org", "bob", frozenset({"ci-approvers"}))
UNVERIFIED = SignedIn("eve", None, "eve", frozenset())


@pytest.mark.parametrize(
    ("person", "is_caller", "entries", "four_eyes", "expected"),
    [
        (ALICE, True, [], False, "allowed"),
        (BOB, False, [], False, "not_listed"),
        (BOB, False, ["group:ci-approvers"], False, "allowed"),
        (BOB, False, ["email:BOB@example.org"], False, "allowed"),
        (BOB, False, ["sub:bob"], True, "allowed"),
        (ALICE, True, ["sub:alice", "group:developers"], True, "four_eyes"),
        (UNVERIFIED, False, ["email:eve@example.org"], False, "not_listed"),
    ],
)
def test_who_may_answer(
    person: SignedIn, is_caller: bool, entries: list[str], four_eyes: bool, expected: str
) -> None:
    approvers = parse_approvers(entries)
    assert verdict(person, is_caller=is_caller, approvers=approvers, four_eyes=four_eyes) == expected


def test_the_refusal_lists_who_may_answer_and_leaves_out_the_caller_under_four_eyes() -> None:
    approvers = parse_approvers(["group:ci-approvers"])
    assert who_may_answer(approvers, four_eyes=False) == [
        "the person whose call asks it",
        "members of the group ci-approvers",
    ]
    assert who_may_answer(approvers, four_eyes=True) == ["members of the group ci-approvers"]
