"""A TokenStore in Redis: a token issued by one replica is redeemed at most once on any replica."""

import hashlib
import math
from typing import Any

import redis.asyncio
import redis.exceptions

from ports.token_store import TokenStoreUnavailable

# Both scripts run atomically inside Redis, so two replicas racing to redeem the same token
# cannot both see it: the first DEL wins and the second finds nothing.
#
# An entry's value is "<expires_at>|<digest>". Expiry is decided by the caller's `now` (the
# Clock port), not by Redis's clock; the Redis TTL only collects garbage, with some grace so
# that a replica whose clock runs slightly behind Redis's still finds a live entry.
#
# The index (a sorted set scored by expiry) bounds the store: once it holds more than
# ARGV[3] entries the earliest-expiring ones go first, which are the expired ones, then the
# oldest. Entries touch keys the script derives from the index, so this needs a single
# Redis (or a cluster with one shard), not a multi-shard cluster.
_PUT = """
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
  local victims = redis.call('ZPOPMIN', KEYS[2], excess)
  for i = 1, #victims, 2 do redis.call('DEL', victims[i]) end
end
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if #last == 2 then redis.call('PEXPIREAT', KEYS[2], last[2]) end
return 1
"""

# An expired entry is removed whoever asks. Otherwise the digest comparison is constant time
# in the digest's content (its length is public), so response timing says nothing about how
# much of a guessed digest was right; a wrong digest leaves the pending entry in place.
_TAKE = """
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local sep = string.find(value, '|', 1, true)
if not sep or tonumber(ARGV[2]) >= tonumber(string.sub(value, 1, sep - 1)) then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], KEYS[1])
  return 0
end
local stored = string.sub(value, sep + 1)
local given = ARGV[1]
if #stored ~= #given then return 0 end
local diff = 0
for i = 1, #stored do
  diff = bit.bor(diff, bit.bxor(string.byte(stored, i), string.byte(given, i)))
end
if diff ~= 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
return 1
"""

_SCHEMES = ("redis://", "rediss://", "unix://")


class RedisTokenStore:
    """TokenStore over `redis.asyncio`. Stores only digests, keyed by a hash of the fingerprint."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "woodpecker-mcp:token:",
        max_entries: int = 10_000,
        expiry_grace_seconds: float = 60.0,
        timeout_seconds: float = 2.0,
    ) -> None:
        # The URL may hold a password, so no message here or below ever repeats it.
        if not url.startswith(_SCHEMES):
            raise ValueError("the token store URL must start with redis://, rediss:// or unix://")
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._redis: Any = redis.asyncio.Redis.from_url(
            url,
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
            decode_responses=True,
        )
        self._prefix = prefix
        self._index = prefix + "index"
        self._max_entries = max_entries
        self._grace_ms = int(expiry_grace_seconds * 1000)
        self._put = self._redis.register_script(_PUT)
        self._take = self._redis.register_script(_TAKE)

    def _key(self, fingerprint: str) -> str:
        # Hashed so that key names (visible to anyone who can list Redis keys) carry no
        # target arguments and stay short whatever the fingerprint's length.
        return self._prefix + hashlib.sha256(fingerprint.encode()).hexdigest()

    async def put(self, fingerprint: str, digest: str, expires_at: float) -> None:
        expire_ms = math.ceil(expires_at * 1000) + self._grace_ms
        try:
            await self._put(
                keys=[self._key(fingerprint), self._index],
                args=[f"{expires_at!r}|{digest}", expire_ms, self._max_entries],
            )
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def take(self, fingerprint: str, digest: str, now: float) -> bool:
        try:
            taken = await self._take(keys=[self._key(fingerprint), self._index], args=[digest, repr(now)])
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return bool(taken == 1)

    async def consume_once(self, nonce: str, expires_at: float, now: float) -> bool:
        # SET NX is atomic in Redis: of two replicas presenting the same answer, one sets the key.
        # Redis's own expiry collects it (with grace, so a replica whose clock runs behind still
        # finds it while the seal is live for it); the caller's `now` needs no comparison here.
        expire_ms = math.ceil(expires_at * 1000) + self._grace_ms
        try:
            created = await self._redis.set(self._used_key(nonce), "1", nx=True, pxat=expire_ms)
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return bool(created)

    def _used_key(self, nonce: str) -> str:
        return self._prefix + "used:" + hashlib.sha256(nonce.encode()).hexdigest()

    async def ping(self) -> bool:
        """True when Redis answers; for readiness checks. Never raises."""
        try:
            return bool(await self._redis.ping())
        except (redis.exceptions.RedisError, OSError):
            return False

    async def aclose(self) -> None:
        await self._redis.aclose()


def _unavailable() -> TokenStoreUnavailable:
    return TokenStoreUnavailable(
        "The confirmation-token store (Redis) could not be reached, so nothing was done. "
        "Check that Redis is running and WOODPECKER_MCP_TOKEN_STORE points at it, then call again."
    )
