"""RedisTokenStore against a real redis-server: single use across replicas, digests only, bounded."""

import hashlib
import time
import uuid
from collections.abc import AsyncIterator

import anyio
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.redis_token_store import RedisTokenStore
from ports.token_store import TokenStoreUnavailable
from tests.fixtures.http import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

LIFETIME = 300.0


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture
async def store(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisTokenStore]:
    s = RedisTokenStore(redis_url, prefix=redis_prefix)
    yield s
    await s.aclose()


async def test_a_token_is_redeemed_exactly_once(store: RedisTokenStore) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("a"), now + LIFETIME)
    assert await store.take("fp-1", digest_of("a"), now + 1) is True
    assert await store.take("fp-1", digest_of("a"), now + 2) is False


async def test_a_wrong_digest_does_not_cancel_the_pending_token(store: RedisTokenStore) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("right"), now + LIFETIME)
    assert await store.take("fp-1", digest_of("wrong"), now + 1) is False
    assert await store.take("fp-1", "short", now + 1) is False
    assert await store.take("fp-1", digest_of("right"), now + 1) is True


async def test_a_token_is_refused_for_another_fingerprint(store: RedisTokenStore) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("a"), now + LIFETIME)
    assert await store.take("fp-2", digest_of("a"), now + 1) is False
    assert await store.take("fp-1", digest_of("a"), now + 1) is True


async def test_expiry_is_decided_by_the_callers_clock_and_an_expired_token_is_gone(
    store: RedisTokenStore,
) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("a"), now + LIFETIME)
    assert await store.take("fp-1", digest_of("a"), now + LIFETIME) is False
    # Refused at expiry and removed: even an earlier clock cannot bring it back.
    assert await store.take("fp-1", digest_of("a"), now) is False


async def test_a_second_put_replaces_the_pending_token(store: RedisTokenStore) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("old"), now + LIFETIME)
    await store.put("fp-1", digest_of("new"), now + LIFETIME)
    assert await store.take("fp-1", digest_of("old"), now + 1) is False
    assert await store.take("fp-1", digest_of("new"), now + 1) is True


async def test_two_replicas_racing_redeem_a_token_once(redis_url: str, redis_prefix: str) -> None:
    replicas = [RedisTokenStore(redis_url, prefix=redis_prefix) for _ in range(2)]
    now = time.time()
    await replicas[0].put("fp-race", digest_of("t"), now + LIFETIME)
    results: list[bool] = []

    async def redeem(replica: RedisTokenStore) -> None:
        results.append(await replica.take("fp-race", digest_of("t"), now + 1))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(redeem, replicas[i % 2])
    for replica in replicas:
        await replica.aclose()
    assert results.count(True) == 1
    assert len(results) == 20


async def test_two_replicas_racing_to_act_on_one_sealed_answer_consume_it_once(
    redis_url: str, redis_prefix: str
) -> None:
    replicas = [RedisTokenStore(redis_url, prefix=redis_prefix) for _ in range(2)]
    now = time.time()
    results: list[bool] = []

    async def act(replica: RedisTokenStore) -> None:
        results.append(await replica.consume_once("nonce-race", now + LIFETIME, now))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(act, replicas[i % 2])
    assert await replicas[1].consume_once("another-nonce", now + LIFETIME, now) is True
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = [k for k in raw.keys(redis_prefix + "used:*")]
        assert len(keys) == 2 and all("nonce" not in k for k in keys)
        assert all(0 < raw.pttl(k) <= (LIFETIME + 61) * 1000 for k in keys)  # kept until the seal expires
    finally:
        raw.close()
    for replica in replicas:
        await replica.aclose()
    assert results.count(True) == 1 and len(results) == 20


async def test_redis_holds_only_digests_under_hashed_keys_with_a_ttl(
    store: RedisTokenStore, redis_url: str, redis_prefix: str
) -> None:
    now = time.time()
    fingerprint = "approve_pipeline|repo_id=5|number=12"
    await store.put(fingerprint, digest_of("the-token-value"), now + LIFETIME)
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = [k for k in raw.scan_iter(match=redis_prefix + "*")]
        entry_keys = [k for k in keys if raw.type(k) == "string"]
        assert len(entry_keys) == 1
        key = entry_keys[0]
        assert "approve_pipeline" not in key
        value = raw.get(key)
        assert value is not None
        assert "the-token-value" not in value
        assert value.endswith(digest_of("the-token-value"))
        ttl_ms = raw.pttl(key)
        assert 0 < ttl_ms <= (LIFETIME + 61) * 1000
    finally:
        raw.close()


async def test_the_store_is_bounded_and_evicts_the_earliest_expiring_first(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisTokenStore(redis_url, prefix=redis_prefix, max_entries=3)
    now = time.time()
    await store.put("expired", digest_of("e"), now - 10)
    for i in range(3):
        await store.put(f"fp-{i}", digest_of(str(i)), now + LIFETIME + i)
    # Four puts into room for three: the expired entry made way, every live one survives.
    assert [await store.take(f"fp-{i}", digest_of(str(i)), now) for i in range(3)] == [True] * 3
    for i in range(4):
        await store.put(f"fp-{i}", digest_of(str(i)), now + LIFETIME + i)
    # Now the oldest live one (fp-0) had to go.
    assert [await store.take(f"fp-{i}", digest_of(str(i)), now) for i in range(4)] == [
        False,
        True,
        True,
        True,
    ]
    await store.aclose()


async def test_an_unreachable_redis_is_a_clear_error_that_names_no_url() -> None:
    url = f"redis://:hunter2-password@127.0.0.1:{free_port()}/0"
    store = RedisTokenStore(url, timeout_seconds=0.5)
    with anyio.fail_after(10):
        with pytest.raises(TokenStoreUnavailable) as caught:
            await store.take("fp", digest_of("x"), time.time())
        with pytest.raises(TokenStoreUnavailable):
            await store.put("fp", digest_of("x"), time.time() + 1)
        assert await store.ping() is False
    assert "hunter2" not in str(caught.value)
    assert "127.0.0.1" not in str(caught.value)
    assert "nothing was done" in str(caught.value)
    await store.aclose()


def test_a_url_that_is_not_redis_is_refused_without_being_echoed() -> None:
    with pytest.raises(ValueError) as caught:
        RedisTokenStore("http://user:s3cret@example.invalid/")
    assert "s3cret" not in str(caught.value)


operations = st.lists(
    st.tuples(
        st.sampled_from(["put", "take"]),
        st.sampled_from(["fp-a", "fp-b"]),
        st.sampled_from(["t1", "t2"]),
        st.integers(min_value=0, max_value=4),  # clock step before the operation
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_the_store_agrees_with_a_model_of_single_use_tokens(
    ops: list[tuple[str, str, str, int]], redis_url: str, redis_prefix: str
) -> None:
    async def run() -> None:
        # A prefix of this example's own: hypothesis may replay an example (shrinking, or from
        # its database), and a replay must not meet the entries its first run left behind.
        store = RedisTokenStore(redis_url, prefix=f"{redis_prefix}{uuid.uuid4().hex}:")
        model: dict[str, tuple[str, float]] = {}
        now = time.time()
        try:
            for op, fingerprint, token, step in ops:
                now += step
                if op == "put":
                    await store.put(fingerprint, digest_of(token), now + 5)
                    model[fingerprint] = (digest_of(token), now + 5)
                    continue
                pending = model.get(fingerprint)
                expired = pending is not None and now >= pending[1]
                expected = pending is not None and not expired and pending[0] == digest_of(token)
                if expired or expected:
                    del model[fingerprint]
                assert await store.take(fingerprint, digest_of(token), now) is expected
        finally:
            await store.aclose()

    anyio.run(run)


# ---------------------------------------------------------------- per-principal quotas

ADMIN, FLOODER = "admin-principal", "flooding-principal"


async def test_one_principals_flood_evicts_only_its_own_pending_tokens_in_redis(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisTokenStore(redis_url, prefix=redis_prefix, max_entries=20, per_principal=3)
    now = time.time()
    try:
        await store.put("admin-fp", digest_of("admin"), now + LIFETIME, ADMIN)
        for i in range(30):
            await store.put(f"flood-{i}", digest_of("f"), now + LIFETIME + i, FLOODER)
        assert await store.take("admin-fp", digest_of("admin"), now + 1, ADMIN) is True
        kept = [await store.take(f"flood-{i}", digest_of("f"), now + 1, FLOODER) for i in range(26, 30)]
        assert kept == [False, True, True, True]
    finally:
        await store.aclose()


async def test_a_token_in_redis_is_taken_only_by_its_principal(store: RedisTokenStore) -> None:
    now = time.time()
    await store.put("fp-1", digest_of("a"), now + LIFETIME, ADMIN)
    assert await store.take("fp-1", digest_of("a"), now + 1, FLOODER) is False
    assert await store.take("fp-1", digest_of("a"), now + 1, ADMIN) is True


async def test_a_full_redis_store_evicts_from_the_principal_holding_the_most(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisTokenStore(redis_url, prefix=redis_prefix, max_entries=4, per_principal=3)
    now = time.time()
    try:
        await store.put("admin-1", digest_of("d"), now + LIFETIME, ADMIN)
        for i in range(3):
            await store.put(f"a-{i}", digest_of("d"), now + LIFETIME + i, "a")
        await store.put("b-0", digest_of("d"), now + LIFETIME + 9, "b")
        assert await store.take("a-0", digest_of("d"), now + 1, "a") is False
        assert await store.take("admin-1", digest_of("d"), now + 1, ADMIN) is True
        assert [await store.take(f"a-{i}", digest_of("d"), now + 1, "a") for i in (1, 2)] == [True, True]
        assert await store.take("b-0", digest_of("d"), now + 1, "b") is True
        # Every index emptied with its entries: nothing is counted for anyone any more.
        raw = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            assert list(raw.scan_iter(match=redis_prefix + "*")) == []
        finally:
            raw.close()
    finally:
        await store.aclose()


async def test_filling_the_used_nonces_in_redis_freezes_only_the_flooders_approvals(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisTokenStore(redis_url, prefix=redis_prefix, per_principal=3)
    now = time.time()
    try:
        for i in range(3):
            assert await store.consume_once(f"f-{i}", now + LIFETIME, now, FLOODER) is True
        assert await store.consume_once("f-3", now + LIFETIME, now, FLOODER) is False
        assert await store.consume_once("admin-answer", now + LIFETIME, now, ADMIN) is True
        assert await store.consume_once("f-0", now + LIFETIME, now + 1, FLOODER) is False
        # Once its seals have expired by the caller's clock, the flooder has room again.
        assert await store.consume_once("f-3", now + 2 * LIFETIME, now + LIFETIME, FLOODER) is True
    finally:
        await store.aclose()


quota_operations = st.lists(
    st.tuples(
        st.sampled_from([ADMIN, FLOODER, None]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=16,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=quota_operations)
def test_redis_agrees_with_the_memory_store_on_who_keeps_what(
    ops: list[tuple[str | None, int]], redis_url: str, redis_prefix: str
) -> None:
    from adapters.memory_token_store import InMemoryTokenStore

    async def run() -> None:
        now = time.time()
        prefix = f"{redis_prefix}{uuid.uuid4().hex}:"
        store = RedisTokenStore(redis_url, prefix=prefix, max_entries=4, per_principal=2, now=lambda: now)
        model = InMemoryTokenStore(max_entries=4, per_principal=2, now=lambda: now)
        try:
            for i, (owner, n) in enumerate(ops):
                # Later puts expire later, so "earliest expiring" and "oldest" name the same entry.
                await store.put(f"{owner}-{n}", digest_of("d"), now + LIFETIME + i, owner)
                await model.put(f"{owner}-{n}", digest_of("d"), now + LIFETIME + i, owner)
            # Each principal's count is the size of its index, and every entry is in both indexes.
            raw = redis.Redis.from_url(redis_url, decode_responses=True)
            try:
                counts = dict(raw.zrange(prefix + "owners", 0, -1, withscores=True))
                indexed = {tag: raw.zcard(prefix + "owner:" + tag) for tag in counts}
                assert {tag: float(n) for tag, n in indexed.items()} == counts
                assert sum(indexed.values()) == raw.zcard(prefix + "index") <= 4
            finally:
                raw.close()
            for owner in (ADMIN, FLOODER, None):
                for n in range(5):
                    expected = await model.take(f"{owner}-{n}", digest_of("d"), now, owner)
                    assert await store.take(f"{owner}-{n}", digest_of("d"), now, owner) is expected
        finally:
            await store.aclose()

    anyio.run(run)


async def test_an_idle_principals_index_and_count_go_with_its_expired_entries(
    redis_url: str, redis_prefix: str
) -> None:
    now = time.time()
    clock = [now]
    store = RedisTokenStore(redis_url, prefix=redis_prefix, now=lambda: clock[0])
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for i in range(3):
            await store.put(f"idle-{i}", digest_of("d"), now + 5, "idle")
        await store.put("busy-0", digest_of("d"), now + LIFETIME, "busy")
        counts = dict(raw.zrange(redis_prefix + "owners", 0, -1, withscores=True))
        assert sorted(counts.values()) == [1.0, 3.0]
        clock[0] = now + 10  # the idle principal's tokens have expired by the callers' clock
        await store.put("busy-1", digest_of("d"), now + LIFETIME, "busy")
        assert list(raw.zrange(redis_prefix + "owners", 0, -1, withscores=True)) == [
            (next(k for k in raw.scan_iter(match=redis_prefix + "owner:*")).rsplit(":", 1)[1], 2.0)
        ]
        assert raw.zcard(redis_prefix + "index") == 2
    finally:
        raw.close()
        await store.aclose()


async def test_a_record_in_redis_is_read_by_its_owner_until_it_expires_and_apart_from_tokens(
    redis_url: str, redis_prefix: str
) -> None:
    store = RedisTokenStore(redis_url, prefix=redis_prefix, max_entries=20, per_principal=3)
    now = time.time()
    try:
        await store.put("fp-1", digest_of("a"), now + LIFETIME, FLOODER)
        await store.put_record("r1", "open|1.0|b", now + LIFETIME, ADMIN)
        for i in range(10):
            await store.put_record(f"flood-{i}", "declined", now + LIFETIME + i, FLOODER)
        await store.put_record("fp-1", "ran", now + LIFETIME, FLOODER)  # a record's key is not a token's
        assert await store.get_record("r1", now + 1, ADMIN) == "open|1.0|b"
        assert await store.get_record("r1", now + 1, ADMIN) == "open|1.0|b"
        assert await store.get_record("r1", now + 1, FLOODER) is None
        assert await store.get_record("r1", now + LIFETIME, ADMIN) is None
        assert [await store.get_record(f"flood-{i}", now + 1, FLOODER) for i in range(7, 10)] == [
            None,
            "declined",
            "declined",
        ]
        await store.put_record("r1", "ran", now + LIFETIME, ADMIN)
        assert await store.get_record("r1", now + 1, ADMIN) == "ran"
        assert await store.take("fp-1", digest_of("a"), now + 1, FLOODER) is True
    finally:
        await store.aclose()
