"""The vendored contract data (ADR 0025) is what SHA256SUMS pins, and so is every shared original found beside the checkout."""

import hashlib
import json

from tests.contract_data import HERE, SUMS, VENDORED, upstream_of


def pinned() -> dict[str, str]:
    return {name: digest for digest, name in (line.split() for line in SUMS.read_text().splitlines())}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_pins_name_exactly_the_vendored_files() -> None:
    assert sorted(pinned()) == sorted(str(p.relative_to(HERE)) for p in VENDORED)


def test_every_vendored_file_is_the_pinned_json() -> None:
    sums = pinned()
    for path in VENDORED:
        data = path.read_bytes()
        assert digest(data) == sums[str(path.relative_to(HERE))], f"{path.name} was edited: copy it afresh"
        assert isinstance(json.loads(data), dict)


def test_the_shared_originals_beside_the_checkout_have_not_moved_on() -> None:
    # In a clone with no shared specification beside it there is nothing to compare: the pins
    # above still hold. Beside one (development), a changed original means: vendor it again.
    sums = pinned()
    drifted = [
        str(upstream_of(path))
        for path in VENDORED
        if upstream_of(path).exists()
        and digest(upstream_of(path).read_bytes()) != sums[str(path.relative_to(HERE))]
    ]
    assert drifted == [], "re-copy these into tests/contract_data/ and update SHA256SUMS"
