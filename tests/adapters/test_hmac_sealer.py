"""HmacSealer: HMAC-SHA256 seals, a key ring for rotation, keys from configuration that are never echoed."""

import hashlib
import hmac
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.hmac_sealer import HmacFingerprintKeys, HmacSealer
from domain.config import ConfigError

KEY_A = bytes(range(32))
KEY_B = bytes(range(1, 33))


@given(st.binary(max_size=500))
def test_a_sealed_payload_unseals_to_itself(payload: bytes) -> None:
    sealer = HmacSealer([KEY_A])
    sealed = sealer.seal(payload)
    assert sealer.unseal(sealed) == payload
    assert set(sealed) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


@given(st.binary(min_size=1, max_size=200), st.data())
def test_any_flipped_byte_of_a_seal_is_refused(payload: bytes, data: st.DataObject) -> None:
    sealer = HmacSealer([KEY_A])
    sealed = sealer.seal(payload).encode("ascii")
    index = data.draw(st.integers(0, len(sealed) - 1))
    flip = data.draw(st.integers(1, 255))
    tampered = bytearray(sealed)
    tampered[index] ^= flip
    assert sealer.unseal(tampered.decode("latin-1")) is None


def test_another_spelling_of_the_same_bytes_is_refused() -> None:
    # A 32-byte tag leaves two unused bits in its last base64 character; a lenient decoder
    # would read a sibling character as the same tag.
    sealer = HmacSealer([KEY_A])
    sealed = sealer.seal(b"payload")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    sibling = alphabet[alphabet.index(sealed[-1]) ^ 1]
    assert sealer.unseal(sealed[:-1] + sibling) is None


def test_a_seal_made_with_another_key_is_refused() -> None:
    assert HmacSealer([KEY_B]).unseal(HmacSealer([KEY_A]).seal(b"x")) is None


def test_the_first_key_seals_and_every_key_of_the_ring_opens() -> None:
    old = HmacSealer([KEY_A]).seal(b"in flight")
    ring = HmacSealer([KEY_B, KEY_A])
    assert ring.unseal(old) == b"in flight"
    assert HmacSealer([KEY_B]).unseal(ring.seal(b"new")) == b"new"
    assert HmacSealer([KEY_A]).unseal(ring.seal(b"new")) is None


@given(st.text() | st.none() | st.integers() | st.binary())
def test_unsealing_garbage_returns_none_and_never_raises(garbage: Any) -> None:
    assert HmacSealer([KEY_A]).unseal(garbage) is None


@pytest.mark.parametrize("keys", [[], [b"short"], [KEY_A, b"x" * 31]])
def test_a_key_ring_needs_at_least_one_key_of_32_bytes_each(keys: list[bytes]) -> None:
    with pytest.raises(ConfigError):
        HmacSealer(keys)


def test_the_sealer_does_not_show_its_keys() -> None:
    sealer = HmacSealer([KEY_A, KEY_B])
    assert repr(sealer) == "HmacSealer(keys=2)" and KEY_A.hex() not in repr(sealer)


_KEYS = st.binary(min_size=32, max_size=64)
_FINGERPRINTS = st.text(min_size=1, max_size=80)


@given(key=_KEYS, fingerprint=_FINGERPRINTS)
def test_a_keyed_fingerprint_is_64_hex_and_the_same_for_every_process_with_that_key(
    key: bytes, fingerprint: str
) -> None:
    (one,) = HmacFingerprintKeys([key]).keyed(fingerprint)
    (other,) = HmacFingerprintKeys([bytes(key)]).keyed(fingerprint)
    assert one == other and len(one) == 64 and set(one) <= set("0123456789abcdef")
    # Neither the plain digest of what it keys nor the seal key's own MAC of it: nothing a reader
    # without the derived key could recompute.
    assert one != hashlib.sha256(fingerprint.encode()).hexdigest()
    assert one != hmac.new(key, fingerprint.encode(), hashlib.sha256).hexdigest()


@given(keys=st.lists(_KEYS, min_size=2, max_size=2, unique=True), fingerprint=_FINGERPRINTS)
def test_other_keys_give_other_fingerprints(keys: list[bytes], fingerprint: str) -> None:
    a, b = (HmacFingerprintKeys([k]).keyed(fingerprint)[0] for k in keys)
    assert a != b


@given(fingerprints=st.lists(_FINGERPRINTS, min_size=2, max_size=2, unique=True))
def test_other_fingerprints_key_differently(fingerprints: list[str]) -> None:
    keyer = HmacFingerprintKeys([KEY_A])
    assert keyer.keyed(fingerprints[0]) != keyer.keyed(fingerprints[1])


def test_a_rotated_ring_keys_under_the_new_first_key_and_still_knows_the_old_one() -> None:
    old = HmacFingerprintKeys([KEY_A]).keyed("fp")
    rotated = HmacFingerprintKeys([KEY_B, KEY_A]).keyed("fp")
    assert rotated == (HmacFingerprintKeys([KEY_B]).keyed("fp")[0], old[0])
    assert HmacFingerprintKeys([KEY_B]).keyed("fp")[0] != old[0]


def test_the_fingerprint_ring_refuses_what_the_seal_ring_refuses_and_never_shows_a_key() -> None:
    with pytest.raises(ConfigError):
        HmacFingerprintKeys([])
    with pytest.raises(ConfigError):
        HmacFingerprintKeys([b"short"])
    assert repr(HmacFingerprintKeys([KEY_A, KEY_B])) == "HmacFingerprintKeys(keys=2)"
