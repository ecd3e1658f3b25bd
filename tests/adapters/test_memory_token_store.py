"""InMemoryTokenStore: single use, expiry, wrong digests leave the entry, bounded with the right evictions."""

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ---------------------------------------------------------------- per-principal quotas

ADMIN, FLOODER = "admin-principal", "flooding-principal"


async def test_one_principals_flood_of_first_calls_evicts_only_its_own_pending_tokens() -> None:
    store = InMemoryTokenStore(max_entries=10, per_principal=3)
    await store.put(FP_1, "admin", expires_at=1e12, owner=ADMIN)
    for i in range(100):
        await store.put(f"flood-{i}", "d", expires_at=1e12, owner=FLOODER)
    assert store.held_by(FLOODER) == 3 and store.held_by(ADMIN) == 1
    assert await store.take(FP_1, "admin", now=1.0, owner=ADMIN)
    # The flooder kept its three newest.
    assert [await store.take(f"flood-{i}", "d", now=1.0, owner=FLOODER) for i in (96, 97, 98, 99)] == [
        False,
        True,
        True,
        True,
    ]


async def test_a_principal_over_its_quota_drops_its_expired_tokens_before_its_oldest() -> None:
    clock = FakeClock(start=0.0)
    store = InMemoryTokenStore(per_principal=2, now=clock.now)
    await store.put(FP_1, "d1", expires_at=1000.0, owner=ADMIN)
    await store.put(FP_2, "d2", expires_at=10.0, owner=ADMIN)
    clock.set(20.0)
    await store.put(FP_3, "d3", expires_at=1000.0, owner=ADMIN)
    assert await store.take(FP_1, "d1", now=20.0, owner=ADMIN)
    assert await store.take(FP_3, "d3", now=20.0, owner=ADMIN)


async def test_a_full_store_evicts_from_the_principal_holding_the_most() -> None:
    store = InMemoryTokenStore(max_entries=4, per_principal=3)
    await store.put("admin-1", "d", expires_at=1e12, owner=ADMIN)
    for i in range(3):
        await store.put(f"a-{i}", "d", expires_at=1e12, owner="a")
    # Full: b's first token costs a (holding 3) its oldest, never the admin's one.
    await store.put("b-0", "d", expires_at=1e12, owner="b")
    assert len(store) == 4 and store.held_by("a") == 2 and store.held_by(ADMIN) == 1
    assert not await store.take("a-0", "d", now=1.0, owner="a")
    assert await store.take("admin-1", "d", now=1.0, owner=ADMIN)


async def test_a_token_is_taken_only_by_the_principal_it_was_issued_to() -> None:
    store = InMemoryTokenStore()
    await store.put(FP_1, "d1", expires_at=100.0, owner=ADMIN)
    assert not await store.take(FP_1, "d1", now=1.0, owner=FLOODER)
    assert await store.take(FP_1, "d1", now=1.0, owner=ADMIN)


async def test_filling_the_used_nonces_freezes_only_the_flooders_own_approvals() -> None:
    store = InMemoryTokenStore(max_entries=100, per_principal=3)
    for i in range(3):
        assert await store.consume_once(f"f-{i}", expires_at=600.0, now=1.0, owner=FLOODER)
    assert not await store.consume_once("f-3", expires_at=600.0, now=1.0, owner=FLOODER)
    assert await store.consume_once("admin-answer", expires_at=600.0, now=1.0, owner=ADMIN)
    # Its live nonces are never forgotten: each is still refused, and room comes back with expiry.
    assert not await store.consume_once("f-0", expires_at=600.0, now=2.0, owner=FLOODER)
    assert await store.consume_once("f-3", expires_at=1200.0, now=600.0, owner=FLOODER)


def test_a_quota_needs_room_for_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        InMemoryTokenStore(per_principal=0)


OWNERS = st.sampled_from([ADMIN, FLOODER, "third", None])
STORE_OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "consume"]),
        OWNERS,
        st.integers(min_value=0, max_value=5),  # which key of that owner
        st.integers(min_value=0, max_value=3),  # clock step before the operation
        st.integers(min_value=1, max_value=8),  # lifetime
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(
    ops=STORE_OPS, bound=st.integers(min_value=1, max_value=6), quota=st.integers(min_value=1, max_value=4)
)
def test_a_principal_only_ever_evicts_or_freezes_its_own_unless_the_store_is_full(
    ops: list[tuple[str, str | None, int, int, int]], bound: int, quota: int
) -> None:
    clock = FakeClock(start=0.0)
    store = InMemoryTokenStore(max_entries=bound, per_principal=quota, now=clock.now)
    quota = min(quota, bound)

    def pending() -> dict[str, tuple[str | None, float]]:
        return {k: (owner, exp) for k, (_, exp, owner, _age) in store._pending.entries.items()}

    def used() -> dict[str, tuple[str | None, float]]:
        return {k: (owner, exp) for k, (_, exp, owner, _age) in store._used.entries.items()}

    async def run() -> None:
        for op, owner, n, step, lifetime in ops:
            clock.advance(step)
            now = clock.now()
            key = f"{owner}-{n}"
            if op == "put":
                before = pending()
                held = {
                    o: sum(1 for x, _ in before.values() if x == o) for o in {x for x, _ in before.values()}
                }
                mine = held.get(owner, 0) - (1 if key in before else 0)
                full = len(before) - (1 if key in before else 0) >= bound
                await store.put(key, "d", now + lifetime, owner)
                after = pending()
                for other_key, (other, expires_at) in before.items():
                    if other == owner or now >= expires_at or other_key in after:
                        continue
                    # Another principal's live token went: only from a full store, and only
                    # from a principal holding more than this one.
                    assert full and held[other] > mine, (other_key, before, after)
            else:
                before = used()
                live_before = {k for k, (_, exp) in before.items() if now < exp}
                mine_live = sum(1 for k in live_before if before[k][0] == owner)
                first = await store.consume_once(key, now + lifetime, now, owner)
                after = used()
                assert live_before <= set(after)  # a live nonce is never forgotten
                if key in live_before:
                    assert not first
                elif not first:
                    assert mine_live >= quota or len(live_before) >= bound
            assert len(store._pending) <= bound and len(store._used) <= bound
            for o in {x for x, _ in pending().values()}:
                assert store._pending.count(o) <= quota
            for o in {x for x, _ in used().values()}:
                assert store._used.count(o) <= quota

    anyio.run(run)


# ---------------------------------------------------------------- approval views' ticket records


async def test_a_record_is_read_by_its_owner_until_it_expires_and_reading_changes_nothing() -> None:
    store = InMemoryTokenStore()
    await store.put_record("r1", "open|1.0|b", expires_at=100.0, owner=ADMIN)
    assert await store.get_record("r1", now=50.0, owner=ADMIN) == "open|1.0|b"
    assert await store.get_record("r1", now=50.0, owner=ADMIN) == "open|1.0|b"
    assert await store.get_record("r1", now=50.0, owner=FLOODER) is None
    assert await store.get_record("r1", now=50.0) is None
    assert await store.get_record("r2", now=50.0, owner=ADMIN) is None
    await store.put_record("r1", "ran", expires_at=100.0, owner=ADMIN)
    assert await store.get_record("r1", now=50.0, owner=ADMIN) == "ran"
    assert await store.get_record("r1", now=100.0, owner=ADMIN) is None


async def test_records_take_no_room_from_pending_tokens_and_a_flood_evicts_its_own_oldest() -> None:
    store = InMemoryTokenStore(max_entries=10, per_principal=3, now=lambda: 0.0)
    await store.put(FP_1, "d1", expires_at=100.0, owner=FLOODER)
    await store.put_record("admin", "ran", expires_at=100.0, owner=ADMIN)
    for i in range(30):
        await store.put_record(f"flood-{i}", "declined", expires_at=100.0, owner=FLOODER)
    await store.put_record(FP_1, "ran", expires_at=100.0, owner=FLOODER)  # a record's key is not a token's
    assert await store.get_record("admin", now=1.0, owner=ADMIN) == "ran"
    assert [await store.get_record(f"flood-{i}", now=1.0, owner=FLOODER) for i in range(27, 30)] == [
        None,
        "declined",
        "declined",
    ]
    assert await store.take(FP_1, "d1", now=1.0, owner=FLOODER)
