"""The one read a guarded call makes before a person is asked (issue 37, guard.md §1).

Two things are worth knowing before a question goes out. Whether there is anything to decide: a
delete whose target Woodpecker does not hold (404), or an approval of a pipeline that is no longer
blocked, would only teach the person to click through a question whose yes does nothing; such a
call is answered without a question and without its write. And the server facts the question must
carry: whether the pipeline to approve comes from a fork.

The read never opens a way around the question: it can only end a call (as an error result, with
nothing sent) or add facts to what is asked. A read that fails, or whose answer is not about the
object named, leaves the call to ask as before, saying what could not be read. A call that carries
an answer already (a sealed retry, a token, a view's button) is past its question: its write runs
against Woodpecker's own checks. Every sentence here is built from the arguments and fixed words; a
status is named only when it is one of Woodpecker's own words (read_back), never text anyone pushed.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.woodpecker import rules as r
from domain.woodpecker.read_back import status_word
from domain.woodpecker.requests import Request, pipeline, repository

Args = Mapping[str, Any]
_UNASKED = "nobody was asked and no change was sent"


@dataclass(frozen=True, slots=True)
class Settled:
    """Why the call ends before its question: `kind` is the error kind its write would have met
    (a 404's `not_found`; `not_blocked`, a pipeline with no approval waiting), `words` the sentence saying so."""

    kind: str
    words: str
    status: int | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """What the read found: `settled` when nothing is left to decide, else the reason ids of the
    facts the question says (`facts`, added to the decision's reasons, so that an approval, a seal
    or a token covers only a question that said them)."""

    settled: Settled | None = None
    facts: frozenset[str] = frozenset()


NOTHING = Found()


@dataclass(frozen=True, slots=True)
class BeforeAsking:
    """`request`: the read, from the arguments and the path the write would go to. `judge`: what its
    answer (a 404 comes as status 404 with no data) leaves to decide. `unread`: the facts a question
    says when the read failed (what it could not find out)."""

    request: Callable[[Args, str], Request]
    judge: Callable[[Args, str, int, Any], Found]
    unread: frozenset[str] = frozenset()


def _there(args: Args, path: str, status: int, data: Any) -> Found:
    if status == 404:
        return Found(
            Settled(
                "not_found",
                f"Woodpecker answered 404 for {path}: nothing there that this account can see, so nothing "
                f"to delete; {_UNASKED}.",
                404,
            )
        )
    return NOTHING


# A delete: the object at the path the delete would go to. The GET there reads exactly that object
# (the same path, encoded once by requests.plan).
EXISTING = BeforeAsking(lambda args, path: Request("GET", path), _there)
# A repository's delete may carry `remove`: the repository itself is read, by its id.
REPOSITORY_EXISTING = BeforeAsking(lambda args, path: repository(args["repo_id"]), _there)


def _blocked(args: Args, path: str, status: int, data: Any) -> Found:
    what = f"pipeline {args['number']} of repository {args['repo_id']}"
    if status == 404:
        return Found(
            Settled(
                "not_found",
                f"Woodpecker answered 404 for {what}: none that this account can see, so nothing to "
                f"approve; {_UNASKED}.",
                404,
            )
        )
    if not isinstance(data, Mapping) or data.get("number") != args["number"]:
        # Not an answer about the pipeline named: nothing is settled by it, and the fork is unknown.
        return Found(facts=frozenset({r.FORK_UNREAD}))
    state = status_word(data)
    if state is not None and state != "blocked":
        # Woodpecker refuses it ("cannot approve a pipeline with status ..."): nothing to approve.
        return Found(
            Settled(
                "not_blocked",
                f"{what[0].upper()}{what[1:]} is not blocked (status {state}): there is nothing to approve; "
                f"{_UNASKED}.",
            )
        )
    fork = data.get("from_fork")
    if fork is True:
        return Found(facts=frozenset({r.FROM_FORK}))
    if fork is None or fork is False:
        return Found(facts=frozenset({r.NOT_FROM_FORK}))  # Woodpecker leaves from_fork out when false
    return Found(facts=frozenset({r.FORK_UNREAD}))


# An approval: the pipeline, whose status says whether anything is held and whose from_fork is the
# fact its question must carry.
BLOCKED = BeforeAsking(lambda args, path: pipeline(args), _blocked, unread=frozenset({r.FORK_UNREAD}))
