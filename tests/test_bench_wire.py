"""The benchmark's hand-written HTTP driver reads every framing a Streamable HTTP server may answer with.

`bench.http_load.WireConnection` writes each POST on a keep-alive socket and reads the answer
itself (so that the load generator costs the shared cores little). Here a scripted server on
loopback answers a 2025-11-25 session in each framing: an SSE stream in chunks with a
notification before the answer, an empty 202, a JSON body with Content-Length, a body ended by
closing the connection (the next POST must reconnect), and a JSON-RPC error.
"""

import asyncio
import json
from typing import Any

import anyio

from bench.http_load import LEGACY, raw_session

SESSION = "session-7"


def _sse_chunked(*messages: dict[str, Any]) -> bytes:
    events = b"".join(b"event: message\r\ndata: " + json.dumps(m).encode() + b"\r\n\r\n" for m in messages)
    # Two chunks, the first with an extension, then the last chunk and an empty trailer.
    half = len(events) // 2
    return b"%x;ext=1\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (
        half,
        events[:half],
        len(events) - half,
        events[half:],
    )


def _answers(request_id: int) -> bytes:
    """The scripted answer to the request with this JSON-RPC id (0: the notification)."""
    if request_id == 1:
        body = _sse_chunked(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": LEGACY}},
        )
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            b"mcp-session-id: " + SESSION.encode() + b"\r\n\r\n" + body
        )
    if request_id == 0:
        return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
    result = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"n": request_id}}).encode()
    if request_id == 3:  # no length: the body ends when the server closes the connection
        return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + result
    if request_id == 5:
        error = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "unknown tool"}}
        result = json.dumps(error).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(result),
        result,
    )


async def test_the_wire_driver_reads_sse_chunks_empty_bodies_lengths_and_closed_connections() -> None:
    seen: list[tuple[int, dict[str, str], dict[str, Any]]] = []  # (connection, headers, message)
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        this = connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                assert lines[0] == "POST /mcp HTTP/1.1"
                fields = {
                    k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                message = json.loads(await reader.readexactly(int(fields["content-length"])))
                seen.append((this, fields, message))
                writer.write(_answers(message.get("id", 0)))
                await writer.drain()
                if message.get("id") == 3:
                    break
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with anyio.fail_after(30):
            async with raw_session(f"http://127.0.0.1:{port}/mcp", "bench-bearer", LEGACY, "wire") as session:
                assert await session.call_tool("get_repository", {"repo_id": 1}) == {"n": 2}
                assert await session.call_tool("get_repository", {"repo_id": 2}) == {"n": 3}
                assert await session.call_tool("get_repository", {"repo_id": 3}) == {"n": 4}
                try:
                    await session.call_tool("nothing", {})
                except RuntimeError as e:
                    assert "unknown tool" in str(e)
                else:
                    raise AssertionError("a JSON-RPC error must raise")
    finally:
        server.close()
        await server.wait_closed()

    methods = [(connection, message.get("method"), message.get("id")) for connection, _, message in seen]
    assert methods == [
        (1, "initialize", 1),
        (1, "notifications/initialized", None),
        (1, "tools/call", 2),
        (1, "tools/call", 3),
        (2, "tools/call", 4),  # a new connection after the server closed the last one
        (2, "tools/call", 5),
    ]
    for _, fields, message in seen:
        assert fields["authorization"] == "Bearer bench-bearer"
        assert fields["accept"] == "application/json, text/event-stream"
        if message.get("method") != "initialize":
            assert fields["mcp-session-id"] == SESSION and fields["mcp-protocol-version"] == LEGACY
    assert seen[2][2]["params"] == {"name": "get_repository", "arguments": {"repo_id": 1}}
