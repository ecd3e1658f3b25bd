"""Randomness that is deterministic: the n-th call returns bytes derived from a seed and n."""

import hashlib


class FakeRandomness:
    def __init__(self, seed: str = "fake") -> None:
        self._seed = seed
        self.calls = 0

    def token_bytes(self, n: int) -> bytes:
        self.calls += 1
        out = b""
        block = 0
        while len(out) < n:
            out += hashlib.sha256(f"{self._seed}:{self.calls}:{block}".encode()).digest()
            block += 1
        return out[:n]
