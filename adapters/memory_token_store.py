"""The TokenStore port in process memory: bounded per principal and in all, expired entries evicted first, then the oldest."""

import hmac
import itertools
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_MAX_ENTRIES = 10_000
# What one principal may hold of each kind (pending tokens, used nonces): far more than a person
# answers in a token's or a seal's lifetime, and a tenth of the store.
DEFAULT_PER_PRINCIPAL = 1_000


class _Kind:
    """One bounded map (pending tokens, or used nonces): key -> (value, expires_at, owner, age).

    Every key is counted against its owner, and an owner's keys are kept in age order, so
    making room for an owner's new key costs only its own keys.
    """

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, float, str | None, int]] = {}
        self.owned: dict[str | None, OrderedDict[str, None]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def count(self, owner: str | None) -> int:
        return len(self.owned.get(owner, ()))

    def add(self, key: str, value: str, expires_at: float, owner: str | None, age: int) -> None:
        self.entries[key] = (value, expires_at, owner, age)
        self.owned.setdefault(owner, OrderedDict())[key] = None

    def remove(self, key: str) -> None:
        entry = self.entries.pop(key, None)
        if entry is None:
            return
        owner = entry[2]
        keys = self.owned[owner]
        del keys[key]
        if not keys:
            del self.owned[owner]

    def drop_expired(
        self, now: float, owner: str | None = None, *, everyone: bool = False, keep: str = ""
    ) -> None:
        keys = list(self.entries) if everyone else list(self.owned.get(owner, ()))
        for key in keys:
            if key != keep and now >= self.entries[key][1]:
                self.remove(key)

    def oldest_of(self, owner: str | None, keep: str = "") -> str:
        return next(key for key in self.owned[owner] if key != keep)

    def fullest_owner(self, prefer: str | None, keep: str) -> str | None:
        """Of the owners with a key other than `keep`, the one holding the most keys (`keep`
        counted): `prefer` when it is among them, else the one whose oldest key is oldest."""
        eligible = {o: len(keys) for o, keys in self.owned.items() if len(keys) > (1 if keep in keys else 0)}
        most = max(eligible.values())
        tied = [o for o, count in eligible.items() if count == most]
        if prefer in tied:
            return prefer
        return min(tied, key=lambda o: self.entries[self.oldest_of(o, keep)][3])


class InMemoryTokenStore:
    """Pending token digests, used nonces and approval views' ticket records of one process.

    Each principal (`owner`) holds at most `per_principal` of each, and the store at most
    `max_entries` of each. A principal over its quota makes room from its own entries only
    (expired first, then its oldest), so one caller's flood never evicts another's pending
    token. A full store evicts from the principal holding the most. A used nonce that is still
    live is never forgotten: when there is no room, the answer is refused (asked again). A record
    is only told, so the oldest makes room like a pending token.

    Every operation completes without awaiting, so concurrent tasks on one event loop see
    each put and take as atomic; a lock covers callers on other threads too.

    Its `realm` is its own (random per store): what it records is seen by no other process, so a
    sealed answer issued here opens nowhere else, not in a replica nor in this server restarted
    with the same seal keys (guard.md §7).
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        now: Callable[[], float] = time.time,
        *,
        per_principal: int = DEFAULT_PER_PRINCIPAL,
    ) -> None:
        if max_entries < 1 or per_principal < 1:
            raise ValueError("max_entries and per_principal must be at least 1")
        self._max = max_entries
        self._quota = min(per_principal, max_entries)
        self._now = now
        # fingerprint -> digest; nonce -> "" (only its expiry counts); record key -> record.
        self._pending = _Kind()
        self._used = _Kind()
        self._records = _Kind()
        self._ages = itertools.count()
        self._lock = threading.Lock()
        self._realm = "memory:" + secrets.token_hex(16)

    @property
    def realm(self) -> str:
        return self._realm

    def __len__(self) -> int:
        return len(self._pending)

    def held_by(self, owner: str | None) -> int:
        """How many pending tokens `owner` holds (for tests and diagnostics)."""
        with self._lock:
            return self._pending.count(owner)

    async def put(self, fingerprint: str, digest: str, expires_at: float, owner: str | None = None) -> None:
        with self._lock:
            self._keep(self._pending, fingerprint, digest, expires_at, owner)

    def _keep(self, kind: _Kind, key: str, value: str, expires_at: float, owner: str | None) -> None:
        """Add or replace `key`, making room from `owner`'s own entries, then from the fullest owner's."""
        kind.remove(key)
        if kind.count(owner) >= self._quota:
            kind.drop_expired(self._now(), owner)
            while kind.count(owner) >= self._quota:
                kind.remove(kind.oldest_of(owner))
        kind.add(key, value, expires_at, owner, next(self._ages))
        if len(kind) > self._max:
            kind.drop_expired(self._now(), everyone=True, keep=key)
            while len(kind) > self._max:
                victim = kind.fullest_owner(prefer=owner, keep=key)
                kind.remove(kind.oldest_of(victim, keep=key))

    async def take(self, fingerprint: str, digest: str, now: float, owner: str | None = None) -> bool:
        with self._lock:
            entry = self._pending.entries.get(fingerprint)
            if entry is None:
                return False
            stored, expires_at, held_by, _ = entry
            if now >= expires_at:
                self._pending.remove(fingerprint)
                return False
            if held_by != owner:
                return False  # another principal's entry is not this caller's to take
            if not hmac.compare_digest(stored.encode("utf-8"), digest.encode("utf-8")):
                return False  # a wrong token never cancels the valid pending one
            self._pending.remove(fingerprint)
            return True

    async def consume_once(self, nonce: str, expires_at: float, now: float, owner: str | None = None) -> bool:
        with self._lock:
            used = self._used
            seen = used.entries.get(nonce)
            if seen is not None and now < seen[1]:
                return False
            used.remove(nonce)
            if used.count(owner) >= self._quota:
                used.drop_expired(now, owner)
                if used.count(owner) >= self._quota:
                    # Forgetting a live nonce would let its answer run twice: ask this caller again.
                    return False
            if len(used) >= self._max:
                used.drop_expired(now, everyone=True)
                if len(used) >= self._max:
                    return False
            used.add(nonce, "", expires_at, owner, next(self._ages))
            return True

    async def put_record(self, key: str, value: str, expires_at: float, owner: str | None = None) -> None:
        with self._lock:
            self._keep(self._records, key, value, expires_at, owner)

    async def get_record(self, key: str, now: float, owner: str | None = None) -> str | None:
        with self._lock:
            entry = self._records.entries.get(key)
        if entry is None or entry[2] != owner or now >= entry[1]:
            return None
        return entry[0]
