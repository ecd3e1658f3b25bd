"""The Sealer and FingerprintKeys ports with HMAC-SHA256 and a key ring: the first key seals, every key opens."""

import base64
import hashlib
import hmac
import re
from collections.abc import Sequence

from domain.config import ConfigError

MIN_KEY_BYTES = 32
# Domain separation: a MAC made here can never be mistaken for one made for another purpose.
_CONTEXT = b"woodpecker-ci-mcp/seal/v1\x00"
# The fingerprint key of each seal key: HMAC(seal key, this label). No seal tag can equal it, as
# every sealed message starts with `_CONTEXT`, and no principal key either (another label).
_FINGERPRINT_KEY_LABEL = b"woodpecker-ci-mcp/fingerprint-key/v1\x00"
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


def _ring(keys: Sequence[bytes]) -> tuple[bytes, ...]:
    """Raises ConfigError when the ring is empty or a key is shorter than 32 bytes."""
    if not keys:
        raise ConfigError("the seal key ring is empty; give at least one key")
    for position, key in enumerate(keys, start=1):
        if len(key) < MIN_KEY_BYTES:
            raise ConfigError(
                f"seal key {position} is {len(key)} bytes long; each key needs at least {MIN_KEY_BYTES}"
            )
    return tuple(bytes(k) for k in keys)


class HmacSealer:
    """`<payload>.<tag>`, both base64url without padding."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        """Raises ConfigError when the ring is empty or a key is shorter than 32 bytes."""
        self._keys = _ring(keys)

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


class HmacFingerprintKeys:
    """HMAC-SHA256 of a fingerprint under a key derived from each seal key, the first key first.

    Replicas sharing the seal key ring agree on every keyed fingerprint; a process with other
    keys computes unrelated ones. A ring rotated by prepending a key still recognises what the
    old first key keyed, until that key leaves the ring.
    """

    def __init__(self, keys: Sequence[bytes]) -> None:
        """Raises ConfigError when the ring is empty or a key is shorter than 32 bytes."""
        self._keys = tuple(hmac.new(k, _FINGERPRINT_KEY_LABEL, hashlib.sha256).digest() for k in _ring(keys))

    def __repr__(self) -> str:
        return f"HmacFingerprintKeys(keys={len(self._keys)})"

    def keyed(self, fingerprint: str) -> tuple[str, ...]:
        message = fingerprint.encode("utf-8")
        return tuple(hmac.new(key, message, hashlib.sha256).hexdigest() for key in self._keys)
