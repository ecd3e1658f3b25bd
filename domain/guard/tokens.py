"""Two-call confirmation tokens: 32 lowercase hex, stored only as a digest."""

import hashlib
import re
from typing import TypeGuard

TOKEN_TTL_SECONDS = 300
TOKEN_BYTES = 16
# Also the JSON-Schema pattern of the `confirm_token` argument.
TOKEN_PATTERN = "^[0-9a-f]{32}$"  # noqa: S105 - a pattern, not a secret
_TOKEN_RE = re.compile(TOKEN_PATTERN)


def new_token(entropy: bytes) -> str:
    """The token for 16 random bytes.

    Raises:
        ValueError: `entropy` is not exactly 16 bytes.
    """
    if len(entropy) != TOKEN_BYTES:
        raise ValueError(f"a token needs exactly {TOKEN_BYTES} random bytes")
    return entropy.hex()


def digest(token: str) -> str:
    """What a token store keeps instead of the token (sha256, hex)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_well_formed(token: object) -> TypeGuard[str]:
    """True for a string of exactly 32 lowercase hex digits."""
    return isinstance(token, str) and _TOKEN_RE.fullmatch(token) is not None
