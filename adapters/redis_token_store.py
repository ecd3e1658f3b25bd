"""A TokenStore in Redis: a token issued by one replica is redeemed at most once on any replica."""

import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio
import redis.exceptions

from ports.token_store import TokenStoreUnavailable

# Every script runs atomically inside Redis, so two replicas racing to redeem the same token
# cannot both see it: the first DEL wins and the second finds nothing.
#
# An entry's value is "<expires_at>|<digest>". Expiry is decided by the caller's `now` (the
# Clock port), not by Redis's clock; the Redis TTL only collects garbage, with some grace so
# that a replica whose clock runs slightly behind Redis's still finds a live entry.
#
# Entries are counted per principal: an entry's key is `<prefix><owner tag>:<hash>`, the tag
# (32 hex digits) naming its principal, and each principal has an index (a sorted set scored by
# expiry) of its entries; `owners` counts each principal's entries. A principal over its quota
# (ARGV[4]) makes room from its own index only: expired entries first, then its oldest. The
# global index bounds the store (ARGV[3]): past it, expired entries go first, then the oldest of
# the principal holding the most (the caller's own when it is among them). Entries touch keys
# the scripts derive from the indexes, so this needs a single Redis (or a cluster with one
# shard), not a multi-shard cluster.
#
# KEYS: entry, global index, owner index, owners. ARGV (after the script's own): prefix, tag.
_DROP = """
local function drop(key)
  local tag = string.sub(key, #PREFIX + 1, #PREFIX + 32)
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[2], key)
  if redis.call('ZREM', PREFIX .. 'owner:' .. tag, key) == 1 then
    if tonumber(redis.call('ZINCRBY', KEYS[4], -1, tag)) <= 0 then redis.call('ZREM', KEYS[4], tag) end
  end
end
local function oldest(index)
  for _, key in ipairs(redis.call('ZRANGE', index, 0, 1)) do
    if key ~= KEYS[1] then return key end
  end
  return nil
end
"""

_PUT = (
    """
local PREFIX, TAG = ARGV[5], ARGV[6]
"""
    + _DROP
    + """
local now_ms, score = tonumber(ARGV[7]), ARGV[8]
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('ZADD', KEYS[2], score, KEYS[1])
if redis.call('ZADD', KEYS[3], score, KEYS[1]) == 1 then redis.call('ZINCRBY', KEYS[4], 1, TAG) end
if redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[4]) then
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now_ms)) do
    if key ~= KEYS[1] then drop(key) end
  end
  while redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[4]) do
    local victim = oldest(KEYS[3])
    if not victim then break end
    drop(victim)
  end
end
if redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[3]) then
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now_ms)) do
    if key ~= KEYS[1] then drop(key) end
  end
  while redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[3]) do
    -- Of the principals with an entry other than the new one, the one holding the most (the
    -- new one counted): this caller when it is among them, else the one whose oldest entry is oldest.
    local owner, most, age = nil, nil, nil
    local counts = redis.call('ZREVRANGE', KEYS[4], 0, -1, 'WITHSCORES')
    for i = 1, #counts, 2 do
      local tag, count = counts[i], tonumber(counts[i + 1])
      if most and count < most then break end
      if count > (tag == TAG and 1 or 0) then
        most = count
        if tag == TAG then
          owner, age = TAG, nil
        elseif owner ~= TAG then
          local first = tonumber(redis.call('ZRANGE', PREFIX .. 'owner:' .. tag, 0, 0, 'WITHSCORES')[2])
          if first and (owner == nil or first < age) then owner, age = tag, first end
        end
      end
    end
    if not owner then break end
    local victim = oldest(PREFIX .. 'owner:' .. owner)
    if not victim then break end
    drop(victim)
  end
end
-- A few expired entries go on every put, whoever held them, so an idle principal's index and
-- count do not outlive its entries. The indexes carry no TTL of their own: one expiring apart
-- from the others would leave a count without its entries.
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now_ms, 'LIMIT', 0, 16)) do
  if key ~= KEYS[1] then drop(key) end
end
return 1
"""
)

# An expired entry is removed whoever asks. Otherwise the digest comparison is constant time
# in the digest's content (its length is public), so response timing says nothing about how
# much of a guessed digest was right; a wrong digest leaves the pending entry in place.
_TAKE = (
    """
local PREFIX, TAG = ARGV[3], ARGV[4]
"""
    + _DROP
    + """
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local sep = string.find(value, '|', 1, true)
if not sep or tonumber(ARGV[2]) >= tonumber(string.sub(value, 1, sep - 1)) then
  drop(KEYS[1])
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
drop(KEYS[1])
return 1
"""
)

# A used nonce is a key of its own (kept until the seal expires, plus grace) and a member of its
# principal's index of used nonces, scored by the seal's expiry by the caller's clock. A
# principal holding its quota of live ones is refused (asked again); nobody else is.
# KEYS: used key, owner's used index. ARGV: expire_ms (with grace), seal expiry ms, quota, now ms, grace ms.
_CONSUME = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], '1', 'PXAT', ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], tonumber(last[2]) + tonumber(ARGV[5]))
return 1
"""

_SCHEMES = ("redis://", "rediss://", "unix://")


class RedisTokenStore:
    """TokenStore over `redis.asyncio`. Stores only digests, keyed by a hash of the (keyed) fingerprint.

    Its `realm` is the one every replica sharing the store names: an answer sealed by one replica
    is recorded as used where all of them look.
    """

    realm = "shared"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "woodpecker-mcp:token:",
        max_entries: int = 10_000,
        per_principal: int = 1_000,
        expiry_grace_seconds: float = 60.0,
        timeout_seconds: float = 2.0,
        now: Callable[[], float] = time.time,
    ) -> None:
        # The URL may hold a password, so no message here or below ever repeats it.
        if not url.startswith(_SCHEMES):
            raise ValueError("the token store URL must start with redis://, rediss:// or unix://")
        if max_entries < 1 or per_principal < 1:
            raise ValueError("max_entries and per_principal must be at least 1")
        self._redis: Any = redis.asyncio.Redis.from_url(
            url,
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
            decode_responses=True,
        )
        self._prefix = prefix
        self._records = prefix + "record:"
        self._index = prefix + "index"
        self._owners = prefix + "owners"
        self._max_entries = max_entries
        self._quota = min(per_principal, max_entries)
        self._grace_ms = int(expiry_grace_seconds * 1000)
        self._now = now
        self._put = self._redis.register_script(_PUT)
        self._take = self._redis.register_script(_TAKE)
        self._consume = self._redis.register_script(_CONSUME)

    def _keys(self, fingerprint: str, owner: str | None, prefix: str | None = None) -> tuple[list[str], str]:
        # Hashed so that key names (visible to anyone who can list Redis keys) carry no target
        # arguments and stay short whatever the fingerprint's length; the fingerprint is keyed
        # already (docs/adr/0046), the principal a keyed digest too. Records have a prefix, indexes
        # and counts of their own (`prefix`), so they never take a pending token's room.
        tag, prefix = _tag(owner), prefix or self._prefix
        entry = prefix + tag + ":" + hashlib.sha256(fingerprint.encode()).hexdigest()
        index, owners = (
            (self._index, self._owners) if prefix == self._prefix else (prefix + "index", prefix + "owners")
        )
        return [entry, index, prefix + "owner:" + tag, owners], tag

    async def put(self, fingerprint: str, digest: str, expires_at: float, owner: str | None = None) -> None:
        await self._store(fingerprint, digest, expires_at, owner, self._prefix)

    async def _store(self, key: str, value: str, expires_at: float, owner: str | None, prefix: str) -> None:
        expire_ms = math.ceil(expires_at * 1000) + self._grace_ms
        keys, tag = self._keys(key, owner, prefix)
        args: list[str | int] = [f"{expires_at!r}|{value}", expire_ms, self._max_entries, self._quota]
        args += [prefix, tag]
        # Indexes are scored by the expiry by the caller's clock (ms, rounded down, as `now` is),
        # so an entry counts as expired there exactly when `take` would refuse it.
        at = [math.floor(self._now() * 1000), math.floor(expires_at * 1000)]
        try:
            await self._put(keys=keys, args=[*args, *at])
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc

    async def put_record(self, key: str, value: str, expires_at: float, owner: str | None = None) -> None:
        await self._store(key, value, expires_at, owner, self._records)

    async def get_record(self, key: str, now: float, owner: str | None = None) -> str | None:
        # The key names its owner (its tag), so another principal's record is never found. A plain
        # read: an expired record is left for Redis's own expiry and the next put to collect.
        (entry, *_), _ = self._keys(key, owner, self._records)
        try:
            value = await self._redis.get(entry)
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        expires_at, sep, record = str(value or "").partition("|")
        try:
            live = bool(sep) and now < float(expires_at)
        except ValueError:
            return None
        return record if live else None

    async def take(self, fingerprint: str, digest: str, now: float, owner: str | None = None) -> bool:
        keys, tag = self._keys(fingerprint, owner)
        try:
            taken = await self._take(keys=keys, args=[digest, repr(now), self._prefix, tag])
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return bool(taken == 1)

    async def consume_once(self, nonce: str, expires_at: float, now: float, owner: str | None = None) -> bool:
        # Atomic in Redis: of two replicas presenting the same answer, one sets the key. Redis's
        # own expiry collects it (with grace, so a replica whose clock runs behind still finds it
        # while the seal is live for it); the principal's index counts only its live ones.
        expire_ms = math.ceil(expires_at * 1000) + self._grace_ms
        keys = [self._used_key(nonce), self._prefix + "used-by:" + _tag(owner)]
        args = [expire_ms, math.floor(expires_at * 1000), self._quota, math.floor(now * 1000), self._grace_ms]
        try:
            created = await self._consume(keys=keys, args=args)
        except (redis.exceptions.RedisError, OSError) as exc:
            raise _unavailable() from exc
        return bool(created == 1)

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


def _tag(owner: str | None) -> str:
    """32 hex digits naming a principal in key names; None (no callers' identities) is its own."""
    material = b"\x00" if owner is None else b"p:" + owner.encode("utf-8")
    return hashlib.sha256(material).hexdigest()[:32]


def _unavailable() -> TokenStoreUnavailable:
    return TokenStoreUnavailable(
        "The confirmation-token store (Redis) could not be reached, so nothing was done. "
        "Check that Redis is running and WOODPECKER_MCP_TOKEN_STORE points at it, then call again."
    )
