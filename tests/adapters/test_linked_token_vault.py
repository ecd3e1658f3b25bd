"""The linked-token vault: sealed with AES-GCM bound to the person, a rotatable ring, single-use links, in memory and in Redis."""

import hashlib
import os

import anyio
import pytest

from adapters.linked_token_vault import MemoryBackend, RedisBackend, SealedLinkedTokens, TokenCipher
from ports.linked_tokens import LinkedToken, PendingLink
from ports.woodpecker import Credential

pytestmark = pytest.mark.anyio

CANARY = "canary-woodpecker-token-0123456789abcdef"
OLD, NEW = b"o" * 32, b"n" * 32


def token(value: str = CANARY) -> LinkedToken:
    return LinkedToken(Credential(value), "bob", 1_700_000_000.0)


def vault(backend: object, *keys: bytes) -> SealedLinkedTokens:
    return SealedLinkedTokens(backend, TokenCipher(list(keys) or [OLD], os.urandom))  # type: ignore[arg-type]


async def test_only_ciphertext_is_stored_and_it_opens_for_its_own_principal_only() -> None:
    backend = MemoryBackend()
    v = vault(backend)
    await v.store("alice", token())
    assert (await v.token("alice")) == token()
    assert all(CANARY not in value and "alice" not in value for value in backend.values())
    # Alice's sealed value copied under Bob's key does not open: the principal is associated data.
    [sealed] = [value for value in backend.values() if value.startswith("v1.")]
    await backend.set("token:" + hashlib.sha256(b"bob").hexdigest(), sealed)
    assert await v.token("bob") is None


async def test_the_first_key_seals_every_key_opens_and_a_dropped_key_opens_nothing() -> None:
    backend = MemoryBackend()
    await vault(backend, OLD).store("alice", token())
    assert (await vault(backend, NEW, OLD).token("alice")) == token()  # rotation: old still opens
    await vault(backend, NEW, OLD).store("alice", token("re-sealed-token"))
    assert (await vault(backend, NEW).token("alice")) == token("re-sealed-token")
    assert await vault(backend, OLD).token("alice") is None  # sealed with NEW, OLD cannot open it


async def test_a_link_works_once_and_not_after_it_expires() -> None:
    v = vault(MemoryBackend())
    await v.open_link("link-1", "alice", expires_at=100.0, sign_in_name="alice@example.org")
    assert await v.link_owner("link-1", now=50.0) == PendingLink("alice", "alice@example.org")
    assert await v.take_link("link-1", now=50.0) == "alice"
    assert await v.take_link("link-1", now=50.0) is None
    await v.open_link("link-2", "alice", expires_at=100.0, sign_in_name="alice@example.org")
    assert await v.link_owner("link-2", now=100.0) is None
    assert await v.take_link("link-2", now=100.0) is None


@pytest.mark.redis
async def test_in_redis_two_replicas_racing_take_a_link_once_and_read_each_others_tokens(
    redis_url: str,
) -> None:
    first, second = RedisBackend(redis_url), RedisBackend(redis_url)
    a, b = vault(first, NEW, OLD), vault(second, NEW, OLD)
    try:
        await a.store("alice", token())
        assert (await b.token("alice")) == token()
        await a.open_link("shared-link", "alice", expires_at=2e9, sign_in_name="alice")
        winners: list[str | None] = []

        async def take(v: SealedLinkedTokens) -> None:
            winners.append(await v.take_link("shared-link", now=1e9))

        async with anyio.create_task_group() as group:
            for v in (a, b, a, b):
                group.start_soon(take, v)
        assert winners.count("alice") == 1 and winners.count(None) == 3
        assert await b.remove("alice") is True
        assert await a.token("alice") is None
    finally:
        await first.aclose()
        await second.aclose()


def fresh(value: str = CANARY, login: str = "bob") -> LinkedToken:
    return LinkedToken(Credential(value), login, 1_700_000_000.0, announced=False)


async def announcements(v: SealedLinkedTokens) -> None:
    """One new link is announced once; an unlink or a newer link meanwhile is never undone by it."""
    await v.store("alice", fresh())
    assert await v.announce("alice") == fresh()
    assert await v.announce("alice") is None
    assert await v.token("alice") == token()  # the same token, now announced
    await v.store("alice", fresh())
    await v.remove("alice")
    assert await v.announce("alice") is None and await v.token("alice") is None
    await v.store("alice", fresh(login="carol"))
    assert await v.announce("bob") is None
    assert await v.announce("alice") == fresh(login="carol")


async def test_a_new_link_is_announced_once_and_an_unlink_stays_done() -> None:
    await announcements(vault(MemoryBackend()))


async def test_an_announcement_over_a_value_replaced_meanwhile_changes_nothing() -> None:
    backend = MemoryBackend()
    v = vault(backend)
    await v.store("alice", fresh())
    [read] = [value for value in backend.values() if value.startswith("v1.")]
    await v.store("alice", fresh(login="carol"))
    key = "token:" + hashlib.sha256(b"alice").hexdigest()
    assert await backend.replace(key, read, "v1.x.y") is False
    assert await v.announce("alice") == fresh(login="carol")


@pytest.mark.redis
async def test_in_redis_a_new_link_is_announced_once_and_an_unlink_stays_done(redis_url: str) -> None:
    backend = RedisBackend(redis_url, prefix=f"test-announce:{os.urandom(4).hex()}:")
    try:
        await announcements(vault(backend))
        await backend.delete("token:" + hashlib.sha256(b"alice").hexdigest())
    finally:
        await backend.aclose()
