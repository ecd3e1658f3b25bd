"""The HTTP server's limits on connections (docs/http.md, "Limits"; docs/adr/0110), on a real socket.

A head sent one line at a time is cut off at its deadline while a real client is served; a
connection that says nothing is closed; past the cap a connection is answered 503 at once, and
the server serves again as soon as room is made. Before the head deadline, each slow connection
stayed open for as long as its sender liked, and 1,030 of them starved every real client.
"""

import anyio
import pytest
from anyio.abc import SocketStream

from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HEAD_SECONDS = 1
# How long a test waits for what the deadline must bring about: far beyond the deadline, so a
# loaded machine cannot fail it, and bounded, so a server without the deadline fails it.
PATIENCE = 20


def limited_env(sandbox: Sandbox, **extra: str) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS": str(HEAD_SECONDS),
        **extra,
    }


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


async def read_to_the_end(stream: SocketStream) -> bytes:
    answer = b""
    try:
        while True:
            answer += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
        return answer


async def until_served(url: str) -> None:
    """Return once a new connection is served again (the server has seen the closed ones go)."""
    while True:
        async with await anyio.connect_tcp(*address(url)) as stream:
            await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if (await read_to_the_end(stream)).startswith(b"HTTP/1.1 200"):
                return
        await anyio.sleep(0.01)  # how soon room is seen, not how long it may take


async def trickle_a_head(url: str, ended: list[bytes]) -> None:
    """Send a request line, then one header line every 0.3 s for as long as the server listens."""
    async with await anyio.connect_tcp(*address(url)) as stream:
        await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        async with anyio.create_task_group() as group:
            answer: list[bytes] = []

            async def read() -> None:
                answer.append(await read_to_the_end(stream))
                group.cancel_scope.cancel()

            group.start_soon(read)
            for number in range(1000):
                await anyio.sleep(0.3)
                try:
                    await stream.send(f"X-Slow-{number}: {number}\r\n".encode())
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    break
        ended.append(answer[0] if answer else b"")


async def test_heads_sent_line_by_line_are_cut_off_at_the_deadline_while_a_real_client_is_served(
    sandbox: Sandbox,
) -> None:
    ended: list[bytes] = []
    async with team_server(limited_env(sandbox)) as url:
        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(trickle_a_head, url, ended)
                async with mcp_client(url, sandbox.admin_token) as client:
                    me = await client.call_tool("get_current_user", {})
    assert not me.is_error, me.content
    assert me.structured_content is not None
    assert me.structured_content["user"]["login"] == sandbox.admin_login
    assert len(ended) == 20
    # Each was told why, since part of its head had arrived.
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in ended), ended[:3]
    assert all(b'"request_timeout"' in answer for answer in ended)


async def test_a_connection_that_sends_nothing_is_closed_at_the_deadline(sandbox: Sandbox) -> None:
    async with team_server(limited_env(sandbox)) as url:
        with anyio.fail_after(PATIENCE):
            async with await anyio.connect_tcp(*address(url)) as stream:
                answer = await read_to_the_end(stream)
    # Idle, not slow: closed without an answer, as an idle kept-alive connection is.
    assert answer == b""


async def test_a_later_head_on_a_kept_alive_connection_has_its_own_deadline(sandbox: Sandbox) -> None:
    async with team_server(limited_env(sandbox)) as url:
        with anyio.fail_after(PATIENCE):
            async with await anyio.connect_tcp(*address(url)) as stream:
                await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                first = await stream.receive()
                # The first byte of the next head cancels the keep-alive timer; the head deadline
                # is what ends this one.
                await stream.send(b"GET /healthz HTTP/1.1\r\n")
                rest = await read_to_the_end(stream)
    assert first.startswith(b"HTTP/1.1 200"), first
    assert rest.startswith(b"HTTP/1.1 408"), rest


async def test_past_the_cap_a_connection_is_refused_at_once_and_room_serves_again(sandbox: Sandbox) -> None:
    async with team_server(limited_env(sandbox, WOODPECKER_MCP_MAX_CONNECTIONS="4")) as url:
        with anyio.fail_after(PATIENCE):
            held = [await anyio.connect_tcp(*address(url)) for _ in range(4)]
            # Each held connection is accepted before the next is opened: the server has seen it.
            await held[-1].send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await held[-1].receive()).startswith(b"HTTP/1.1 200")
            async with await anyio.connect_tcp(*address(url)) as excess:
                refused = await read_to_the_end(excess)
            for stream in held:
                await stream.aclose()
            await until_served(url)
            async with mcp_client(url, sandbox.admin_token) as client:
                me = await client.call_tool("get_current_user", {})
    assert refused.startswith(b"HTTP/1.1 503"), refused
    assert b'"too_many_connections"' in refused
    assert not me.is_error, me.content


async def test_a_head_larger_than_64_kib_is_refused_with_400(sandbox: Sandbox) -> None:
    async with team_server(limited_env(sandbox)) as url:
        with anyio.fail_after(PATIENCE):
            async with await anyio.connect_tcp(*address(url)) as stream:
                await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (65 * 1024))
                answer = await read_to_the_end(stream)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:80]


async def test_a_kept_alive_connection_that_stays_silent_is_closed(sandbox: Sandbox) -> None:
    # uvicorn's keep-alive timer (15 s, entrypoints/http_app.py) bounds the silence after an answer.
    async with team_server(limited_env(sandbox, WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS="60")) as url:
        with anyio.fail_after(PATIENCE + 30):
            async with await anyio.connect_tcp(*address(url)) as stream:
                await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                first = await stream.receive()
                rest = await read_to_the_end(stream)
    assert first.startswith(b"HTTP/1.1 200"), first
    assert rest == b""
