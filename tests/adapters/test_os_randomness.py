"""OsRandomness returns the bytes asked for, from the operating system's CSPRNG."""

import pytest

from adapters.os_randomness import OsRandomness


@pytest.mark.parametrize("n", [0, 1, 16, 64])
def test_it_returns_exactly_the_number_of_bytes_asked_for(n: int) -> None:
    assert len(OsRandomness().token_bytes(n)) == n


def test_two_draws_differ() -> None:
    randomness = OsRandomness()
    assert randomness.token_bytes(16) != randomness.token_bytes(16)
