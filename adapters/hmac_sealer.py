"""The Sealer port with HMAC-SHA256 and a key ring: the first key seals, every key opens."""

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence

from domain.config import ConfigError

MIN_KEY_BYTES = 32
DEFAULT_KEYS_VARIABLE = "WOODPECKER_MCP_SEAL_KEYS"
# Domain separation: a MAC made here can never be mistaken for one made for another purpose.
_CONTEXT = b"woodpecker-ci-mcp/seal/v1\x00"
_TAG_BYTES = 32
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes | None:
    """Strict: only the URL-safe alphabet, no padding, and only the one canonical spelling."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    # Unused low bits make several spellings decode alike; accept only the one we would write.
    return data if _b64encode(data) == text else None


class HmacSealer:
    """`<payload>.<tag>`, both base64url without padding."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        """Raises ConfigError when the ring is empty or a key is shorter than 32 bytes."""
        if not keys:
            raise ConfigError("the seal key ring is empty; give at least one key")
        for position, key in enumerate(keys, start=1):
            if len(key) < MIN_KEY_BYTES:
                raise ConfigError(
                    f"seal key {position} is {len(key)} bytes long; each key needs at least {MIN_KEY_BYTES}"
                )
        self._keys = tuple(bytes(k) for k in keys)

    @classmethod
    def from_config(cls, b64_keys: str | None, *, variable: str = DEFAULT_KEYS_VARIABLE) -> "HmacSealer":
        """Keys from a comma-separated list of base64 (standard or URL-safe) values, first one sealing.

        Unset or blank: one random key for this process, so questions do not survive a restart
        or travel between replicas. Errors name the variable and the entry's position, never
        the key.
        """
        if b64_keys is None or not b64_keys.strip():
            return cls([secrets.token_bytes(MIN_KEY_BYTES)])
        keys: list[bytes] = []
        entries = [e.strip() for e in b64_keys.split(",")]
        for position, entry in enumerate(entries, start=1):
            if not entry:
                raise ConfigError(
                    f"{variable}: entry {position} is empty; separate base64 keys with single commas"
                )
            try:
                standard = entry.replace("-", "+").replace("_", "/").rstrip("=")
                key = base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
            except (binascii.Error, ValueError):
                raise ConfigError(f"{variable}: entry {position} is not valid base64") from None
            if len(key) < MIN_KEY_BYTES:
                raise ConfigError(
                    f"{variable}: entry {position} decodes to {len(key)} bytes; each key needs at least "
                    f"{MIN_KEY_BYTES} (for example: openssl rand -base64 32)"
                )
            keys.append(key)
        return cls(keys)

    def __repr__(self) -> str:
        return f"HmacSealer(keys={len(self._keys)})"

    def _tag(self, key: bytes, payload: bytes) -> bytes:
        return hmac.new(key, _CONTEXT + payload, hashlib.sha256).digest()

    def seal(self, payload: bytes) -> str:
        return f"{_b64encode(payload)}.{_b64encode(self._tag(self._keys[0], payload))}"

    def unseal(self, sealed: str) -> bytes | None:
        try:
            return self._unseal(sealed)
        except Exception:  # the port never raises: a state that cannot be read is "no answer"
            return None

    def _unseal(self, sealed: str) -> bytes | None:
        if not isinstance(sealed, str) or sealed.count(".") != 1:
            return None
        encoded_payload, encoded_tag = sealed.split(".")
        payload, tag = _b64decode(encoded_payload), _b64decode(encoded_tag)
        if payload is None or tag is None or len(tag) != _TAG_BYTES:
            return None
        # Try every key without stopping early, so timing says nothing about which key matched.
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(self._tag(key, payload), tag)
        return payload if matched else None
