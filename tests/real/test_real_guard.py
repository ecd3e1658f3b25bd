"""The guard's whole matrix on a real Woodpecker, through the SDK's MCP client: every guarded tool asks, a
no leaves Woodpecker's state as it was (read back over the API) with nothing sent, and a yes changes exactly
what was asked; each conditional rule's harmless direction runs unasked (tests/real/guard_cases.py).

The server is this module's own (its cases delete and move what they made), seeded by `seed_guard`; every
case names objects no other case touches, so they pass in any order."""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from tests.fixtures.mcp import Harness, Person, build_harness_on, gateway_to
from tests.mcp.guarded_calls import assert_clean_question
from tests.real.guard_cases import CASES, Case, Env, World, seed_guard
from tests.real.harness import ADMIN, OUTSIDER, Real, running
from tests.real.test_real_woodpecker import _binaries

pytestmark = pytest.mark.anyio


class SentRecorded:
    """The real gateway, remembering the method and path of every request it sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[str, str]] = []

    async def send(self, call: Any, credential: Any) -> Any:
        self.sent.append((call.method, call.path))
        return await self.inner.send(call, credential)

    def writes(self) -> list[tuple[str, str]]:
        return [s for s in self.sent if s[0] != "GET"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@asynccontextmanager
async def _harness(real: Real) -> AsyncIterator[tuple[Harness, SentRecorded]]:
    credential = Credential(real.tokens[ADMIN])
    gateway = SentRecorded(gateway_to(real.url, credential))
    try:
        yield build_harness_on(gateway, credential, web_root=real.url), gateway
    finally:
        await gateway.inner.aclose()


@pytest.fixture(scope="module")
def guard_world() -> Iterator[tuple[Real, World]]:
    with running(_binaries()) as started:
        try:
            world = seed_guard(started)
        except AssertionError as exc:
            # What the server said about a refused seed step is in its log, which is removed afterwards.
            tail = (started.workdir / "server.log").read_text(errors="replace").splitlines()[-20:]
            raise AssertionError(f"{exc}\nthe server's log ends:\n" + "\n".join(tail)) from exc
        yield started, world


@pytest.mark.real_woodpecker
@pytest.mark.slow
def test_a_pull_request_from_a_fork_is_held_with_from_fork(guard_world: tuple[Real, World]) -> None:
    # The forge fake's pull request from mallory's fork of acme/app, under require_approval `forks`, as
    # Woodpecker answered it before any case ran; and one from a branch of acme/app itself.
    started, world = guard_world
    fork, own = world.seen["fork"], world.seen["own_pull"]
    assert (fork["event"], fork["status"], fork.get("from_fork"), fork["author"]) == (
        "pull_request",
        "blocked",
        True,
        OUTSIDER,
    )
    assert fork["ref"] == "refs/pull/1/head" and fork["reviewed_by"] == ""
    # Woodpecker leaves a false from_fork out of its answer (omitempty).
    assert (own["event"], own["status"], own.get("from_fork")) == ("pull_request", "success", None)


def _text(result: Any) -> str:
    return str(getattr(result.content[0], "text", "")) if result.content else ""


def test_the_real_matrix_covers_every_guarded_tool_of_the_catalogue() -> None:
    guarded = {t.name for t in WOODPECKER_TOOLS if t.guarded}
    assert {c.tool for c in CASES if c.asks} == guarded
    assert {c.tool for c in CASES} == guarded
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.real_woodpecker
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_guarded_tool_on_a_real_woodpecker(guard_world: tuple[Real, World], case: Case) -> None:
    started, world = guard_world
    with started.client(ADMIN) as http, anyio.fail_after(120):
        target = case.arrange(Env(started, world, http))
        before = target.read()
        person = Person("decline")
        async with _harness(started) as (harness, gateway):
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                if case.asks:
                    declined = await client.call_tool(case.tool, dict(target.args))
                    assert len(person.questions) == 1, person.questions
                    assert_clean_question(person.questions[0], target.args)
                    lines = person.questions[0].splitlines()
                    assert all(line in lines for line in case.says), person.questions[0]
                    assert not any(words in person.questions[0] for words in case.never_says), lines
                    assert "nothing was done" in _text(declined), _text(declined)
                    assert gateway.writes() == []
                    assert target.read() == before
                    person.reply, person.questions = "accept", []
                    gateway.sent.clear()
                result = await client.call_tool(case.tool, dict(target.args))
        try:
            if case.refused is not None:
                assert person.questions == []
                assert result.is_error and (result.structured_content or {})["error"]["kind"] == case.refused
                assert gateway.writes() == []
                assert target.read() == before
                if case.outcomes is not None:
                    assert harness.audit.outcomes() == list(case.outcomes)
                return
            assert len(person.questions) == (1 if case.asks else 0), person.questions
            if started.version in case.unknown_on:
                assert result.is_error and "outcome is unknown" in _text(result), _text(result)
                assert "took effect" in _text(result), _text(result)
            else:
                assert not result.is_error, _text(result)
            assert gateway.writes() != []
            assert target.read() == target.expect(before)
        finally:
            target.settle()
