"""The HTTP gates (bearer auth, Origin/Host, body limit) over a real loopback socket around a trivial app."""

import hashlib
from collections.abc import AsyncIterator, Callable

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.http_auth import (
    LOOPBACK_HOSTS,
    BearerAuthMiddleware,
    BodyLimitMiddleware,
    OriginHostMiddleware,
    derive_principal_key,
    principal_of,
)
from ports.woodpecker import Credential
from tests.fixtures.http import EchoApp, serve_asgi

pytestmark = pytest.mark.anyio

SECRET = "shared-secret-for-tests-0123456789abcdef"
KEY = derive_principal_key(b"k" * 32)
TOKENS = {"alice-token-aaaa": "alice", "bob-token-bbbb": "bob"}


class FakeWoodpeckerVerifier:
    """Accepts the tokens Woodpecker knows; counts how often it was asked."""

    def __init__(self, *, fail: bool = False) -> None:
        self.asked: list[str] = []
        self.fail = fail

    async def __call__(self, credential: Credential) -> bool:
        self.asked.append(credential.reveal())
        if self.fail:
            raise ConnectionError("woodpecker.internal:8000 refused the connection")
        return credential.reveal() in TOKENS


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def shared() -> AsyncIterator[tuple[str, EchoApp]]:
    inner = EchoApp()
    app = BearerAuthMiddleware(inner, mode="shared", shared_secret=SECRET, principal_key=KEY)
    async with serve_asgi(app) as url:
        yield url, inner


async def test_shared_mode_without_a_bearer_is_401_with_a_challenge_and_the_app_never_runs(
    shared: tuple[str, EchoApp],
) -> None:
    url, inner = shared
    async with httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", json={"jsonrpc": "2.0"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="woodpecker-ci-mcp"'
    assert inner.calls == 0


WRONG_AUTHORIZATIONS = [
    "Bearer wrong-secret-wrong-secret-wrong-secret",
    f"Bearer {SECRET}x",
    f"Bearer {SECRET[:-1]}",
    f"Basic {SECRET}",
    "Bearer",
    f"Bearer {SECRET} extra",
]


async def test_shared_mode_with_a_wrong_bearer_is_401_invalid_token(shared: tuple[str, EchoApp]) -> None:
    url, inner = shared
    async with httpx.AsyncClient() as client:
        for authorization in WRONG_AUTHORIZATIONS:
            response = await client.post(url + "/mcp", headers={"Authorization": authorization}, json={})
            assert response.status_code == 401, authorization
            challenge = response.headers["www-authenticate"]
            assert challenge == 'Bearer realm="woodpecker-ci-mcp", error="invalid_token"', authorization
            assert SECRET not in response.text
    assert inner.calls == 0


async def test_shared_mode_with_the_secret_passes_a_principal_and_no_credential_and_hides_the_header(
    shared: tuple[str, EchoApp],
) -> None:
    url, inner = shared
    async with httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", headers=bearer(SECRET), json={})
    assert response.status_code == 200
    seen = response.json()
    assert seen["principal"] == principal_of(SECRET, KEY)
    assert SECRET not in seen["principal"]
    assert seen["credential"] is None  # the app uses the server's own token
    assert "authorization" not in seen["headers"]


async def test_two_authorization_headers_are_refused(shared: tuple[str, EchoApp]) -> None:
    url, inner = shared
    headers = [("Authorization", f"Bearer {SECRET}"), ("Authorization", f"Bearer {SECRET}")]
    async with httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", headers=headers, json={})
    assert response.status_code == 401
    assert inner.calls == 0


async def test_per_client_mode_forwards_exactly_the_callers_token_under_its_own_principal() -> None:
    inner, verifier = EchoApp(), FakeWoodpeckerVerifier()
    app = BearerAuthMiddleware(
        inner, mode="per-client", shared_secret=None, principal_key=KEY, verify=verifier
    )
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        alice = (await client.post(url + "/mcp", headers=bearer("alice-token-aaaa"), json={})).json()
        bob = (await client.post(url + "/mcp", headers=bearer("bob-token-bbbb"), json={})).json()
    assert alice["credential"] == "alice-token-aaaa"
    assert bob["credential"] == "bob-token-bbbb"
    assert alice["principal"] != bob["principal"]
    assert alice["principal"] == principal_of("alice-token-aaaa", KEY)
    assert "authorization" not in alice["headers"]


async def test_per_client_mode_refuses_no_bearer_and_a_token_woodpecker_rejects() -> None:
    inner, verifier = EchoApp(), FakeWoodpeckerVerifier()
    app = BearerAuthMiddleware(
        inner, mode="per-client", shared_secret=None, principal_key=KEY, verify=verifier
    )
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        missing = await client.post(url + "/mcp", json={})
        wrong = await client.post(url + "/mcp", headers=bearer("mallory-token"), json={})
    assert missing.status_code == 401
    assert "error=" not in missing.headers["www-authenticate"]
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert verifier.asked == ["mallory-token"]
    assert inner.calls == 0


async def test_per_client_verification_is_remembered_for_a_while_then_asked_again() -> None:
    inner, verifier = EchoApp(), FakeWoodpeckerVerifier()
    clock = [1000.0]
    app = BearerAuthMiddleware(
        inner,
        mode="per-client",
        shared_secret=None,
        principal_key=KEY,
        verify=verifier,
        verify_cache_seconds=60,
        monotonic=lambda: clock[0],
    )
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        for _ in range(3):
            assert (
                await client.post(url + "/mcp", headers=bearer("alice-token-aaaa"), json={})
            ).status_code == 200
        clock[0] += 61
        assert (
            await client.post(url + "/mcp", headers=bearer("alice-token-aaaa"), json={})
        ).status_code == 200
    assert verifier.asked == ["alice-token-aaaa", "alice-token-aaaa"]
    assert inner.calls == 4


async def test_per_client_mode_answers_503_not_401_when_woodpecker_cannot_be_asked() -> None:
    inner, verifier = EchoApp(), FakeWoodpeckerVerifier(fail=True)
    app = BearerAuthMiddleware(
        inner, mode="per-client", shared_secret=None, principal_key=KEY, verify=verifier
    )
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", headers=bearer("alice-token-aaaa"), json={})
    assert response.status_code == 503
    assert "woodpecker.internal" not in response.text
    assert "alice-token-aaaa" not in response.text
    assert inner.calls == 0


def test_principals_agree_across_replicas_with_one_seal_key_and_differ_with_another() -> None:
    assert principal_of("t", derive_principal_key(b"a" * 32)) == principal_of(
        "t", derive_principal_key(b"a" * 32)
    )
    assert principal_of("t", derive_principal_key(b"a" * 32)) != principal_of(
        "t", derive_principal_key(b"b" * 32)
    )
    # The principal is not a plain hash of the token, so it cannot be looked up offline.
    assert principal_of("t", KEY) not in hashlib.sha256(b"t").hexdigest()


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"mode": "shared", "shared_secret": None}, "at least"),
        ({"mode": "shared", "shared_secret": "short"}, "at least"),
        ({"mode": "per-client", "shared_secret": SECRET}, "no shared secret"),
        ({"mode": "anonymous", "shared_secret": None}, "mode"),
    ],
)
def test_a_configuration_that_could_fall_back_to_anonymous_is_refused(
    kwargs: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        BearerAuthMiddleware(EchoApp(), principal_key=KEY, **kwargs)  # type: ignore[arg-type]  # deliberately wrong values


@given(token=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
async def test_any_bearer_but_the_secret_is_refused(token: str) -> None:
    inner = EchoApp()
    app = BearerAuthMiddleware(inner, mode="shared", shared_secret=SECRET, principal_key=KEY)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/mcp", headers=bearer(token), json={})
    assert response.status_code == (200 if token == SECRET else 401)
    assert inner.calls == (1 if token == SECRET else 0)


# ------------------------------------------------------------------ Origin and Host


def origin_host_app(
    inner: EchoApp, origins: tuple[str, ...] = ("https://app.example.com",)
) -> OriginHostMiddleware:
    return OriginHostMiddleware(
        inner, allowed_hosts=(*LOOPBACK_HOSTS, "mcp.example.com"), allowed_origins=origins
    )


ORIGIN_HOST_CASES: list[tuple[dict[str, str], int]] = [
    ({}, 200),
    ({"Origin": "https://app.example.com"}, 200),
    ({"Origin": "https://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Origin": "https://app.example.com.evil.example"}, 403),
    ({"Host": "mcp.example.com"}, 200),
    ({"Host": "MCP.example.com:443"}, 200),
    ({"Host": "localhost:1234"}, 200),
    ({"Host": "evil.example"}, 421),
    ({"Host": "mcp.example.com.evil.example"}, 421),
    ({"Host": "127.0.0.1.nip.io:8000"}, 421),
    ({"Host": "evil.example", "Origin": "https://app.example.com"}, 421),
]


async def test_origin_and_host_are_checked_against_their_allow_lists() -> None:
    inner = EchoApp()
    async with serve_asgi(origin_host_app(inner)) as url, httpx.AsyncClient() as client:
        for headers, status in ORIGIN_HOST_CASES:
            response = await client.post(url + "/mcp", headers=headers, json={})
            assert response.status_code == status, headers
    assert inner.calls == sum(1 for _, status in ORIGIN_HOST_CASES if status == 200)


async def test_loopback_origins_pass_only_when_listed() -> None:
    inner = EchoApp()
    app = origin_host_app(inner, origins=("http://localhost:*",))
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        ok = await client.post(url + "/mcp", headers={"Origin": "http://localhost:6274"}, json={})
        tricked = await client.post(
            url + "/mcp", headers={"Origin": "http://localhost:6274.evil.example"}, json={}
        )
        other = await client.post(url + "/mcp", headers={"Origin": "http://127.0.0.1:6274"}, json={})
    assert (ok.status_code, tricked.status_code, other.status_code) == (200, 403, 403)


@given(host=st.from_regex(r"[a-z0-9.-]{1,30}(:[0-9]{1,5})?", fullmatch=True))
@settings(max_examples=80, deadline=None)
async def test_a_host_outside_the_list_never_reaches_the_app(host: str) -> None:
    inner = EchoApp()
    transport = httpx.ASGITransport(app=origin_host_app(inner))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/mcp", headers={"Host": host}, json={})
    name = host.rpartition(":")[0] if ":" in host else host
    allowed = name in ("127.0.0.1", "localhost", "mcp.example.com")
    assert response.status_code == (200 if allowed else 421)


# ------------------------------------------------------------------ body limit


def body_app(inner: EchoApp, timeout: float = 10.0) -> BodyLimitMiddleware:
    return BodyLimitMiddleware(inner, max_bytes=1024, timeout_seconds=timeout)


async def test_a_declared_body_over_the_limit_is_413_before_it_is_read() -> None:
    inner = EchoApp()
    async with serve_asgi(body_app(inner)) as url, httpx.AsyncClient() as client:
        response = await client.post(url + "/mcp", content=b"x" * 1025)
    assert response.status_code == 413
    assert inner.calls == 0


def chunks(total: int, size: int = 100) -> Callable[[], AsyncIterator[bytes]]:
    async def generate() -> AsyncIterator[bytes]:
        sent = 0
        while sent < total:
            part = min(size, total - sent)
            sent += part
            yield b"y" * part

    return generate


async def test_a_chunked_body_over_the_limit_is_413_and_one_at_the_limit_arrives_whole() -> None:
    inner = EchoApp()
    async with serve_asgi(body_app(inner)) as url, httpx.AsyncClient() as client:
        over = await client.post(url + "/mcp", content=chunks(5000)())
        at = await client.post(url + "/mcp", content=chunks(1024)())
    assert over.status_code == 413
    assert at.status_code == 200
    assert at.json()["body_bytes"] == 1024
    assert inner.calls == 1


async def test_a_body_that_never_finishes_is_cut_off_with_408() -> None:
    inner = EchoApp()
    async with serve_asgi(body_app(inner, timeout=0.3)) as url:
        host, port = url.removeprefix("http://").split(":")
        with anyio.fail_after(10):
            async with await anyio.connect_tcp(host, int(port)) as stream:
                # Promise 100 bytes, send one, then go quiet.
                await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
                answer = await stream.receive()
    assert answer.startswith(b"HTTP/1.1 408")
    assert inner.calls == 0
