"""Where the signed-in approval pages and their sign-ins are kept: this process's memory, or Redis
when the server runs with a Redis token store, so that a question asked on one replica is answered
on the page another serves, at most once (issue 39's replicas, ADR 0085).

A record is a JSON-able dict. A page is kept under its link secret's digest (the secret itself is
never stored), with the call's key pointing at it while it is pending; a sign-in under way and a
signed-in session are kept under the digest of their state and cookie value. Every change of a page
(a post, a collect, a withdrawal, a refused person) is one atomic read-modify-write: in memory it
runs with no await inside, in Redis under WATCH/MULTI, retried when another replica changed the page
in between, so two replicas never both decide or both collect one page. Lifetimes are the records'
own `until` by the caller's clock; Redis's expiry only collects what is past it.
"""

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import redis.asyncio
import redis.exceptions

from ports.token_store import TokenStoreUnavailable

R = TypeVar("R")
Record = dict[str, Any]
# Redis keeps a record this much longer than its own `until`, so a replica whose clock runs behind finds it.
_GRACE_SECONDS = 60.0
_MAX_RECORDS = 10_000
_REDIS_SECONDS = 2.0


class PageStore(Protocol):
    async def put_page(self, digest: str, key: str, record: Record, until: float) -> None:
        """Keep a new page under `digest` until `until`, and point `key` at it."""
        ...

    async def page_for(self, key: str) -> str | None:
        """The digest of the page `key` points at, if any."""
        ...

    async def forget_key(self, key: str, digest: str) -> None:
        """`key` no longer points at the page `digest` (a retry opens a new one); the page stays."""
        ...

    async def page(self, digest: str) -> Record | None:
        """The page kept under `digest` (a copy), if any."""
        ...

    async def change(self, digest: str, change: Callable[[Record], R]) -> R | None:
        """Apply `change` to the page under `digest` atomically and keep what it made; None: no page."""
        ...

    async def put(self, kind: str, digest: str, record: Record, until: float) -> None:
        """Keep a sign-in (`kind` "sign-in") or a session ("session") until `until`."""
        ...

    async def get(self, kind: str, digest: str) -> Record | None: ...

    async def take(self, kind: str, digest: str) -> Record | None:
        """The record, removed in the same step: of two replicas taking it, one gets it."""
        ...


class MemoryPageStore:
    """One process's pages and sign-ins, bounded: the oldest go first past `max_records` of a kind."""

    def __init__(self, max_records: int = _MAX_RECORDS) -> None:
        self._max = max_records
        self._kinds: dict[str, OrderedDict[str, Record]] = {}
        self._keys: dict[str, str] = {}

    def _of(self, kind: str) -> OrderedDict[str, Record]:
        return self._kinds.setdefault(kind, OrderedDict())

    def _keep(self, kind: str, digest: str, record: Record) -> None:
        records = self._of(kind)
        records[digest] = record
        while len(records) > self._max:
            records.popitem(last=False)

    async def put_page(self, digest: str, key: str, record: Record, until: float) -> None:
        self._keep("page", digest, json.loads(json.dumps(record)))
        self._keys[key] = digest

    async def page_for(self, key: str) -> str | None:
        return self._keys.get(key)

    async def forget_key(self, key: str, digest: str) -> None:
        if self._keys.get(key) == digest:
            del self._keys[key]

    async def page(self, digest: str) -> Record | None:
        found = self._of("page").get(digest)
        return json.loads(json.dumps(found)) if found is not None else None

    async def change(self, digest: str, change: Callable[[Record], R]) -> R | None:
        found = self._of("page").get(digest)
        return change(found) if found is not None else None

    async def put(self, kind: str, digest: str, record: Record, until: float) -> None:
        self._keep(kind, digest, dict(record))

    async def get(self, kind: str, digest: str) -> Record | None:
        return self._of(kind).get(digest)

    async def take(self, kind: str, digest: str) -> Record | None:
        return self._of(kind).pop(digest, None)


class RedisPageStore:
    """The pages and sign-ins every replica sharing one Redis sees. Key names carry only digests."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "woodpecker-mcp:page:",
        now: Callable[[], float],
        timeout_seconds: float = _REDIS_SECONDS,
    ) -> None:
        # The URL may hold a password: no message here repeats it.
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout_seconds, socket_connect_timeout=timeout_seconds, decode_responses=True
        )
        self._prefix = prefix
        self._now = now

    def _ms(self, until: float) -> int:
        return max(1, int((until - self._now() + _GRACE_SECONDS) * 1000))

    async def put_page(self, digest: str, key: str, record: Record, until: float) -> None:
        ttl = self._ms(until)
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(self._prefix + "page:" + digest, json.dumps(record), px=ttl)
                pipe.set(self._prefix + "key:" + _hashed(key), digest, px=ttl)
                await pipe.execute()
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def page_for(self, key: str) -> str | None:
        try:
            found = await self._redis.get(self._prefix + "key:" + _hashed(key))
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return str(found) if found else None

    async def forget_key(self, key: str, digest: str) -> None:
        try:
            await self._redis.eval(_FORGET, 1, self._prefix + "key:" + _hashed(key), digest)
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def page(self, digest: str) -> Record | None:
        return await self.get("page", digest)

    async def change(self, digest: str, change: Callable[[Record], R]) -> R | None:
        name = self._prefix + "page:" + digest
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(name)
                        raw = await pipe.get(name)
                        if raw is None:
                            await pipe.reset()
                            return None
                        record = json.loads(raw)
                        result = change(record)
                        pipe.multi()
                        pipe.set(name, json.dumps(record), keepttl=True)
                        await pipe.execute()
                        return result
                    except redis.exceptions.WatchError:
                        continue  # another replica changed this page meanwhile: read it again
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def put(self, kind: str, digest: str, record: Record, until: float) -> None:
        try:
            await self._redis.set(f"{self._prefix}{kind}:{digest}", json.dumps(record), px=self._ms(until))
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def get(self, kind: str, digest: str) -> Record | None:
        try:
            raw = await self._redis.get(f"{self._prefix}{kind}:{digest}")
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return _record(raw)

    async def take(self, kind: str, digest: str) -> Record | None:
        try:
            raw = await self._redis.getdel(f"{self._prefix}{kind}:{digest}")
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return _record(raw)

    async def aclose(self) -> None:
        await self._redis.aclose()


_FORGET = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1"


def _hashed(key: str) -> str:
    # A page's key holds the call's keyed fingerprint; key names show only its digest.
    return hashlib.sha256(key.encode()).hexdigest()


def _record(raw: object) -> Record | None:
    if not raw:
        return None
    try:
        found = json.loads(str(raw))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _unavailable() -> TokenStoreUnavailable:
    return TokenStoreUnavailable(
        "The approval pages' store (Redis) could not be reached, so nothing was done. "
        "Check that Redis is running and WOODPECKER_MCP_TOKEN_STORE points at it, then call again."
    )
