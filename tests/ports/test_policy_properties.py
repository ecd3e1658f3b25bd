"""Over generated policy files (ADR 0079), the guarded-call use case end to end with a fake Woodpecker that
records every request: no policy makes a guarded call run unasked, and a denied call sends nothing."""

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.guard.policy_file import PolicyError, apply_policy, parse_policy
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.asker import Answer
from ports.use_cases.guarded import CallContext, CallOutcome, Channel, Complete, GuardedCalls
from ports.woodpecker import Credential
from tests.domain._guard_strategies import arguments_for
from tests.domain.test_policy_file import toml
from tests.fakes.asker import Says
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import build_harness_on

RULES = st.sampled_from(
    [{"deny": True}, {"ask": "always"}, {"ask": "always", "expires_in": "30s"}, {"expires_in": "1m"}]
)
# Every tool that asks or can ask, and the reads (which a policy can make ask), as the policy's names.
POLICIES = st.dictionaries(st.sampled_from(WOODPECKER_TOOLS.names), RULES, max_size=6)
CHANNELS = st.sampled_from(["push", "mrtr", "token", "app"])


def guarded_calls(policy: dict[str, dict[str, Any]] | None) -> tuple[GuardedCalls, FakeWoodpecker] | None:
    """The use case over a fake Woodpecker, with the tools as `policy` makes them (None: no policy)."""
    tools = WOODPECKER_TOOLS
    if policy is not None:
        try:
            tools = apply_policy(tools, parse_policy(toml(policy), "generated.toml", WOODPECKER_TOOLS))
        except PolicyError:
            return None
    woodpecker = FakeWoodpecker()
    return build_harness_on(woodpecker, Credential("generated-token"), catalogue=tools).guarded, woodpecker


def run(guarded: GuardedCalls, tool: str, args: dict[str, Any], channel: Channel) -> tuple[Says, CallOutcome]:
    """One first call on `channel`; on the dialog the person says yes to whatever is asked."""
    person = Says(Answer("accept", confirmed=True))
    ctx = CallContext(None, None, channel, asker=person if channel == "push" else None)
    return person, anyio.run(guarded.call, tool, args, ctx)


@settings(max_examples=120, deadline=None)
@given(policy=POLICIES, data=st.data())
def test_no_policy_makes_a_guarded_call_run_unasked_and_a_denied_call_sends_nothing(
    policy: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    built, baseline = guarded_calls(policy), guarded_calls(None)
    if built is None:
        return  # refused whole at start: no server runs with it
    assert baseline is not None
    (guarded, woodpecker), (unpoliced, untouched) = built, baseline
    # Half the time a tool the policy names, so that its rules are what the example exercises.
    named = tuple(WOODPECKER_TOOLS.get(name) for name in sorted(policy))
    tool = data.draw(st.sampled_from(named if named and data.draw(st.booleans()) else WOODPECKER_TOOLS.tools))
    args = data.draw(arguments_for(tool))
    channel: Channel = data.draw(CHANNELS)
    person, outcome = run(guarded, tool.name, args, channel)
    before, _ = run(unpoliced, tool.name, args, channel)
    rule = policy.get(tool.name, {})
    if rule.get("deny"):
        # Refused whatever the arguments and the way of asking: nothing asked, nothing sent, not a read.
        assert woodpecker.calls == [] and person.questions == []
        assert isinstance(outcome, Complete) and outcome.result.is_error
        assert outcome.result.structured["error"]["kind"] == "denied_by_policy"
        return
    if isinstance(outcome, Complete) and outcome.result.structured.get("error", {}).get("kind") == (
        "invalid_arguments"
    ):
        assert woodpecker.calls == []  # (the strategy's arguments are only roughly valid)
        return
    # The guard's own questions all stay: where the server without a policy asks, this one asks...
    assert len(person.questions) >= len(before.questions)
    # ...and where its first call sends no write (a question, a token, a view), neither does this one's.
    assert untouched.writes != [] or woodpecker.writes == []
    if rule.get("ask") == "always":
        # Every call asks, unless it ends before any question with nothing done (a read the guard
        # compares against failed, say).
        stopped = isinstance(outcome, Complete) and outcome.result.is_error and woodpecker.writes == []
        if channel == "push":
            assert person.questions or stopped, (tool.name, args)
        if not tool.guarded and (channel != "push" or not person.questions):
            # A read the policy makes ask sends nothing of its own before a yes: at most the check that
            # the organization it names exists (ADR 0060).
            assert all(c.method == "GET" and c.path.startswith("/api/orgs/") for c in woodpecker.calls)
