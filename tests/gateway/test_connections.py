"""The Woodpecker adapter's connections on a real socket: reused while sound, dropped when not, no cookie kept, proxies honoured."""

import asyncio
import ipaddress
import string

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.woodpecker_httpx.pool import OneOriginPool
from adapters.woodpecker_httpx.transport import _not_proxied
from ports.woodpecker import Credential, Request, ServerError
from tests.fixtures.gateway import (
    GatewayFactory,
    Handler,
    ScriptedServer,
    Seen,
    json_response,
    raw_response,
    repeated,
    streamed,
)

pytestmark = pytest.mark.anyio

GET = Request("GET", "/api/user")
POST = Request("POST", "/api/repos/1/pipelines", body={"branch": "main"})
PROXY_VARIABLES = [f"{n}_proxy" for n in ("http", "https", "all", "no")]
# One TLS context for every pool here, as the gateway shares one: loading the CA bundle costs
# about 50 ms, and the pools here speak plain HTTP to the scripted servers.
TLS = httpx.create_ssl_context()


def answered_then_hung_up(data: dict[str, object]) -> Handler:
    """A complete keep-alive answer, after which the server closes the connection anyway."""
    inner = json_response(200, data)

    async def handler(seen: Seen, writer: asyncio.StreamWriter) -> bool:
        await inner(seen, writer)
        return False

    return handler


async def test_calls_one_after_another_share_one_connection(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    for _ in range(5):
        assert (await gateway.send(GET, None)).data == {"ok": True}
    assert scripted_server.connections == 1
    assert len(scripted_server.requests) == 5


async def test_an_answer_not_read_to_its_end_closes_its_connection(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # An error body far beyond what the adapter reads of one (64 KiB): the rest stays unread, so
    # the connection cannot carry another request and must not go back to the pool.
    scripted_server.then(raw_response(500, b"x" * 1_000_000, content_type="text/plain"))
    gateway = make_gateway(scripted_server.url)
    with pytest.raises(ServerError):
        await gateway.send(POST, None)
    assert (await gateway.send(GET, None)).data == {"ok": True}
    assert scripted_server.connections == 2


async def test_a_connection_the_server_hung_up_is_not_used_again(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    scripted_server.then(answered_then_hung_up({"first": True}))
    gateway = make_gateway(scripted_server.url)
    assert (await gateway.send(GET, None)).data == {"first": True}
    # Whether the pool sees the hang-up before sending or the read retries after it, the call
    # works, on a second connection.
    assert (await gateway.send(GET, None)).data == {"ok": True}
    assert scripted_server.connections == 2


async def test_no_cookie_travels_from_one_answer_to_a_later_request(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # One adapter serves every caller of a shared server: a cookie a proxy sets on one caller's
    # answer must not ride along with the next caller's request.
    scripted_server.then(
        json_response(200, {"login": "ada"}, headers=[("Set-Cookie", "session=ada-s-session; Path=/")])
    )
    gateway = make_gateway(scripted_server.url)
    await gateway.send(GET, Credential("ada-token"))
    await gateway.send(GET, Credential("bob-token"))
    assert [r.headers.get("cookie") for r in scripted_server.requests] == [None, None]
    assert scripted_server.requests[1].headers["authorization"] == "Bearer bob-token"


def clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


async def test_a_proxy_the_environment_names_carries_the_request(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", scripted_server.url)
    gateway = make_gateway("http://woodpecker.invalid", trust_env=True)
    assert (await gateway.send(GET, None)).data == {"ok": True}
    [seen] = scripted_server.requests
    # An HTTP proxy gets the absolute URL; the token goes with it, as to Woodpecker itself.
    assert seen.target == "http://woodpecker.invalid/api/user"
    assert seen.headers["authorization"].startswith("Bearer ")


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "*", "localhost,127.0.0.0/8"])
async def test_no_proxy_covering_woodpecker_goes_direct(
    scripted_server: ScriptedServer,
    other_server: ScriptedServer,
    make_gateway: GatewayFactory,
    monkeypatch: pytest.MonkeyPatch,
    no_proxy: str,
) -> None:
    clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", other_server.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    gateway = make_gateway(scripted_server.url, trust_env=True)
    assert (await gateway.send(GET, None)).data == {"ok": True}
    assert other_server.connections == 0
    assert [r.target for r in scripted_server.requests] == ["/api/user"]


async def test_a_proxy_is_ignored_when_the_environment_is_not_trusted(
    scripted_server: ScriptedServer,
    other_server: ScriptedServer,
    make_gateway: GatewayFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", other_server.url)
    gateway = make_gateway(scripted_server.url, trust_env=False)
    await gateway.send(GET, None)
    assert other_server.connections == 0 and len(scripted_server.requests) == 1


# ---------------------------------------------------------------------- the pool itself


def pool_request(server: ScriptedServer, *, pool_timeout: float | None = 5.0) -> httpx.Request:
    return httpx.Request(
        "GET",
        f"{server.url}/api/user",
        extensions={"timeout": {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": pool_timeout}},
    )


async def test_a_full_pool_makes_the_next_request_wait_then_fail_with_PoolTimeout(
    scripted_server: ScriptedServer,
) -> None:
    pool = OneOriginPool(TLS, max_connections=1)
    try:
        held = await pool.handle_async_request(pool_request(scripted_server))
        with pytest.raises(httpx.PoolTimeout):
            await pool.handle_async_request(pool_request(scripted_server, pool_timeout=0))
        await held.aread()
        await held.aclose()
        # The slot came back with the answer's close; so did the connection.
        again = await pool.handle_async_request(pool_request(scripted_server, pool_timeout=0))
        await again.aread()
        await again.aclose()
        assert scripted_server.connections == 1
    finally:
        await pool.aclose()


async def test_a_pool_refuses_a_second_origin(
    scripted_server: ScriptedServer, other_server: ScriptedServer
) -> None:
    pool = OneOriginPool(TLS)
    try:
        answer = await pool.handle_async_request(pool_request(scripted_server))
        await answer.aclose()
        with pytest.raises(httpx.UnsupportedProtocol):
            await pool.handle_async_request(pool_request(other_server))
        assert other_server.connections == 0
    finally:
        await pool.aclose()


# What a caller may do with an answer, and what the server may do after it.
STEPS = st.lists(
    st.sampled_from(["read", "abandon", "close", "pair"]),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS, max_idle=st.integers(min_value=0, max_value=2))
def test_whatever_callers_do_every_slot_comes_back_and_every_answer_is_whole(
    steps: list[str], max_idle: int
) -> None:
    """A hypothesis run of reads, abandoned answers, answers that end their connection
    (`Connection: close`) and concurrent pairs: each answer read is the server's whole answer,
    every slot is free again afterwards, the pool never keeps more than `max_idle` idle
    connections, and a connection is reused exactly when its last answer was read to the end on
    a connection the server kept open."""

    async def scenario() -> None:
        server = ScriptedServer()
        await server.start()
        pool = OneOriginPool(TLS, max_idle=max_idle, max_connections=4)
        try:
            reusable = 0  # idle connections the pool may hand out again, by our own count
            for step in steps:
                before = server.connections
                if step == "close":
                    server.then(
                        raw_response(200, b'{"n": 1}', headers=[("Connection", "close")], content_length=8)
                    )
                elif step == "abandon":
                    server.then(streamed(repeated(b" " * 65_536, 16), content_length=16 * 65_536))
                if step == "pair":
                    first, second = await _two_at_once(pool, server)
                    assert first == second == b'{"ok": true}'
                    opened = server.connections - before
                    assert opened == max(0, 2 - reusable)
                    reusable = min(max_idle, 2)
                    continue
                answer = await pool.handle_async_request(pool_request(server))
                if step == "abandon":
                    await answer.aclose()
                else:
                    body = await answer.aread()
                    await answer.aclose()
                    assert body in (b'{"ok": true}', b'{"n": 1}')
                opened = server.connections - before
                assert opened == (0 if reusable else 1)
                if reusable:
                    reusable -= 1
                if step == "read" and max_idle:
                    reusable += 1
                assert pool.idle_connections <= max_idle
                assert pool._slots.value == 4
            assert pool._slots.value == 4
        finally:
            await pool.aclose()
            await server.close()

    anyio.run(scenario)


async def _two_at_once(pool: OneOriginPool, server: ScriptedServer) -> tuple[bytes, bytes]:
    bodies: list[bytes] = []
    started = anyio.Event()
    answers: list[httpx.Response] = []

    async def one() -> None:
        answer = await pool.handle_async_request(pool_request(server))
        answers.append(answer)
        if len(answers) == 2:
            started.set()
        # Both answers are open at once before either is read: two connections are in use.
        await started.wait()
        bodies.append(await answer.aread())
        await answer.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(one)
        group.start_soon(one)
    return bodies[0], bodies[1]


# ---------------------------------------------------------------------- NO_PROXY


LABEL = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8)
HOST = st.lists(LABEL, min_size=1, max_size=4).map(".".join)


@given(host=HOST, parents=st.integers(min_value=0, max_value=3), dot=st.booleans())
def test_no_proxy_covers_a_host_and_the_domains_above_it(host: str, parents: int, dot: bool) -> None:
    labels = host.split(".")
    domain = ".".join(labels[min(parents, len(labels) - 1) :])
    assert _not_proxied(host, ("." if dot else "") + domain)
    assert _not_proxied(host, f"other.invalid, {domain.upper()} ,")
    assert _not_proxied(host, "*")


@given(host=HOST, other=HOST)
def test_no_proxy_does_not_cover_a_host_that_only_ends_with_the_same_letters(host: str, other: str) -> None:
    # "ample.org" must not cover "example.org": only whole labels count.
    candidate = "x" + host
    assert not _not_proxied(candidate, host) or candidate.endswith("." + host)
    if not (other == host or host.endswith("." + other)):
        assert not _not_proxied(host, other)


@given(address=st.ip_addresses(v=4), prefix=st.integers(min_value=8, max_value=32))
def test_no_proxy_covers_addresses_inside_a_network(address: ipaddress.IPv4Address, prefix: int) -> None:
    network = ipaddress.IPv4Network(f"{address}/{prefix}", strict=False)
    assert _not_proxied(str(address), str(network))
    if int(network.broadcast_address) < 2**32 - 1:
        assert not _not_proxied(str(network.broadcast_address + 1), str(network))
