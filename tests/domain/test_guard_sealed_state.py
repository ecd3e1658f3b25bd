"""Sealed question state: a round trip opens only for the same call, before expiry; anything else is None."""

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.hmac_sealer import HmacSealer
from adapters.memory_token_store import InMemoryTokenStore
from domain.guard.sealed_state import CLOCK_SKEW_SECONDS, SealedState, decode, encode
from ports.use_cases.sealed_questions import SEALED_TTL_SECONDS, SealedQuestions
from tests.fakes.clock import FakeClock
from tests.fakes.randomness import FakeRandomness

KEY_A = b"A" * 32
KEY_B = b"B" * 32
FP = "f" * 64
OTHER_FP = "e" * 64
REASONS = frozenset({"sets_public", "grants_trusted_network"})
REALM = "memory:" + "0" * 32


def _questions(
    keys: list[bytes], clock: FakeClock | None = None, store: InMemoryTokenStore | None = None
) -> SealedQuestions:
    clock = clock or FakeClock()
    used = store if store is not None else InMemoryTokenStore(now=clock.now)
    return SealedQuestions(HmacSealer(keys), clock, FakeRandomness(), used)


def test_a_sealed_question_opens_for_the_same_call_with_its_reasons() -> None:
    clock = FakeClock()
    questions = _questions([KEY_A], clock)
    state = questions.issue("update_repository", FP, "p1", REASONS)
    opened = questions.open(state, tool="update_repository", fingerprint=FP, principal="p1")
    assert opened is not None
    assert opened.reasons == REASONS and opened.fingerprint == FP and opened.principal == "p1"
    assert opened.expires_at == clock.now() + SEALED_TTL_SECONDS and len(opened.nonce) == 32


def test_two_questions_for_the_same_call_carry_different_nonces() -> None:
    questions = _questions([KEY_A])
    assert questions.issue("pause_queue", FP, None, frozenset()) != questions.issue(
        "pause_queue", FP, None, frozenset()
    )


def test_a_state_opens_onto_nothing_for_another_fingerprint_tool_or_principal() -> None:
    questions = _questions([KEY_A])
    state = questions.issue("approve_pipeline", FP, "p1", frozenset({"always"}))
    assert questions.open(state, tool="approve_pipeline", fingerprint=OTHER_FP, principal="p1") is None
    assert questions.open(state, tool="delete_pipeline", fingerprint=FP, principal="p1") is None
    assert questions.open(state, tool="approve_pipeline", fingerprint=FP, principal="p2") is None
    assert questions.open(state, tool="approve_pipeline", fingerprint=FP, principal=None) is None


def test_a_state_expires_after_its_time_to_live() -> None:
    clock = FakeClock()
    questions = _questions([KEY_A], clock)
    state = questions.issue("pause_queue", FP, None, frozenset({"always"}))
    clock.advance(SEALED_TTL_SECONDS - 1)
    assert questions.open(state, tool="pause_queue", fingerprint=FP, principal=None) is not None
    clock.advance(1)
    assert questions.open(state, tool="pause_queue", fingerprint=FP, principal=None) is None


def test_a_state_sealed_by_another_key_does_not_open() -> None:
    state = _questions([KEY_A]).issue("pause_queue", FP, None, frozenset())
    assert _questions([KEY_B]).open(state, tool="pause_queue", fingerprint=FP, principal=None) is None


def test_a_state_sealed_with_the_old_key_opens_with_the_rotated_ring() -> None:
    # Replicas rotating their keys share one store (a key ring crosses processes only with one).
    shared = InMemoryTokenStore()
    state = _questions([KEY_A], store=shared).issue("pause_queue", FP, None, frozenset())
    rotated = _questions([KEY_B, KEY_A], store=shared)
    assert rotated.open(state, tool="pause_queue", fingerprint=FP, principal=None) is not None
    newer = rotated.issue("pause_queue", FP, None, frozenset())
    assert (
        _questions([KEY_A], store=shared).open(newer, tool="pause_queue", fingerprint=FP, principal=None)
        is None
    )


def test_a_state_issued_where_another_store_records_its_use_opens_onto_nothing() -> None:
    # guard.md §7: same keys, but another process's memory (a replica, the server restarted): this
    # store cannot know whether the answer was acted on there, so it is no answer here.
    state = _questions([KEY_A]).issue("pause_queue", FP, None, frozenset({"always"}))
    assert _questions([KEY_A]).open(state, tool="pause_queue", fingerprint=FP, principal=None) is None
    shared = InMemoryTokenStore()
    here = _questions([KEY_A], store=shared)
    mine = here.issue("pause_queue", FP, None, frozenset({"always"}))
    assert here.open(mine, tool="pause_queue", fingerprint=FP, principal=None) is not None


@settings(max_examples=150)
@given(st.data())
def test_any_changed_character_makes_a_state_open_onto_nothing(data: st.DataObject) -> None:
    questions = _questions([KEY_A])
    state = questions.issue("update_secret", FP, "p", frozenset({"new_value"}))
    index = data.draw(st.integers(0, len(state) - 1))
    replacement = data.draw(st.characters(codec="ascii").filter(lambda c: c != state[index]))
    tampered = state[:index] + replacement + state[index + 1 :]
    assert questions.open(tampered, tool="update_secret", fingerprint=FP, principal="p") is None


GARBAGE: st.SearchStrategy[Any] = (
    st.text()
    | st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
    | st.binary()
    | st.none()
    | st.integers()
    | st.floats()
    | st.lists(st.text(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2)
    | st.just("." * 10)
    | st.just("x" * 100_000)
)


@given(GARBAGE)
def test_garbage_opens_onto_nothing_and_never_raises(garbage: Any) -> None:
    assert _questions([KEY_A]).open(garbage, tool="pause_queue", fingerprint=FP, principal=None) is None


def _state(**overrides: Any) -> SealedState:
    fields: dict[str, Any] = {
        "tool": "pause_queue",
        "fingerprint": FP,
        "principal": None,
        "issued_at": 1000.0,
        "expires_at": 1600.0,
        "nonce": "00" * 16,
        "reasons": frozenset({"always"}),
        "realm": REALM,
    }
    fields.update(overrides)
    return SealedState(**fields)


def _decode(payload: bytes | None, now: float = 1200.0) -> SealedState | None:
    return decode(payload, tool="pause_queue", fingerprint=FP, principal=None, now=now, realm=REALM)


def test_the_payload_round_trips_through_its_canonical_bytes() -> None:
    assert _decode(encode(_state())) == _state()
    assert encode(_state()) == encode(_state(reasons=frozenset({"always"})))
    assert b" " not in encode(_state())


def test_a_state_issued_in_the_future_beyond_the_clock_skew_is_refused() -> None:
    assert _decode(encode(_state(issued_at=1200.0 + CLOCK_SKEW_SECONDS - 1))) is not None
    assert _decode(encode(_state(issued_at=1200.0 + CLOCK_SKEW_SECONDS + 1, expires_at=5000.0))) is None


def _payload(**changes: Any) -> bytes:
    data = json.loads(encode(_state()))
    data.update(changes)
    return json.dumps(data).encode()


def test_another_version_or_a_malformed_field_is_refused() -> None:
    assert _decode(_payload()) is not None
    for changes in (
        {"v": 1},
        {"v": 3},
        {"realm": "shared"},
        {"realm": None},
        {"v": True},
        {"v": "1"},
        {"iat": "1000"},
        {"exp": None},
        {"exp": 900},
        {"iat": float("nan")},
        {"nonce": 5},
        {"reasons": "always"},
        {"reasons": [1]},
        {"extra": 1},
    ):
        assert _decode(_payload(**changes)) is None, changes


@given(st.binary(max_size=300) | st.none())
def test_decoding_arbitrary_bytes_never_raises(payload: bytes | None) -> None:
    assert _decode(payload) is None
