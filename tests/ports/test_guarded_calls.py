"""GuardedCalls driven directly (no MCP): the re-check just before the write on the token and sealed paths, and a cancelled dialog is a no."""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from ports.asker import Answer
from ports.use_cases.guarded import CallContext, Complete, NeedInput
from ports.woodpecker import ApiResponse, Credential, LogWindow, LogWindowRequest, Request
from sandbox.server import Sandbox
from tests.fakes.asker import Says
from tests.fixtures.mcp import Harness, build_harness_on, gateway_to
from tests.mcp.test_guard_recheck import drop_pull_request_event, make_private, prepare

pytestmark = pytest.mark.anyio


class ChangesAfterRead:
    """The real gateway, with one twist: right after the n-th read of a path, someone changes the
    stored object (as another admin would, between two requests of one call)."""

    def __init__(self, inner: HttpxWoodpeckerGateway) -> None:
        self.inner = inner
        self.armed: tuple[str, int, Callable[[], None]] | None = None

    def arm(self, path: str, change: Callable[[], None], after: int = 1) -> None:
        self.armed = (path, after, change)

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        response = await self.inner.send(call, credential)
        if self.armed is not None and call.method == "GET" and call.path == self.armed[0]:
            path, left, change = self.armed
            self.armed = (path, left - 1, change) if left > 1 else None
            if left == 1:
                change()
        return response

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        return await self.inner.step_log(path, window, credential)


YES = Answer("accept", True)


def narrow_images(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.secrets[7].images = ["alpine"]


@dataclass(frozen=True)
class Case:
    """A call asking for one reason, the read it decides on, a change that widens it further once
    re-read, and words only the question after the change shows."""

    tool: str
    args: dict[str, Any]
    read: str
    change: Callable[[Sandbox], None]
    newly_shown: str


ROTATE = {"scope": "global", "name": "sonar_token", "value": "rotated"}
CASES = {
    "repository-made-private": Case(
        "update_repository",
        {"repo_id": 1, "require_approval": "forks", "visibility": "public"},
        "/api/repos/1",
        make_private,
        "It becomes public",
    ),
    "secret-lost-its-pull-request-event": Case(
        "update_secret",
        {**ROTATE, "events": ["push", "pull_request"]},
        "/api/secrets/sonar_token",
        drop_pull_request_event,
        "pull-request",
    ),
    "secret-limited-to-other-images": Case(
        "update_secret",
        {**ROTATE, "images": ["sonarsource/sonar-scanner-cli"]},
        "/api/secrets/sonar_token",
        narrow_images,
        "adds an image",
    ),
}
EACH_CASE = pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))


@pytest.fixture
async def changing(sandbox: Sandbox) -> AsyncIterator[tuple[Harness, ChangesAfterRead]]:
    prepare(sandbox)  # repository 1: public, require_approval all_events
    credential = Credential(sandbox.admin_token)
    gateway = ChangesAfterRead(gateway_to(sandbox, credential))
    try:
        yield build_harness_on(gateway, credential), gateway
    finally:
        await gateway.inner.aclose()


def context(channel: Any, **extra: Any) -> CallContext:
    return CallContext(principal=None, credential=None, channel=channel, **extra)


async def sealed_question(harness: Harness, case: Case) -> NeedInput:
    first = await harness.guarded.call(case.tool, dict(case.args), context("mrtr"))
    assert isinstance(first, NeedInput), first
    return first


async def sealed_yes(harness: Harness, case: Case, question: NeedInput) -> Any:
    retry = context("mrtr", answer=YES, request_state=question.request_state)
    return await harness.guarded.call(case.tool, dict(case.args), retry)


@EACH_CASE
async def test_a_token_call_whose_object_changes_before_the_write_writes_nothing(
    sandbox: Sandbox, changing: tuple[Harness, ChangesAfterRead], case: Case
) -> None:
    harness, gateway = changing
    with anyio.fail_after(15):
        first = await harness.guarded.call(case.tool, dict(case.args), context("token"))
        assert isinstance(first, Complete) and first.result.structured["outcome"] == "confirmation_required"
        token = first.result.structured["confirm_token"]
        # The second call reads (and decides: the token fits), then reads again just before the write.
        gateway.arm(case.read, lambda: case.change(sandbox))
        second = await harness.guarded.call(
            case.tool, {**case.args, "confirm_token": token}, context("token")
        )
    assert gateway.armed is None  # the change happened, between the two reads of one call
    assert isinstance(second, Complete) and second.result.is_error
    assert second.result.structured["error"]["kind"] == "changed"
    assert sandbox.state_changing_requests() == []


@EACH_CASE
async def test_a_sealed_yes_whose_object_changes_before_the_write_earns_a_new_question(
    sandbox: Sandbox, changing: tuple[Harness, ChangesAfterRead], case: Case
) -> None:
    harness, gateway = changing
    with anyio.fail_after(15):
        first = await sealed_question(harness, case)
        assert case.newly_shown not in first.message
        gateway.arm(case.read, lambda: case.change(sandbox))
        retried = await sealed_yes(harness, case, first)
    assert gateway.armed is None
    assert isinstance(retried, NeedInput), retried
    assert case.newly_shown in retried.message
    assert sandbox.state_changing_requests() == []


@EACH_CASE
async def test_without_a_change_the_same_calls_write_once(
    sandbox: Sandbox, changing: tuple[Harness, ChangesAfterRead], case: Case
) -> None:
    # The control: what the two tests above stop is an ordinary write when nothing moves.
    harness, _ = changing
    with anyio.fail_after(15):
        done = await sealed_yes(harness, case, await sealed_question(harness, case))
    assert isinstance(done, Complete) and not done.result.is_error, done
    assert len(sandbox.state_changing_requests()) == 1


@pytest.mark.parametrize("answer", [Answer("cancel"), Answer("decline"), Answer("accept", False)])
async def test_a_dismissed_or_unconfirmed_dialog_is_a_no(
    sandbox: Sandbox, changing: tuple[Harness, ChangesAfterRead], answer: Answer
) -> None:
    harness, _ = changing
    person = Says(answer)
    with anyio.fail_after(15):
        result = await harness.guarded.call(
            "approve_pipeline", {"repo_id": 1, "number": 11}, context("push", asker=person)
        )
    assert len(person.questions) == 1
    assert isinstance(result, Complete) and result.result.structured["done"] is False
    expected = "cancelled" if answer.action == "cancel" else "declined"
    assert result.result.structured["outcome"] == expected
    assert sandbox.state_changing_requests() == []
    assert harness.audit.outcomes() == ["asked", expected]
