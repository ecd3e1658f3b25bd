"""The LinkedTokens port in memory or in Redis: each person's Woodpecker token sealed with AES-GCM, pending links by digest.

A token is sealed with the first key of a ring (every key opens, so keys rotate by
prepending a new one) and the principal as associated data: a sealed value copied under
another person's key does not open. What the store holds (process memory or Redis values)
is `v1.<key id>.<base64 nonce+ciphertext>`; a link id is stored as its SHA-256 only, and the
sign-in name a link shows is sealed the same way (with its own label).
"""

import base64
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

import redis.asyncio
import redis.exceptions
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ports.linked_tokens import LinkedToken, PendingLink
from ports.token_store import TokenStoreUnavailable
from ports.woodpecker import Credential

KEY_BYTES = 32
_NONCE_BYTES = 12
_VERSION = "v1"
_AAD_LABEL = b"woodpecker-ci-mcp linked token v1\0"
_NAME_LABEL = b"woodpecker-ci-mcp link sign-in name v1\0"


class TokenCipher:
    """AES-256-GCM over a key ring: the first key seals, every key opens."""

    def __init__(self, keys: Sequence[bytes], random_bytes: Any) -> None:
        if not keys or any(len(k) != KEY_BYTES for k in keys):
            raise ValueError(f"the link key ring needs keys of exactly {KEY_BYTES} bytes")
        self._ring = {hashlib.sha256(k).hexdigest()[:8]: AESGCM(k) for k in keys}
        self._first = hashlib.sha256(keys[0]).hexdigest()[:8]
        self._random_bytes = random_bytes

    def seal(self, principal: str, plaintext: bytes, label: bytes = _AAD_LABEL) -> str:
        nonce = self._random_bytes(_NONCE_BYTES)
        sealed = self._ring[self._first].encrypt(nonce, plaintext, label + principal.encode())
        return f"{_VERSION}.{self._first}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def open(self, principal: str, value: str, label: bytes = _AAD_LABEL) -> bytes | None:
        version, _, rest = value.partition(".")
        key_id, _, blob = rest.partition(".")
        aead = self._ring.get(key_id)
        if version != _VERSION or aead is None:
            return None
        try:
            raw = base64.urlsafe_b64decode(blob.encode())
            return aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], label + principal.encode())
        except (InvalidTag, ValueError):
            return None


def _encode(token: LinkedToken) -> bytes:
    data = {"t": token.credential.reveal(), "l": token.login, "at": token.linked_at, "a": token.announced}
    return json.dumps(data).encode()


def _decode(raw: bytes) -> LinkedToken | None:
    try:
        data = json.loads(raw)
        # A token linked before announcements were kept counts as announced: nothing to name now.
        announced = data.get("a", True) is not False
        return LinkedToken(Credential(str(data["t"])), str(data["l"]), float(data["at"]), announced)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class _Backend(Protocol):
    async def get(self, key: str) -> str | None: ...
    async def set(self, key: str, value: str) -> None: ...
    async def replace(self, key: str, old: str, new: str) -> bool: ...
    async def delete(self, key: str) -> bool: ...
    async def put_link(self, key: str, value: str, expires_at: float) -> None: ...
    async def peek_link(self, key: str) -> str | None: ...
    async def take_link(self, key: str) -> str | None: ...


class SealedLinkedTokens:
    """LinkedTokens over a backend that only ever sees ciphertext and digests."""

    def __init__(self, backend: _Backend, cipher: TokenCipher) -> None:
        self._backend = backend
        self._cipher = cipher

    async def token(self, principal: str) -> LinkedToken | None:
        value = await self._backend.get("token:" + _digest(principal))
        if value is None:
            return None
        raw = self._cipher.open(principal, value)
        return _decode(raw) if raw is not None else None

    async def store(self, principal: str, token: LinkedToken) -> None:
        await self._backend.set("token:" + _digest(principal), self._cipher.seal(principal, _encode(token)))

    async def remove(self, principal: str) -> bool:
        return await self._backend.delete("token:" + _digest(principal))

    async def announce(self, principal: str) -> LinkedToken | None:
        key = "token:" + _digest(principal)
        value = await self._backend.get(key)
        raw = self._cipher.open(principal, value) if value is not None else None
        token = _decode(raw) if raw is not None else None
        if value is None or token is None or token.announced:
            return None
        # Only over the very value read: an unlink or a new link meanwhile is never undone.
        told = self._cipher.seal(principal, _encode(replace(token, announced=True)))
        return token if await self._backend.replace(key, value, told) else None

    async def open_link(self, link_id: str, principal: str, expires_at: float, sign_in_name: str) -> None:
        name = self._cipher.seal(principal, sign_in_name.encode(), _NAME_LABEL)
        await self._backend.put_link(
            "link:" + _digest(link_id), f"{expires_at!r}|{principal}|{name}", expires_at
        )

    async def link_owner(self, link_id: str, now: float) -> PendingLink | None:
        return self._live(await self._backend.peek_link("link:" + _digest(link_id)), now)

    async def take_link(self, link_id: str, now: float) -> str | None:
        pending = self._live(await self._backend.take_link("link:" + _digest(link_id)), now)
        return pending.principal if pending is not None else None

    def _live(self, value: str | None, now: float) -> PendingLink | None:
        if value is None:
            return None
        expires, _, rest = value.partition("|")
        principal, _, name = rest.partition("|")
        try:
            if not (now < float(expires) and principal):
                return None
        except ValueError:
            return None
        raw = self._cipher.open(principal, name, _NAME_LABEL) if name else None
        return PendingLink(principal, raw.decode("utf-8", "replace") if raw is not None else "")


class MemoryBackend:
    """One process's vault. Bounded: the oldest entries go first once `max_entries` is reached."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self._max = max_entries
        self._tokens: OrderedDict[str, str] = OrderedDict()
        self._links: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def values(self) -> list[str]:
        """Everything stored (for tests: only ciphertext and digests)."""
        return [*self._tokens, *self._tokens.values(), *self._links, *self._links.values()]

    async def get(self, key: str) -> str | None:
        return self._tokens.get(key)

    async def set(self, key: str, value: str) -> None:
        with self._lock:
            self._tokens.pop(key, None)
            self._tokens[key] = value
            while len(self._tokens) > self._max:
                self._tokens.popitem(last=False)

    async def replace(self, key: str, old: str, new: str) -> bool:
        with self._lock:
            if self._tokens.get(key) != old:
                return False
            self._tokens[key] = new
            return True

    async def delete(self, key: str) -> bool:
        with self._lock:
            return self._tokens.pop(key, None) is not None

    async def put_link(self, key: str, value: str, expires_at: float) -> None:
        with self._lock:
            self._links[key] = value
            while len(self._links) > self._max:
                self._links.popitem(last=False)

    async def peek_link(self, key: str) -> str | None:
        return self._links.get(key)

    async def take_link(self, key: str) -> str | None:
        with self._lock:
            return self._links.pop(key, None)


# SET only while the key still holds the value that was read: one script, so nothing runs in between.
_REPLACE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2]) return 1 end return 0"
)


class RedisBackend:
    """The vault in Redis, shared by replicas. A link is taken with GETDEL: once, fleet-wide."""

    def __init__(
        self, url: str, *, prefix: str = "woodpecker-mcp:linked:", timeout_seconds: float = 2.0
    ) -> None:
        self._redis: Any = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout_seconds, socket_connect_timeout=timeout_seconds, decode_responses=True
        )
        self._prefix = prefix

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self._redis, method)(*args, **kwargs)
        except (redis.exceptions.RedisError, OSError) as exc:
            raise TokenStoreUnavailable(
                "The linked-token store (Redis) could not be reached; check WOODPECKER_MCP_TOKEN_STORE."
            ) from exc

    async def get(self, key: str) -> str | None:
        value = await self._call("get", self._prefix + key)
        return str(value) if value is not None else None

    async def set(self, key: str, value: str) -> None:
        await self._call("set", self._prefix + key, value)

    async def replace(self, key: str, old: str, new: str) -> bool:
        return bool(await self._call("eval", _REPLACE, 1, self._prefix + key, old, new))

    async def delete(self, key: str) -> bool:
        return bool(await self._call("delete", self._prefix + key))

    async def put_link(self, key: str, value: str, expires_at: float) -> None:
        await self._call("set", self._prefix + key, value, pxat=int(expires_at * 1000) + 60_000)

    async def peek_link(self, key: str) -> str | None:
        value = await self._call("get", self._prefix + key)
        return str(value) if value is not None else None

    async def take_link(self, key: str) -> str | None:
        value = await self._call("getdel", self._prefix + key)
        return str(value) if value is not None else None

    async def aclose(self) -> None:
        await self._redis.aclose()
