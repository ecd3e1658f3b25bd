"""InMemoryTokenStore: single use, expiry, wrong digests leave the entry, bounded with the right evictions."""

import anyio
import pytest

from adapters.memory_token_store import InMemoryTokenStore
from tests.fakes.clock import FakeClock

pytestmark = pytest.mark.anyio

FP_1, FP_2, FP_3 = "1" * 64, "2" * 64, "3" * 64


async def test_a_pending_digest_is_taken_exactly_once() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=100.0)
    assert await store.take(FP_1, "d1", now=50.0)
    assert not await store.take(FP_1, "d1", now=50.0)


async def test_a_wrong_digest_leaves_the_pending_one_in_place() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=100.0)
    assert not await store.take(FP_1, "wrong", now=50.0)
    assert not await store.take(FP_1, "dé", now=50.0)  # non-ASCII compares without raising
    assert await store.take(FP_1, "d1", now=50.0)


async def test_a_digest_is_refused_for_another_fingerprint_and_after_expiry() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=100.0)
    assert not await store.take(FP_2, "d1", now=50.0)
    assert not await store.take(FP_1, "d1", now=100.0)
    assert len(store) == 0


async def test_a_new_put_replaces_the_pending_digest_of_its_fingerprint() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "old", expires_at=100.0)
    await store.put(FP_1, "new", expires_at=100.0)
    assert not await store.take(FP_1, "old", now=1.0)
    assert await store.take(FP_1, "new", now=1.0)


async def test_a_full_store_evicts_expired_entries_before_the_oldest() -> None:
    clock = FakeClock(start=0.0)
    store = InMemoryTokenStore(max_entries=2, now=clock.now)
    await store.put(FP_1, "d1", expires_at=1000.0)  # oldest, still valid
    await store.put(FP_2, "d2", expires_at=10.0)  # newer, expires first
    clock.set(20.0)
    await store.put(FP_3, "d3", expires_at=1000.0)
    assert await store.take(FP_1, "d1", now=20.0)
    assert await store.take(FP_3, "d3", now=20.0)


async def test_a_full_store_without_expired_entries_evicts_the_oldest() -> None:
    store = InMemoryTokenStore(max_entries=2, now=lambda: 0.0)
    await store.put(FP_1, "d1", expires_at=1000.0)
    await store.put(FP_2, "d2", expires_at=1000.0)
    await store.put(FP_3, "d3", expires_at=1000.0)
    assert len(store) == 2
    assert not await store.take(FP_1, "d1", now=1.0)
    assert await store.take(FP_2, "d2", now=1.0)


async def test_concurrent_redemptions_of_one_token_succeed_once() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=1000.0)
    results: list[bool] = []

    async def redeem() -> None:
        results.append(await store.take(FP_1, "d1", now=1.0))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(redeem)
    assert results.count(True) == 1 and len(results) == 20


def test_a_store_needs_room_for_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        InMemoryTokenStore(max_entries=0)


async def test_a_sealed_answers_nonce_is_consumed_once_until_it_expires() -> None:
    store = InMemoryTokenStore()
    assert await store.consume_once("n1", expires_at=100.0, now=10.0)
    assert not await store.consume_once("n1", expires_at=100.0, now=20.0)
    assert await store.consume_once("n2", expires_at=100.0, now=20.0)
    # After its seal expired the nonce can go: the seal itself no longer opens.
    assert await store.consume_once("n1", expires_at=200.0, now=100.0)


async def test_a_store_full_of_live_nonces_refuses_rather_than_forgets_one() -> None:
    store = InMemoryTokenStore(max_entries=2)
    assert await store.consume_once("n1", expires_at=100.0, now=1.0)
    assert await store.consume_once("n2", expires_at=50.0, now=1.0)
    assert not await store.consume_once("n3", expires_at=100.0, now=1.0)  # ask again, later
    assert not await store.consume_once("n1", expires_at=100.0, now=1.0)
    assert await store.consume_once("n3", expires_at=100.0, now=60.0)  # n2 expired and made room
    assert not await store.consume_once("n1", expires_at=100.0, now=60.0)


async def test_nonces_and_pending_tokens_do_not_meet() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=100.0)
    assert await store.consume_once(FP_1, expires_at=100.0, now=1.0)
    assert await store.take(FP_1, "d1", now=1.0)
