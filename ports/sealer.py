"""Integrity protection for state that travels through the client."""

from typing import Protocol


class Sealer(Protocol):
    def seal(self, payload: bytes) -> str:
        """Return an opaque, URL-safe string that carries `payload` and its seal."""
        ...

    def unseal(self, sealed: str) -> bytes | None:
        """Return the payload, or None when the seal does not verify with any key. Never raises."""
        ...
