"""2026-07-28 retries driven by hand: a state that does not open onto exactly this call is no answer, so the client is asked afresh."""

from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from adapters.memory_token_store import InMemoryTokenStore
from domain.tools import Catalogue
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import (
    OTHER_SEAL_KEY,
    SEAL_KEY,
    Harness,
    Person,
    build_harness_on,
    elicit_result,
    harness_for,
)

pytestmark = pytest.mark.anyio

APPROVE = {"repo_id": 1, "number": 11}
YES = {"confirm": elicit_result("accept")}


async def ask(client: Client, args: dict[str, Any] = APPROVE, **retry: Any) -> Any:
    return await client.session.call_tool("approve_pipeline", dict(args), allow_input_required=True, **retry)


def state_of(result: Any) -> str:
    assert isinstance(result, types.InputRequiredResult), result
    assert result.request_state is not None
    return result.request_state


async def fresh_question_then(
    harness: Harness, sandbox: Sandbox, state: str | None, answers: Any = YES, args: dict[str, Any] = APPROVE
) -> Any:
    """Present `state` with a yes; return the (expected fresh) question, checking nothing was written."""
    with anyio.fail_after(15):
        async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
            retried = await ask(client, args, input_responses=answers, request_state=state)
    assert sandbox.state_changing_requests() == []
    return retried


def tampered(state: str) -> str:
    middle = len(state) // 2
    flipped = "A" if state[middle] != "A" else "B"
    return state[:middle] + flipped + state[middle + 1 :]


async def first_state(harness: Harness, args: dict[str, Any] = APPROVE) -> str:
    with anyio.fail_after(15):
        async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
            return state_of(await ask(client, args))


async def test_a_valid_state_with_a_yes_acts_once_and_each_replay_earns_a_fresh_question(
    sandbox: Sandbox,
) -> None:
    # guard.md §7: the same state and yes, presented again within its ten minutes (a retry whose
    # result was lost, a replayed gateway leg, a loop), never runs the call a second time.
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness)
        with anyio.fail_after(30):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                done = await ask(client, input_responses=YES, request_state=state)
                replays = [await ask(client, input_responses=YES, request_state=state) for _ in range(3)]
    assert isinstance(done, types.CallToolResult) and not done.is_error
    fresh = [state_of(replay) for replay in replays]  # a question each time, never an error
    assert state not in fresh and len(set(fresh)) == 3
    assert len(sandbox.state_changing_requests()) == 1
    assert harness.audit.outcomes() == ["asked", "approved", "executed"] + ["seal_rejected", "asked"] * 3


async def test_a_replayed_admin_grant_does_not_grant_again_after_a_revocation(sandbox: Sandbox) -> None:
    grant = {"login": "bob", "forge_id": 1, "admin": True}
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                state = state_of(
                    await client.session.call_tool("update_user", grant, allow_input_required=True)
                )
                retry = {"input_responses": YES, "request_state": state, "allow_input_required": True}
                done = await client.session.call_tool("update_user", grant, **retry)
                assert isinstance(done, types.CallToolResult) and not done.is_error
                with sandbox.state.lock:  # someone revokes it by hand
                    bob = sandbox.world.user_by_login("bob")
                    assert bob is not None and bob.admin
                    bob.admin = False
                sandbox.clear_requests()
                replay = await client.session.call_tool("update_user", grant, **retry)
    state_of(replay)
    assert sandbox.state_changing_requests() == []
    with sandbox.state.lock:
        bob = sandbox.world.user_by_login("bob")
        assert bob is not None and not bob.admin


@pytest.mark.parametrize("reply", ["false", "decline", "cancel"])
async def test_a_valid_state_with_a_no_does_nothing(sandbox: Sandbox, reply: Any) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness)
        with anyio.fail_after(15):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                done = await ask(
                    client, input_responses={"confirm": elicit_result(reply)}, request_state=state
                )
    assert isinstance(done, types.CallToolResult)
    assert "nothing was done" in done.content[0].text  # type: ignore[union-attr]  # text content
    assert sandbox.state_changing_requests() == []


async def test_a_tampered_state_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness)
        again = await fresh_question_then(harness, sandbox, tampered(state))
    assert state_of(again) != state
    assert "seal_rejected" in harness.audit.outcomes()


async def test_a_state_sealed_with_another_key_earns_a_fresh_question(sandbox: Sandbox) -> None:
    # One store for both (as replicas sharing Redis): only the key differs.
    store = InMemoryTokenStore()
    async with harness_for(
        sandbox, sandbox.admin_token, seal_keys=(OTHER_SEAL_KEY,), token_store=store
    ) as elsewhere:
        foreign = await first_state(elsewhere)
    async with harness_for(sandbox, sandbox.admin_token, token_store=store) as harness:
        state_of(await fresh_question_then(harness, sandbox, foreign))


async def test_a_state_whose_use_another_store_records_earns_a_fresh_question(sandbox: Sandbox) -> None:
    # guard.md §7: the same keys, another process's memory (a replica, the server restarted).
    async with harness_for(sandbox, sandbox.admin_token) as elsewhere:
        foreign = await first_state(elsewhere)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state_of(await fresh_question_then(harness, sandbox, foreign))
    assert harness.audit.outcomes() == ["seal_rejected", "asked"]


async def test_a_state_from_a_retired_key_still_in_the_ring_is_accepted(sandbox: Sandbox) -> None:
    # Keys rotate across the replicas of one store; a state crosses processes only with the store shared.
    store = InMemoryTokenStore()
    async with harness_for(sandbox, sandbox.admin_token, seal_keys=(SEAL_KEY,), token_store=store) as before:
        state = await first_state(before)
    rotated = (OTHER_SEAL_KEY, SEAL_KEY)
    async with harness_for(sandbox, sandbox.admin_token, seal_keys=rotated, token_store=store) as after:
        with anyio.fail_after(15):
            async with Client(after.server, mode="2026-07-28", elicitation_callback=Person()) as client:
                done = await ask(client, input_responses=YES, request_state=state)
    assert isinstance(done, types.CallToolResult) and not done.is_error
    assert len(sandbox.state_changing_requests()) == 1


async def test_a_token_issued_before_a_rotation_is_redeemed_once_after_it(sandbox: Sandbox) -> None:
    # The token store's key is keyed with the first seal key's fingerprint key; a ring rotated by
    # prepending a key still finds a pending token under the old one, and only once.
    store = InMemoryTokenStore()
    async with harness_for(sandbox, sandbox.admin_token, seal_keys=(SEAL_KEY,), token_store=store) as before:
        with anyio.fail_after(15):
            async with Client(before.server, mode="2026-07-28") as plain:
                issued = await plain.call_tool("approve_pipeline", APPROVE)
    token = issued.structured_content["confirm_token"]  # type: ignore[index]
    rotated = (OTHER_SEAL_KEY, SEAL_KEY)
    async with harness_for(sandbox, sandbox.admin_token, seal_keys=rotated, token_store=store) as after:
        with anyio.fail_after(15):
            async with Client(after.server, mode="2026-07-28") as plain:
                done = await plain.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
                again = await plain.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
    assert not done.is_error, done
    assert again.is_error and again.structured_content["error"]["kind"] == "token_rejected"  # type: ignore[index]
    assert len(sandbox.state_changing_requests()) == 1


async def test_a_token_from_a_ring_without_its_key_is_refused(sandbox: Sandbox) -> None:
    store = InMemoryTokenStore()
    async with harness_for(sandbox, sandbox.admin_token, seal_keys=(SEAL_KEY,), token_store=store) as before:
        with anyio.fail_after(15):
            async with Client(before.server, mode="2026-07-28") as plain:
                issued = await plain.call_tool("approve_pipeline", APPROVE)
    token = issued.structured_content["confirm_token"]  # type: ignore[index]
    async with harness_for(
        sandbox, sandbox.admin_token, seal_keys=(OTHER_SEAL_KEY,), token_store=store
    ) as after:
        with anyio.fail_after(15):
            async with Client(after.server, mode="2026-07-28") as plain:
                refused = await plain.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
    assert refused.is_error and refused.structured_content["error"]["kind"] == "token_rejected"  # type: ignore[index]
    assert sandbox.state_changing_requests() == []


async def test_an_expired_state_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness)
        harness.clock.advance(601)
        state_of(await fresh_question_then(harness, sandbox, state))


async def test_a_state_for_other_arguments_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness, {"repo_id": 3, "number": 3})
        again = await fresh_question_then(harness, sandbox, state, args={"repo_id": 1, "number": 11})
    assert isinstance(again, types.InputRequiredResult)
    request = (again.input_requests or {})["confirm"]
    assert isinstance(request, types.ElicitRequest)
    # The fresh question is the other call's own, its server facts included.
    assert "pipeline 11 of repository 1" in request.params.message
    assert "\nFrom a fork: yes" in request.params.message


async def test_a_state_issued_to_another_principal_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token, principal="alice") as alice:
        state = await first_state(alice)
    async with harness_for(sandbox, sandbox.admin_token, principal="mallory") as mallory:
        state_of(await fresh_question_then(mallory, sandbox, state))


async def test_an_answer_without_state_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state_of(await fresh_question_then(harness, sandbox, None))


async def test_a_state_without_an_answer_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        state = await first_state(harness)
        state_of(await fresh_question_then(harness, sandbox, state, answers=None))


async def test_a_garbage_state_earns_a_fresh_question(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        for junk in ["", "x", "v1." + "A" * 5000, "🙂" * 10]:
            state_of(await fresh_question_then(harness, sandbox, junk))


async def test_an_answer_never_covers_a_reason_its_question_did_not_show() -> None:
    # A catalogue that (wrongly) leaves update_repository's body out of the fingerprint: the
    # seal then opens for a retry that adds a grant, and the guard itself must still refuse it.
    spec = WOODPECKER_TOOLS.get("update_repository")
    assert spec.guard is not None
    loose = replace(spec, guard=replace(spec.guard, body_bound=False))
    catalogue = Catalogue(tuple(loose if t.name == spec.name else t for t in WOODPECKER_TOOLS))
    woodpecker = FakeWoodpecker({"/api/repos/5": {"id": 5}})
    harness = build_harness_on(woodpecker, Credential("t"), catalogue=catalogue)
    grant = {"repo_id": 5, "trusted_network": True}
    with anyio.fail_after(15):
        async with Client(harness.server, mode="2026-07-28", elicitation_callback=Person()) as client:
            asked = await client.session.call_tool("update_repository", grant, allow_input_required=True)
            state = state_of(asked)
            wider = await client.session.call_tool(
                "update_repository",
                {**grant, "trusted_volumes": True},
                allow_input_required=True,
                input_responses=YES,
                request_state=state,
            )
            assert woodpecker.writes == []
            same = await client.session.call_tool(
                "update_repository",
                grant,
                allow_input_required=True,
                input_responses=YES,
                request_state=state,
            )
    assert isinstance(wider, types.InputRequiredResult)
    request = (wider.input_requests or {})["confirm"]
    assert isinstance(request, types.ElicitRequest)
    assert "trusted volumes" in request.params.message
    assert isinstance(same, types.CallToolResult) and not same.is_error
    assert len(woodpecker.writes) == 1
