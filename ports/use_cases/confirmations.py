"""Two-call confirmation tokens: issued for one fingerprint, redeemed once, stored only as digests."""

from enum import Enum

from domain.guard.tokens import TOKEN_BYTES, TOKEN_TTL_SECONDS, digest, is_well_formed, new_token
from ports.clock import Clock
from ports.randomness import Randomness
from ports.token_store import TokenStore


class RedeemOutcome(Enum):
    """One rejection for every failure (wrong, expired, reused, other arguments): nothing is leaked."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Confirmations:
    def __init__(
        self, store: TokenStore, clock: Clock, randomness: Randomness, ttl: float = TOKEN_TTL_SECONDS
    ) -> None:
        self._store = store
        self._clock = clock
        self._randomness = randomness
        self._ttl = ttl

    def life(self, ttl: float | None = None) -> float:
        """How long a token issued with `ttl` lives: the default, or a shorter `ttl`."""
        return self._ttl if ttl is None else min(self._ttl, ttl)

    async def issue(self, fingerprint: str, owner: str | None = None, ttl: float | None = None) -> str:
        """A fresh token for `fingerprint`, replacing any pending one. The store sees only its digest.

        It counts against `owner`'s quota (the caller's account, else its principal; ADR 0046): a
        flood evicts only its own. `ttl`: a shorter life than the default (an operator's policy,
        ADR 0079); never a longer one.
        """
        token = new_token(self._randomness.token_bytes(TOKEN_BYTES))
        life = self.life(ttl)
        await self._store.put(fingerprint, digest(token), self._clock.now() + life, owner)
        return token

    async def redeem(
        self, fingerprint: str | tuple[str, ...], token: object, owner: str | None = None
    ) -> RedeemOutcome:
        """ACCEPTED exactly once per issued token, for its own fingerprint, before it expires.

        `fingerprint` may be a tuple of the call's fingerprints under each key of the ring (the
        current first): a token issued before a rotation is still found under its old key.
        A wrong token leaves the valid pending one in place.
        """
        if not is_well_formed(token):
            return RedeemOutcome.REJECTED
        candidates = (fingerprint,) if isinstance(fingerprint, str) else fingerprint
        for candidate in candidates:
            if await self._store.take(candidate, digest(token), self._clock.now(), owner):
                return RedeemOutcome.ACCEPTED
        return RedeemOutcome.REJECTED

    async def keep_record(self, key: str, value: str, ttl: float, owner: str | None = None) -> None:
        """Keep `value` under `key` for `ttl` seconds, beside the tokens (an approval view's ticket record)."""
        await self._store.put_record(key, value, self._clock.now() + ttl, owner)

    async def read_record(self, key: str, owner: str | None = None) -> str | None:
        """The record `keep_record` left under `key` for `owner`, while it lasts."""
        return await self._store.get_record(key, self._clock.now(), owner)
