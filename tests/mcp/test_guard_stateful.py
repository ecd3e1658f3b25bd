"""A stateful property of the whole guard: random sequences of calls, answers, tokens, seals and clock jumps never make Woodpecker change state without a valid approval for exactly that call.

CI runs a small number of sequences; for a long local run set
`WOODPECKER_MCP_STATEFUL_EXAMPLES` (e.g. 500) and `WOODPECKER_MCP_STATEFUL_STEPS` (e.g. 40).
"""

import os
from dataclasses import dataclass
from typing import Any

import httpx
import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from mcp import Client

from domain.woodpecker import requests
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.tool import woodpecker
from sandbox.server import Sandbox
from tests.fixtures.mcp import Harness, Person, build_harness, elicit_result

EXAMPLES = int(os.environ.get("WOODPECKER_MCP_STATEFUL_EXAMPLES", "8"))
STEPS = int(os.environ.get("WOODPECKER_MCP_STATEFUL_STEPS", "12"))
SEAL_TTL = 600.0
TOKEN_TTL = 300.0

# Always-asking calls whose question does not depend on stored state, each one write when it runs.
# Siblings (index ^ 1) differ only in their targets (their order, for most) or in their body, which is
# exactly what the binding must tell apart. The tools that read their target before asking (issue 37)
# ask only while there is something to decide: the model reads what that read would find (`settled`).
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("approve_pipeline", {"repo_id": 1, "number": 11}),
    ("approve_pipeline", {"repo_id": 3, "number": 3}),
    ("delete_pipeline", {"repo_id": 1, "number": 10}),
    ("delete_pipeline", {"repo_id": 10, "number": 1}),
    ("set_log_level", {"level": "disabled"}),
    ("set_log_level", {"level": "panic"}),
    ("update_repository", {"repo_id": 2, "trusted_network": True}),
    ("update_repository", {"repo_id": 2, "trusted_network": True, "trusted_volumes": True}),
    # guard.md §1b: the five tools beyond the seed's list, each asking whatever the earlier steps did.
    ("restart_pipeline", {"repo_id": 1, "number": 7}),
    ("restart_pipeline", {"repo_id": 1, "number": 7, "event": "deployment"}),
    # Ids the forge does not list: whether Woodpecker holds them cannot be told, so they always ask.
    ("activate_repository", {"forge_remote_id": "9998"}),
    ("activate_repository", {"forge_remote_id": "9999"}),
    ("create_secret", {"scope": "global", "name": "K", "value": "v", "events": ["pull_request"]}),
    ("create_secret", {"scope": "global", "name": "K", "value": "v", "events": ["pull_request_closed"]}),
    ("create_user", {"login": "carol"}),
    ("create_user", {"login": "carol", "email": "carol@example.org"}),
    ("create_agent", {"name": "a1"}),
    ("create_agent", {"name": "a1", "no_schedule": True}),
    (
        "create_forge",
        {"type": "gitea", "url": "https://a.example.org", "client": "c", "oauth_client_secret": "s"},
    ),
    (
        "create_forge",
        {"type": "gitea", "url": "https://b.example.org", "client": "c", "oauth_client_secret": "s"},
    ),
    # guard.md §1c: a registry login's password is required, so every create asks.
    ("create_registry", {"scope": "global", "address": "r.example.org", "username": "u", "password": "p"}),
    ("create_registry", {"scope": "global", "address": "r.example.org", "username": "v", "password": "p"}),
    # The rest of the 30, in pairs whose targets never meet, so each call stays one request however
    # the steps are ordered (a delete takes away nothing another call reads first).
    ("repair_repository", {"scope": "instance"}),
    ("move_repository", {"repo_id": 3, "to": "umbrella/infra2"}),
    ("chown_repository", {"repo_id": 3}),
    ("delete_repository", {"repo_id": 4}),
    ("delete_step_logs", {"repo_id": 1, "number": 2, "step_id": 10203}),
    ("delete_pipeline_logs", {"repo_id": 1, "number": 2}),
    ("update_secret", {"scope": "repository", "repo_id": 1, "name": "docker_password", "value": "x"}),
    ("delete_secret", {"scope": "repository", "repo_id": 1, "name": "deploy_token"}),
    ("update_registry", {"scope": "repository", "repo_id": 1, "address": "ghcr.io/acme", "password": "p"}),
    ("delete_registry", {"scope": "global", "address": "quay.io"}),
    ("delete_cron", {"repo_id": 1, "cron_id": 1}),
    ("delete_organization", {"org_id": 6}),
    ("update_user", {"login": "bob", "forge_id": 1, "admin": True}),
    ("delete_user", {"login": "eve", "forge_id": 1}),
    ("delete_agent", {"agent_id": 1}),
    ("pause_queue", {}),
    ("update_forge", {"forge_id": 1, "url": "https://forge2.example.org"}),
    ("delete_forge", {"forge_id": 9}),
)
# Every guarded tool is in the sequences but update_agent: it asks only while its agent is drained, so
# after one yes the same call no longer asks, which this machine's model (every call asks) cannot hold;
# tests/mcp/test_guard_beyond.py covers it on every path.
assert len({tool for tool, _ in CALLS}) == 29 and len(CALLS) % 2 == 0
# Guarded calls whose path argument is a dot or empty segment: refused before any question, on every
# channel, whatever the person would answer (on the wire each would reach the repository or org).
DOT_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("delete_secret", {"scope": "repository", "repo_id": 1, "name": ".."}),
    ("delete_registry", {"scope": "repository", "repo_id": 1, "address": ".."}),
    ("delete_secret", {"scope": "organization", "org_id": 5, "name": "%2e%2e"}),
    ("delete_registry", {"scope": "global", "address": "ghcr.io/.."}),
    ("update_user", {"login": ".", "forge_id": 1, "admin": True}),
    ("delete_user", {"login": "\u2025", "forge_id": 1}),
)
calls = st.integers(min_value=0, max_value=len(CALLS) - 1)
replies = st.sampled_from(["accept", "false", "decline", "cancel"])
# Which call a token or a state is presented with: its own, its sibling, or any call at all.
presented = st.sampled_from(["same", "sibling", "any"])


def presented_with(how: str, own: int, anyone: int) -> int:
    return {"same": own, "sibling": own ^ 1}.get(how, anyone)


@dataclass(frozen=True)
class Question:
    call: int
    state: str
    expires_at: float


@dataclass(frozen=True)
class Token:
    call: int
    value: str


def tamper(state: str) -> str:
    middle = len(state) // 2
    return state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]


class GuardMachine(RuleBasedStateMachine):
    sandbox: Sandbox
    runs = 0

    questions = Bundle("questions")
    tokens = Bundle("tokens")

    def __init__(self) -> None:
        super().__init__()
        type(self).runs += 1
        self.sandbox.reset()
        self._portal_cm = start_blocking_portal()
        self.portal: BlockingPortal = self._portal_cm.__enter__()
        self.harness: Harness = build_harness(self.sandbox, self.sandbox.admin_token)
        self.person = Person()
        self._clients: list[Any] = []
        self.push = self._open(Client(self.harness.server, mode="legacy", elicitation_callback=self.person))
        self.mrtr = self._open(
            Client(self.harness.server, mode="2026-07-28", elicitation_callback=self.person)
        )
        self.plain = self._open(Client(self.harness.server, mode="legacy"))
        # The model: per call, the one token that may still act, and until when; the sealed states
        # already acted on (an approval runs at most once).
        self.pending: dict[int, tuple[str, float]] = {}
        self.consumed: set[str] = set()
        self.expected = 0

    def _open(self, client: Client) -> Client:
        manager = self.portal.wrap_async_context_manager(client)
        opened = manager.__enter__()
        self._clients.append(manager)
        return opened

    def teardown(self) -> None:
        for manager in reversed(self._clients):
            manager.__exit__(None, None, None)
        self.portal.call(self.harness.gateway.aclose)
        self._portal_cm.__exit__(None, None, None)

    def now(self) -> float:
        return self.harness.clock.now()

    def settled(self, index: int) -> bool:
        """Whether the read before this call's question finds nothing to decide (its target gone, or a
        pipeline to approve no longer blocked): then it asks nobody and sends nothing."""
        tool, args = CALLS[index]
        first = woodpecker(WOODPECKER_TOOLS.get(tool)).before_asking
        if first is None:
            return False
        read = first.request(args, requests.plan(WOODPECKER_TOOLS.get(tool), args).path)
        answer = httpx.get(
            f"{self.sandbox.url}{read.path}", headers={"Authorization": f"Bearer {self.sandbox.admin_token}"}
        )
        data = answer.json() if answer.status_code == 200 else None
        return first.judge(args, read.path, answer.status_code, data).settled is not None

    def _call(self, client: Client, index: int, **extra: Any) -> Any:
        tool, args = CALLS[index]
        return self.portal.call(lambda: client.call_tool(tool, {**args, **extra}))

    def _retry(self, index: int, **retry: Any) -> Any:
        tool, args = CALLS[index]
        return self.portal.call(
            lambda: self.mrtr.session.call_tool(tool, dict(args), allow_input_required=True, **retry)
        )

    @initialize()
    def start(self) -> None:
        self.sandbox.clear_requests()

    # ------------------------------------------------------------------ push (2025-11-25)

    @rule(index=calls, reply=replies)
    def dialog(self, index: int, reply: Any) -> None:
        self.person.reply = reply
        asked, settled = len(self.person.questions), self.settled(index)
        self._call(self.push, index)
        assert len(self.person.questions) == asked + (not settled)
        self.expected += reply == "accept" and not settled

    # ------------------------------------------------------------------ sealed (2026-07-28)

    @rule(target=questions, index=calls)
    def ask(self, index: int) -> Any:
        settled = self.settled(index)
        result = self._retry(index)
        if settled:
            assert isinstance(result, types.CallToolResult) and result.is_error, result
            return multiple()
        assert isinstance(result, types.InputRequiredResult)
        assert result.request_state is not None
        return Question(index, result.request_state, self.now() + SEAL_TTL)

    @rule(
        question=questions,
        reply=replies | st.none(),
        how=presented,
        state_kind=st.sampled_from(["as_issued", "tampered", "none"]),
        anyone=calls,
    )
    def answer(self, question: Question, reply: Any, how: str, state_kind: str, anyone: int) -> None:
        index = presented_with(how, question.call, anyone)
        state = {"tampered": tamper(question.state), "none": None}.get(state_kind, question.state)
        responses = None if reply is None else {"confirm": elicit_result(reply)}
        # A retry without an answer is a first call again: it asks only while there is something to decide.
        unasked = reply is None and self.settled(index)
        result = self._retry(index, input_responses=responses, request_state=state)
        valid = index == question.call and state_kind == "as_issued" and self.now() < question.expires_at
        replayed = question.state in self.consumed
        acts = valid and reply == "accept" and not replayed
        if acts:
            self.consumed.add(question.state)
        self.expected += acts
        if valid and reply == "accept" and replayed:
            valid = False  # a replayed yes is no answer: a fresh question
        if acts or (valid and reply is not None) or unasked:
            assert isinstance(result, types.CallToolResult)
        else:
            assert isinstance(result, types.InputRequiredResult), (how, reply)

    # ------------------------------------------------------------------ token (no dialog)

    @rule(target=tokens, index=calls)
    def first_call(self, index: int) -> Any:
        settled = self.settled(index)
        result = self._call(self.plain, index)
        assert result.structured_content is not None
        if settled:
            assert result.is_error and "confirm_token" not in result.structured_content
            return multiple()
        token = result.structured_content["confirm_token"]
        self.pending[index] = (token, self.now() + TOKEN_TTL)
        return Token(index, token)

    @rule(token=tokens, how=presented, anyone=calls)
    def second_call(self, token: Token, how: str, anyone: int) -> None:
        index = presented_with(how, token.call, anyone)
        self._call(self.plain, index, confirm_token=token.value)
        pending = self.pending.get(index)
        acts = pending is not None and pending[0] == token.value and self.now() < pending[1]
        if pending is not None and (acts or self.now() >= pending[1]):
            del self.pending[index]
        self.expected += acts

    @rule(index=calls, digits=st.text("0123456789abcdef", min_size=32, max_size=32))
    def wrong_token(self, index: int, digits: str) -> None:
        self._call(self.plain, index, confirm_token=digits)
        pending = self.pending.get(index)
        acts = pending is not None and pending[0] == digits and self.now() < pending[1]
        if acts:
            del self.pending[index]
        self.expected += acts

    # ------------------------------------------------------------------ dot segments

    @rule(
        which=st.integers(min_value=0, max_value=len(DOT_CALLS) - 1),
        channel=st.sampled_from(["push", "mrtr", "plain"]),
        reply=replies,
    )
    def dot_segment(self, which: int, channel: str, reply: Any) -> None:
        tool, args = DOT_CALLS[which]
        self.person.reply = reply
        asked = len(self.person.questions)
        client = {"push": self.push, "mrtr": self.mrtr, "plain": self.plain}[channel]
        result = self.portal.call(
            lambda: client.session.call_tool(tool, dict(args), allow_input_required=True)
        )
        assert isinstance(result, types.CallToolResult) and result.is_error, result
        assert result.structured_content is not None
        assert result.structured_content["error"]["kind"] == "invalid_arguments"
        assert len(self.person.questions) == asked
        with self.sandbox.state.lock:
            assert 1 in self.sandbox.world.repos and 5 in self.sandbox.world.orgs

    # ------------------------------------------------------------------ time

    @rule(seconds=st.sampled_from([1.0, 59.5, 150.0, 299.0, 301.0, 601.0]))
    def time_passes(self, seconds: float) -> None:
        self.harness.clock.advance(seconds)

    @invariant()
    def woodpecker_changed_only_with_an_approval(self) -> None:
        writes = self.sandbox.state_changing_requests()
        assert len(writes) == self.expected, [(w.method, w.path) for w in writes]


@pytest.mark.slow
def test_woodpecker_changes_state_only_after_a_valid_approval_for_that_exact_call(
    sandbox_session: Sandbox, record_property: Any
) -> None:
    GuardMachine.sandbox = sandbox_session
    GuardMachine.runs = 0
    run_state_machine_as_test(
        GuardMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            database=None,
        ),
    )
    record_property("sequences", GuardMachine.runs)
    print(f"guard state machine: {GuardMachine.runs} sequences of up to {STEPS} steps")
    assert GuardMachine.runs >= 1
