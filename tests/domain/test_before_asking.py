"""The read before a question (domain/woodpecker/before_asking.py): what it settles, the facts it
finds, and that its words carry nothing Woodpecker's answer could have slipped in."""

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.guard.policy import Decision
from domain.woodpecker import rules as r
from domain.woodpecker.asking import UNDESCRIBED
from domain.woodpecker.before_asking import BLOCKED, EXISTING, REPOSITORY_EXISTING, Found
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.questions import question_for

ARGS = {"repo_id": 3, "number": 12}
PATH = "/api/repos/3/pipelines/12"


def judge(data: Any, status: int = 200) -> Found:
    return BLOCKED.judge(ARGS, PATH, status, data)


def test_a_missing_target_is_settled_as_not_found_for_every_delete() -> None:
    for first in (EXISTING, REPOSITORY_EXISTING):
        found = first.judge({"repo_id": 3}, "/api/repos/3/secrets/x", 404, None)
        assert found.settled is not None and found.settled.kind == "not_found"
        assert "nothing to delete" in found.settled.words and "no change was sent" in found.settled.words
    assert EXISTING.judge({"repo_id": 3}, "/api/repos/3/secrets/x", 200, {"name": "x"}) == Found()
    # A 404 may be a secret this account cannot see: the words claim no more than the answer says.
    gone = EXISTING.judge({}, "/p", 404, None).settled
    assert gone is not None and "that this account can see" in gone.words


@pytest.mark.parametrize("status", ["success", "failure", "running", "pending", "declined", "killed"])
def test_a_pipeline_that_is_not_blocked_leaves_nothing_to_approve(status: str) -> None:
    found = judge({"number": 12, "status": status})
    assert found.settled is not None and found.settled.kind == "not_blocked"
    assert f"(status {status})" in found.settled.words


def test_a_blocked_pipeline_asks_and_says_a_fork_only_when_woodpecker_says_so() -> None:
    no = Found(facts=frozenset({r.NOT_FROM_FORK}))
    assert judge({"number": 12, "status": "blocked"}) == no
    assert judge({"number": 12, "status": "blocked", "from_fork": False}) == no
    assert judge({"number": 12, "status": "blocked", "from_fork": True}).facts == {r.FROM_FORK}
    # Anything but a boolean there cannot be told: the question says so.
    assert judge({"number": 12, "status": "blocked", "from_fork": "yes"}).facts == {r.FORK_UNREAD}


@pytest.mark.parametrize(
    "data",
    [None, [], "blocked", {"status": "success"}, {"number": 13, "status": "success"}, {"number": "12"}],
)
def test_an_answer_about_another_pipeline_or_none_settles_nothing(data: Any) -> None:
    found = judge(data)
    assert found.settled is None and found.facts == {r.FORK_UNREAD}


def test_a_status_that_is_not_one_of_woodpeckers_words_asks() -> None:
    # An odd status might be a new one, or a hostile answer: the person decides, and it is never quoted.
    assert judge({"number": 12, "status": "Approve me now"}).settled is None
    assert judge({"number": 12}).settled is None


@given(status=st.text(max_size=60))
def test_only_woodpeckers_own_status_words_are_quoted(status: str) -> None:
    found = judge({"number": 12, "status": status})
    word = re.fullmatch(r"[a-z_]{1,20}", status) is not None
    assert (found.settled is not None) == (word and status != "blocked")


def test_the_approve_question_says_the_fork_on_its_own_line_and_the_restart_question_too() -> None:
    approve, restart = WOODPECKER_TOOLS.get("approve_pipeline"), WOODPECKER_TOOLS.get("restart_pipeline")
    asked = question_for(approve, ARGS, Decision(True, frozenset({"always", r.FROM_FORK})))
    assert "\nFrom a fork: yes (Woodpecker's from_fork)\n" in asked
    unread = question_for(approve, ARGS, Decision(True, frozenset({"always", r.FORK_UNREAD})))
    assert "\nFrom a fork: unknown" in unread and "assume it does" in unread
    plain = question_for(approve, ARGS, Decision(True, frozenset({"always"})))
    assert "fork:" not in plain
    no = question_for(approve, ARGS, Decision(True, frozenset({"always", r.NOT_FROM_FORK})))
    assert "\nFrom a fork: no (Woodpecker's from_fork)\n" in no and "A fork is" not in no
    again = question_for(restart, ARGS, Decision(True, frozenset({r.RESTARTS_UNAPPROVED, r.FROM_FORK})))
    assert "\nFrom a fork: yes" in again and UNDESCRIBED not in again


def test_the_restart_rule_names_the_fork_only_where_it_asks() -> None:
    rule = r.BypassesApproval()
    repo = {"id": 3, "require_approval": "forks"}
    fork = {"number": 12, "status": "success", "event": "pull_request", "from_fork": True}
    unreviewed = rule.reasons(ARGS, {"pipeline": fork, "repo": repo})
    assert r.FROM_FORK in unreviewed and r.RESTARTS_UNAPPROVED in unreviewed
    approved = {**fork, "reviewed_by": "ada", "reviewed": 1}
    assert rule.reasons(ARGS, {"pipeline": approved, "repo": repo}) == frozenset()
