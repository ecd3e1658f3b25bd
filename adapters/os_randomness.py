"""The Randomness port on the operating system's CSPRNG (`secrets`)."""

import secrets


class OsRandomness:
    def token_bytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)
