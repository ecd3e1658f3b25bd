"""Two-call tokens: their shape, and a state machine driving Confirmations + InMemoryTokenStore against a model."""

import asyncio
import hashlib
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

from adapters.memory_token_store import InMemoryTokenStore
from domain.guard.tokens import TOKEN_PATTERN, TOKEN_TTL_SECONDS, digest, is_well_formed, new_token
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from tests.fakes.clock import FakeClock
from tests.fakes.randomness import FakeRandomness


@given(st.binary(min_size=16, max_size=16))
def test_a_token_is_32_lowercase_hex_digits_from_16_random_bytes(entropy: bytes) -> None:
    token = new_token(entropy)
    assert is_well_formed(token) and bytes.fromhex(token) == entropy


@pytest.mark.parametrize("size", [0, 15, 17, 32])
def test_a_token_needs_exactly_16_random_bytes(size: int) -> None:
    with pytest.raises(ValueError):
        new_token(b"\0" * size)


@pytest.mark.parametrize(
    "candidate",
    ["", "0" * 31, "0" * 33, "A" * 32, "g" * 32, "0" * 32 + "\n", " " + "0" * 31, None, 123, b"0" * 32],
)
def test_anything_but_32_lowercase_hex_digits_is_not_a_token(candidate: object) -> None:
    assert not is_well_formed(candidate)


def test_the_token_pattern_is_the_confirm_token_schema_pattern() -> None:
    from domain.woodpecker.catalogue import WOODPECKER_TOOLS

    patterns = {
        p.constraints["pattern"] for t in WOODPECKER_TOOLS for p in t.params if p.name == "confirm_token"
    }
    assert patterns == {TOKEN_PATTERN}


def test_the_store_keeps_a_sha256_digest_never_the_token() -> None:
    token = new_token(bytes(range(16)))
    assert digest(token) == hashlib.sha256(token.encode()).hexdigest() != token


class RecordingStore:
    """Passes every call to the real store and remembers what the store was shown."""

    def __init__(self, inner: InMemoryTokenStore) -> None:
        self.inner = inner
        self.seen: list[str] = []

    async def put(self, fingerprint: str, digest: str, expires_at: float, owner: str | None = None) -> None:
        self.seen.append(digest)
        await self.inner.put(fingerprint, digest, expires_at, owner)

    async def take(self, fingerprint: str, digest: str, now: float, owner: str | None = None) -> bool:
        self.seen.append(digest)
        return await self.inner.take(fingerprint, digest, now, owner)


FINGERPRINTS = ["a" * 64, "b" * 64, "c" * 64, "d" * 64]
BOUND = 3


class ConfirmationsMachine(RuleBasedStateMachine):
    """The real use case and store, a fake clock, and an ordered dict as the model."""

    issued = Bundle("issued")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock()
        self.store = InMemoryTokenStore(max_entries=BOUND, now=self.clock.now)
        self.recording = RecordingStore(self.store)
        self.confirmations = Confirmations(self.recording, self.clock, FakeRandomness())
        # fingerprint -> (token, expires_at), oldest first
        self.model: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self.every_token: set[str] = set()

    def teardown(self) -> None:
        self.loop.close()

    def _expire_on_touch(self, fp: str) -> None:
        entry = self.model.get(fp)
        if entry is not None and self.clock.now() >= entry[1]:
            del self.model[fp]

    @rule(target=issued, fp=st.sampled_from(FINGERPRINTS))
    def issue(self, fp: str) -> tuple[str, str]:
        token = self.loop.run_until_complete(self.confirmations.issue(fp))
        assert is_well_formed(token) and token not in self.every_token
        self.every_token.add(token)
        self.model.pop(fp, None)
        if len(self.model) >= BOUND:
            now = self.clock.now()
            for old in [k for k, (_, exp) in self.model.items() if now >= exp]:
                del self.model[old]
            while len(self.model) >= BOUND:
                self.model.popitem(last=False)
        self.model[fp] = (token, self.clock.now() + TOKEN_TTL_SECONDS)
        return fp, token

    @rule(pair=issued)
    def redeem_with_the_token_issued(self, pair: tuple[str, str]) -> None:
        fp, token = pair
        entry = self.model.get(fp)
        expected = entry is not None and entry[0] == token and self.clock.now() < entry[1]
        outcome = self.loop.run_until_complete(self.confirmations.redeem(fp, token))
        assert outcome == (RedeemOutcome.ACCEPTED if expected else RedeemOutcome.REJECTED)
        if expected:
            del self.model[fp]
        else:
            self._expire_on_touch(fp)

    @rule(pair=issued, other=st.sampled_from(FINGERPRINTS))
    def redeem_for_other_arguments(self, pair: tuple[str, str], other: str) -> None:
        fp, token = pair
        if other == fp:
            return
        outcome = self.loop.run_until_complete(self.confirmations.redeem(other, token))
        assert outcome == RedeemOutcome.REJECTED
        self._expire_on_touch(other)

    @rule(fp=st.sampled_from(FINGERPRINTS), wrong=st.binary(min_size=16, max_size=16))
    def redeem_a_wrong_token(self, fp: str, wrong: bytes) -> None:
        token = new_token(wrong)
        if token in self.every_token:
            return
        outcome = self.loop.run_until_complete(self.confirmations.redeem(fp, token))
        assert outcome == RedeemOutcome.REJECTED
        self._expire_on_touch(fp)  # a wrong token leaves a valid pending one in place

    @rule(fp=st.sampled_from(FINGERPRINTS), garbage=st.text(max_size=40) | st.none() | st.integers())
    def redeem_garbage(self, fp: str, garbage: object) -> None:
        outcome = self.loop.run_until_complete(self.confirmations.redeem(fp, garbage))
        assert outcome == RedeemOutcome.REJECTED

    @rule(seconds=st.sampled_from([1.0, 60.0, TOKEN_TTL_SECONDS - 1, TOKEN_TTL_SECONDS, 1000.0]))
    def time_passes(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @precondition(lambda self: bool(self.model))
    @rule()
    def the_pending_tokens_are_exactly_the_models(self) -> None:
        for fp, (token, expires_at) in list(self.model.items()):
            if self.clock.now() < expires_at:
                continue
            # Expired in the model: the store must refuse it too.
            outcome = self.loop.run_until_complete(self.confirmations.redeem(fp, token))
            assert outcome == RedeemOutcome.REJECTED
            del self.model[fp]

    @invariant()
    def the_store_holds_as_many_entries_as_the_model_within_its_bound(self) -> None:
        assert len(self.store) == len(self.model) <= BOUND

    @invariant()
    def the_store_never_holds_a_token_value(self) -> None:
        assert not set(self.recording.seen) & self.every_token


ConfirmationsMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
test_confirmation_tokens_behave_like_the_model = ConfirmationsMachine.TestCase
