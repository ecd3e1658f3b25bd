"""The sealed requestState of a 2026-07-28 question: issued for one call, opened only for that call, acted on at most once."""

from domain.guard.sealed_state import SealedState, decode, encode
from ports.clock import Clock
from ports.randomness import Randomness
from ports.sealer import Sealer
from ports.token_store import TokenStore

SEALED_TTL_SECONDS = 600.0
# A requestState of ours is a few hundred characters; anything far longer is not worth a MAC.
_MAX_STATE_CHARS = 16_384
_NONCE_BYTES = 16


class SealedQuestions:
    def __init__(
        self,
        sealer: Sealer,
        clock: Clock,
        randomness: Randomness,
        used: TokenStore,
        ttl: float = SEALED_TTL_SECONDS,
    ) -> None:
        """`used` records the nonces of answers already acted on (the token store, shared by replicas)."""
        self._sealer = sealer
        self._used = used
        self._clock = clock
        self._randomness = randomness
        self._ttl = ttl

    def issue(
        self,
        tool: str,
        fingerprint: str,
        principal: str | None,
        reasons: frozenset[str],
        ttl: float | None = None,
    ) -> str:
        """The opaque requestState for this call's question. `ttl`: a shorter life than the default
        (an operator's policy, ADR 0079); never a longer one."""
        now = self._clock.now()
        life = self._ttl if ttl is None else min(self._ttl, ttl)
        state = SealedState(
            tool=tool,
            fingerprint=fingerprint,
            principal=principal,
            issued_at=now,
            expires_at=now + life,
            nonce=self._randomness.token_bytes(_NONCE_BYTES).hex(),
            reasons=frozenset(reasons),
            realm=self._used.realm,
        )
        return self._sealer.seal(encode(state))

    def open(
        self, state: object, *, tool: str, fingerprint: str | tuple[str, ...], principal: str | None
    ) -> SealedState | None:
        """The state, when `state` is a current seal of ours for exactly this call; None otherwise.

        `fingerprint`: the call's keyed fingerprint, or one per key of the ring (see `decode`).

        A state issued where its use is recorded in another realm (another process's memory) opens
        onto nothing here: this process could not know whether it was acted on (guard.md §7).

        None means "no answer, ask again". Never raises, whatever `state` is.
        """
        if not isinstance(state, str) or not state or len(state) > _MAX_STATE_CHARS:
            return None
        try:
            payload = self._sealer.unseal(state)
        except Exception:  # the port promises not to raise; a seal that fails is still "no answer"
            return None
        return decode(
            payload,
            tool=tool,
            fingerprint=fingerprint,
            principal=principal,
            now=self._clock.now(),
            realm=self._used.realm,
        )

    async def consume(self, state: SealedState, owner: str | None = None) -> bool:
        """True the first time an opened state is acted on; False for every later presentation,
        on this replica or another sharing the store, until the state expires.

        Raises:
            TokenStoreUnavailable: the store could not be asked; nothing may be done.
        """
        # Counted against `owner` (the caller's account, ADR 0046), else the principal the state
        # was issued to: a caller filling the set of used nonces freezes only its own approvals.
        return await self._used.consume_once(
            state.nonce, state.expires_at, self._clock.now(), owner if owner is not None else state.principal
        )
