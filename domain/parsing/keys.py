"""Keys given as text (WOODPECKER_MCP_SEAL_KEYS, WOODPECKER_MCP_LINK_KEYS): a comma list of base64 keys."""

import base64
import binascii

from domain.config import ConfigError

MIN_KEY_BYTES = 32
GENERATE = "generate a key with: openssl rand -base64 32"


def decode_key(entry: str) -> bytes | None:
    """One base64 key, in the standard or the URL-safe alphabet, with or without padding; None if it is not base64."""
    normal = entry.strip().replace("-", "+").replace("_", "/")
    normal += "=" * (-len(normal) % 4)
    try:
        return base64.b64decode(normal, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_keys(raw: str, name: str, *, exact: int | None = None) -> tuple[bytes, ...]:
    """The keys of `raw` (comma-separated, blanks between commas ignored), in order.

    Each must decode and be at least 32 bytes (exactly `exact` when given).

    Raises:
        ConfigError: one clause per refused entry, by position (never its text), and how to make one.
    """
    keys: list[bytes] = []
    problems: list[str] = []
    entries = [e for e in raw.split(",") if e.strip()]
    for position, entry in enumerate(entries, start=1):
        key = decode_key(entry)
        if key is None:
            problems.append(f"{name} entry {position} is not base64")
        elif exact is not None and len(key) != exact:
            problems.append(f"{name} entry {position} is not exactly {exact} bytes")
        elif len(key) < MIN_KEY_BYTES:
            problems.append(f"{name} entry {position} is shorter than {MIN_KEY_BYTES} bytes")
        else:
            keys.append(key)
    if problems:
        raise ConfigError("; ".join(problems) + f"; {GENERATE}")
    return tuple(keys)
