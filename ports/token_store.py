"""Where pending two-call confirmation tokens wait for their second call."""

from typing import Protocol


class TokenStoreUnavailable(RuntimeError):
    """The store could not be asked. The token counts as not redeemed: nothing is done.

    `str(e)` says what to check; it never contains a token or a digest.
    """


class TokenStore(Protocol):
    """Holds at most one pending token digest per fingerprint, each with an expiry, the
    nonces of sealed answers already acted on, and the records of approval views' tickets.

    Stores see digests, never token values, and fingerprints keyed with a server secret
    (docs/adr/0046), never a plain digest of a call's arguments. Implementations bound what
    each owner (`owner`: the caller's Woodpecker account in per-client HTTP, else its principal;
    None for a server without callers' identities) holds of each kind,
    making room from that principal's own entries (expired first, then its oldest), so one
    caller's flood never evicts or freezes another's (docs/adr/0046).
    """

    @property
    def realm(self) -> str:
        """Which processes see what this store records: the same string on every process sharing it
        (a Redis store), one of this process's own for a store in its memory. A sealed answer is
        issued under it and opens only under it, so that no process acts on an answer whose use it
        could not see (guard.md §7)."""
        ...

    async def put(self, fingerprint: str, digest: str, expires_at: float, owner: str | None = None) -> None:
        """Record (or replace) the pending token for `fingerprint`, counted against `owner`."""
        ...

    async def take(self, fingerprint: str, digest: str, now: float, owner: str | None = None) -> bool:
        """Atomically consume the pending token if `digest` matches and it has not expired.

        True exactly once per put. A non-matching digest leaves the pending entry in place.
        Digests are compared in constant time.
        """
        ...

    async def consume_once(self, nonce: str, expires_at: float, now: float, owner: str | None = None) -> bool:
        """Record `nonce` as used until `expires_at`; True only the first time, atomically, on
        every replica sharing the store. An approval is acted on at most once (guard.md §7).

        A store that cannot record it (`owner` holds its quota of live nonces, or the store is
        full of them) answers False: ask again rather than risk a second run.
        """
        ...

    async def put_record(self, key: str, value: str, expires_at: float, owner: str | None = None) -> None:
        """Keep `value` under `key` until `expires_at` (what became of an approval view's ticket,
        docs/adr/0066), replacing any record there, counted against `owner` apart from tokens and
        nonces. Records are for telling, never for deciding: one evicted to make room is lost."""
        ...

    async def get_record(self, key: str, now: float, owner: str | None = None) -> str | None:
        """The record under `key` if it is `owner`'s and has not expired, else None. Changes nothing."""
        ...
