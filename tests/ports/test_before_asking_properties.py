"""The read before a question (issue 37), over generated targets and generated answers to that read, on
every way of asking, through the guarded-call use case with a fake Woodpecker that records every request.

Whatever the read answers (a 404, a pipeline in any status, hostile fields, a refusal, a fault), no
guarded write is sent before a person's yes; a call the read ends (nothing to decide) asks nobody
and sends no write; every other call asks as before.
"""

from collections.abc import Mapping
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.tool import woodpecker
from ports.asker import Answer
from ports.use_cases.guarded import CallContext, Channel, Complete, NeedInput
from ports.woodpecker import ApiResponse, Credential, Forbidden, NotFound, Request, ServerError, Unavailable
from tests.domain._guard_strategies import arguments_for
from tests.fakes.asker import Says
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import build_harness_on

FIRST_READ = tuple(t for t in WOODPECKER_TOOLS.tools if woodpecker(t).before_asking is not None)
STATUSES = st.sampled_from(
    ["blocked", "pending", "running", "success", "failure", "declined", "killed", "error"]
)
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=40), st.lists(st.integers(), max_size=2)
)


@st.composite
def read_answers(draw: st.DrawFn, args: Mapping[str, Any]) -> Any:
    """What the read before the question meets: an exception to raise, or (status, data)."""
    kind = draw(st.sampled_from(["object", "hostile", "not_found", "forbidden", "server", "unavailable"]))
    if kind == "not_found":
        return NotFound("not found", status=404)
    if kind == "forbidden":
        return Forbidden("forbidden", status=403)
    if kind == "server":
        return ServerError("boom", status=500)
    if kind == "unavailable":
        return Unavailable("gone away")
    if kind == "hostile":
        return 200, draw(st.one_of(HOSTILE, st.dictionaries(st.text(max_size=8), HOSTILE, max_size=4)))
    pipeline: dict[str, Any] = {"number": args.get("number", 1), "status": draw(st.one_of(STATUSES, HOSTILE))}
    if draw(st.booleans()):
        pipeline["from_fork"] = draw(st.one_of(st.booleans(), HOSTILE))
    if draw(st.booleans()):
        pipeline["number"] = draw(st.one_of(st.integers(0, 3), HOSTILE))
    return 200, pipeline


class Answering(FakeWoodpecker):
    """Answers every read with the one generated answer; records every request."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        if call.method != "GET":
            return await super().send(call, credential)
        self.calls.append(call)
        if isinstance(self.answer, Exception):
            raise self.answer
        status, data = self.answer
        return ApiResponse(status, data)


def settled_kind(outcome: object) -> str | None:
    if isinstance(outcome, Complete) and outcome.result.is_error:
        return str(outcome.result.structured.get("error", {}).get("kind"))
    return None


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_no_answer_to_the_read_before_a_question_makes_a_guarded_write_run_unasked(
    data: st.DataObject,
) -> None:
    tool = data.draw(st.sampled_from(FIRST_READ))
    args = data.draw(arguments_for(tool))
    answer = data.draw(read_answers(args))
    channel: Channel = data.draw(st.sampled_from(["push", "mrtr", "token", "app"]))
    woodpecker_ = Answering(answer)
    guarded = build_harness_on(woodpecker_, Credential("generated-token")).guarded
    # The person, where a dialog reaches them, says no: nothing may be written whatever the read said.
    person = Says(Answer("decline"))
    ctx = CallContext(None, None, channel, asker=person if channel == "push" else None)
    outcome = anyio.run(guarded.call, tool.name, args, ctx)
    kind = settled_kind(outcome)
    if kind == "invalid_arguments":
        assert woodpecker_.calls == []  # (the strategy's arguments are only roughly valid)
        return
    assert woodpecker_.writes == [], (tool.name, args, answer)
    asked = (
        bool(person.questions)
        or isinstance(outcome, NeedInput)
        or (isinstance(outcome, Complete) and kind is None)
    )
    if kind in ("not_found", "not_blocked"):
        # Ended by the read: nobody asked, and only reads were sent.
        assert not person.questions
        assert all(c.method == "GET" for c in woodpecker_.calls)
    else:
        # Anything else asks as before: the dialog, a sealed question, a token or a view.
        assert asked or (channel == "push" and person.questions), (tool.name, args, answer, outcome)
