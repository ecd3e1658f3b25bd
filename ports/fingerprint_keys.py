"""A server secret for every fingerprint that leaves the process (a requestState, a token-store key)."""

from typing import Protocol


class FingerprintKeys(Protocol):
    def keyed(self, fingerprint: str) -> tuple[str, ...]:
        """`fingerprint` under each key of the ring, the current key first: 64 lowercase hex each.

        The domain's fingerprint is a plain digest of the call (a body-bound call's digests its
        body, a new secret value included), so whoever reads it could test guesses offline; a
        keyed one says nothing without the key. Issue under the first, accept any (rotation).
        """
        ...
