"""Unpredictable bytes, for tokens and nonces."""

from typing import Protocol


class Randomness(Protocol):
    def token_bytes(self, n: int) -> bytes:
        """`n` bytes from a cryptographically secure source."""
        ...
