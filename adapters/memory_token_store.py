"""The TokenStore port in process memory: bounded, expired entries evicted first, then the oldest."""

import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_MAX_ENTRIES = 10_000


class InMemoryTokenStore:
    """Pending token digests of one process.

    Every operation completes without awaiting, so concurrent tasks on one event loop see
    each put and take as atomic; a lock covers callers on other threads too.
    """

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, now: Callable[[], float] = time.time) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._now = now
        # fingerprint -> (digest, expires_at); insertion order is age, oldest first.
        self._entries: OrderedDict[str, tuple[str, float]] = OrderedDict()
        # nonce -> expires_at of sealed answers already acted on; insertion order is age.
        self._used: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    async def put(self, fingerprint: str, digest: str, expires_at: float) -> None:
        with self._lock:
            self._entries.pop(fingerprint, None)
            if len(self._entries) >= self._max:
                self._evict()
            self._entries[fingerprint] = (digest, expires_at)

    async def take(self, fingerprint: str, digest: str, now: float) -> bool:
        with self._lock:
            entry = self._entries.get(fingerprint)
            if entry is None:
                return False
            stored, expires_at = entry
            if now >= expires_at:
                del self._entries[fingerprint]
                return False
            if not hmac.compare_digest(stored.encode("utf-8"), digest.encode("utf-8")):
                return False  # a wrong token never cancels the valid pending one
            del self._entries[fingerprint]
            return True

    async def consume_once(self, nonce: str, expires_at: float, now: float) -> bool:
        with self._lock:
            seen = self._used.get(nonce)
            if seen is not None and now < seen:
                return False
            self._used.pop(nonce, None)
            if len(self._used) >= self._max:
                for old in [n for n, until in self._used.items() if now >= until]:
                    del self._used[old]
                if len(self._used) >= self._max:
                    # Forgetting a live nonce would let its answer run twice: ask again instead.
                    return False
            self._used[nonce] = expires_at
            return True

    def _evict(self) -> None:
        now = self._now()
        expired = [fp for fp, (_, expires_at) in self._entries.items() if now >= expires_at]
        for fp in expired:
            del self._entries[fp]
        while len(self._entries) >= self._max:
            self._entries.popitem(last=False)
