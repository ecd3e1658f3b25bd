"""CallerRoles against the sandbox over real loopback HTTP: Woodpecker's own `admin` answer, remembered per principal by the Clock, in a bounded cache."""

import httpx
import pytest

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from ports.use_cases.caller_roles import UNIDENTIFIED_OWNER, CallerRoles
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.clock import FakeClock
from tests.fixtures.http import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def asked(sandbox: Sandbox) -> list[str | None]:
    return [r.login for r in sandbox.requests if r.path == "/api/user"]


async def test_the_admin_is_an_admin_and_the_others_are_not(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    roles = CallerRoles(gateway, FakeClock())
    assert await roles.is_admin("p-admin", Credential(sandbox.admin_token)) is True
    assert await roles.is_admin("p-user", Credential(sandbox.user_token)) is False
    assert await roles.is_admin("p-outsider", Credential(sandbox.outsider_token)) is False


async def test_an_answer_is_remembered_per_principal_until_the_clock_passes_its_lifetime(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    clock = FakeClock()
    roles = CallerRoles(gateway, clock, ttl_seconds=60)
    admin = Credential(sandbox.admin_token)
    assert await roles.is_admin("p-admin", admin)
    clock.advance(59)
    assert await roles.is_admin("p-admin", admin)
    assert asked(sandbox) == [sandbox.admin_login]
    clock.advance(1)
    assert await roles.is_admin("p-admin", admin)
    assert asked(sandbox) == [sandbox.admin_login] * 2


async def test_the_cache_holds_at_most_its_capacity_forgetting_the_least_recently_used(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    roles = CallerRoles(gateway, FakeClock(), capacity=2)
    admin, user = Credential(sandbox.admin_token), Credential(sandbox.user_token)
    await roles.is_admin("a", admin)
    await roles.is_admin("b", user)
    await roles.is_admin("a", admin)  # a is now the most recently used
    await roles.is_admin("c", user)  # b goes
    sandbox.clear_requests()
    await roles.is_admin("a", admin)
    await roles.is_admin("b", user)
    assert asked(sandbox) == [sandbox.user_login]


async def test_a_refused_token_is_not_an_admin_and_nothing_is_remembered(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    roles = CallerRoles(gateway, FakeClock())
    assert await roles.is_admin("p", Credential("not-a-token-anyone-has")) is False
    assert await roles.is_admin("p", Credential("not-a-token-anyone-has")) is False
    assert len(asked(sandbox)) == 2


async def test_the_quota_owner_is_the_woodpecker_account_whichever_bearer_it_came_with(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    roles = CallerRoles(gateway, FakeClock())
    user = Credential(sandbox.user_token)
    first = await roles.quota_owner("p-first-bearer", user)
    again = await roles.quota_owner("p-rotated-bearer", user)
    admin = await roles.quota_owner("p-admin", Credential(sandbox.admin_token))
    assert first == again and first.startswith("account:")
    assert admin.startswith("account:") and admin != first
    # One question per principal, shared with the admin answer.
    assert await roles.is_admin("p-first-bearer", user) is False
    assert asked(sandbox) == [sandbox.user_login, sandbox.user_login, sandbox.admin_login]


async def test_a_refused_token_is_the_shared_unidentified_owner_and_nothing_is_remembered(
    sandbox: Sandbox, gateway: HttpxWoodpeckerGateway
) -> None:
    roles = CallerRoles(gateway, FakeClock())
    assert await roles.quota_owner("p", Credential("not-a-token-anyone-has")) == UNIDENTIFIED_OWNER
    assert await roles.quota_owner("q", Credential("another-token-nobody-has")) == UNIDENTIFIED_OWNER
    assert await roles.quota_owner("p", Credential("not-a-token-anyone-has")) == UNIDENTIFIED_OWNER
    assert len(asked(sandbox)) == 3


async def test_when_woodpecker_cannot_be_asked_the_caller_is_not_an_admin_and_is_asked_again() -> None:
    # Nothing listens on this port: a connection error, as when Woodpecker is down.
    unreachable = HttpxWoodpeckerGateway(
        f"http://127.0.0.1:{free_port()}",
        trust_env=False,
        retries=0,
        timeout=5.0,
        transport=httpx.AsyncHTTPTransport(),
    )
    try:
        roles = CallerRoles(unreachable, FakeClock())
        assert await roles.is_admin("p", Credential("whatever-token")) is False
        assert await roles.quota_owner("p", Credential("whatever-token")) == UNIDENTIFIED_OWNER
    finally:
        await unreachable.aclose()


def test_a_cache_without_lifetime_or_room_is_refused() -> None:
    with pytest.raises(ValueError):
        CallerRoles(None, FakeClock(), ttl_seconds=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CallerRoles(None, FakeClock(), capacity=0)  # type: ignore[arg-type]
