"""stdio on the event loop (adapters/stdio_pipes.py, ADR 0038), over real pipes: in this process for the
property (both transports over os.pipe), in real processes where fds 0 and 1 are claimed.

Each test spawns a small echo server: it serves the session's streams from `stdio_streams()`
(or, as the oracle, the SDK's own `stdio_server()`), sends back every message it reads, and
answers every line the SDK could not parse with an `invalid` notification. The loop transport
must put on the wire, byte for byte, what the SDK's transport puts there, for any sequence of
lines: valid messages of any size, invalid JSON, bad UTF-8, blank lines, CR and CRLF endings,
and a last line cut off by EOF.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.adapters._echo import echo

ROOT = Path(__file__).resolve().parents[2]

ECHO = textwrap.dedent(
    """
    import os, sys, threading
    import anyio
    from mcp.server.stdio import stdio_server
    from adapters.stdio_pipes import stdio_streams, watchable
    from tests.adapters._echo import echo

    async def main():
        on_loop = watchable()
        transport = stdio_streams if sys.argv[1] == "loop" else stdio_server
        async with transport() as (read, write):
            print("stray print", flush=True)  # must not reach the wire
            os.write(1, b"stray fd write\\n")
            sys.stderr.write(f"on_loop={on_loop} threads={threading.active_count()}\\n")
            await echo(read, write)
        # After the session: the wire is fd 1 again, and both descriptors block as before.
        os.write(1, f"after blocking={os.get_blocking(0)},{os.get_blocking(1)}\\n".encode())

    anyio.run(main)
    """
)


def serve(transport: str, data: bytes) -> tuple[bytes, str]:
    """Run the echo server on `transport` with `data` on its stdin; its stdout and stderr."""
    done = subprocess.run(
        [sys.executable, "-c", ECHO, transport],
        input=data,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout, done.stderr.decode(errors="replace")


def request(ident: int, payload: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "echo", "params": {"p": payload}}).encode()


def test_the_loop_transport_runs_without_threads_and_keeps_stray_output_off_the_wire() -> None:
    line = request(1, "hello")
    out, err = serve("loop", line + b"\n")
    assert "on_loop=True threads=1" in err
    assert "stray print" in err and "stray fd write" in err
    assert out.splitlines() == [line.replace(b", ", b",").replace(b": ", b":"), b"after blocking=True,True"]


# One line on stdin: a request (its payload from empty to 1 MiB, past any pipe's buffer),
# JSON that is no JSON-RPC message, no JSON at all, bytes that are not UTF-8, or nothing.
_PAYLOAD = st.one_of(
    st.text(max_size=40), st.integers(0, 1 << 20).map(lambda n: "x" * n), st.just("é\u2028\U0001f600")
)
_LINE = st.one_of(
    st.builds(request, st.integers(0, 1000), _PAYLOAD),
    st.just(b'{"jsonrpc": "2.0"}'),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.just(b'{"jsonrpc":"2.0","method":"n\xff\xfe"}'),
    st.just(b""),
)
_END = st.sampled_from([b"\n", b"\r\n", b"\r"])


async def _served_in_process(transport: str, data: bytes) -> bytes:
    """The bytes `transport` writes for `data` on stdin, over two os.pipe()s in this process.

    "sdk" is the oracle: the SDK's stdio_server over the same UTF-8 text wrappers it puts on
    the process's own stdin and stdout; "loop" is ours, PipeLines and PipeWriter.
    """
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    from adapters.stdio_pipes import PipeLines, PipeWriter

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    received = bytearray()

    def feed() -> None:
        with os.fdopen(in_write, "wb") as pipe:
            pipe.write(data)

    def drain() -> None:
        with os.fdopen(out_read, "rb") as pipe:
            received.extend(pipe.read())

    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, feed)
        group.start_soon(anyio.to_thread.run_sync, drain)
        if transport == "loop":
            os.set_blocking(in_read, False)
            os.set_blocking(out_write, False)
            streams = stdio_server(cast(Any, PipeLines(in_read)), cast(Any, PipeWriter(out_write)))
        else:
            stdin = io.TextIOWrapper(os.fdopen(in_read, "rb"), encoding="utf-8", errors="replace")
            stdout = io.TextIOWrapper(os.fdopen(out_write, "wb"), encoding="utf-8")
            streams = stdio_server(anyio.wrap_file(stdin), anyio.wrap_file(stdout))
        try:
            async with streams as (read, write):
                await echo(read, write)
        finally:
            if transport == "loop":
                os.close(in_read)
                os.close(out_write)
            else:
                stdin.close()
                stdout.close()
    return bytes(received)


@settings(max_examples=100)
@given(st.lists(st.tuples(_LINE, _END), max_size=8), st.one_of(st.just(b""), _LINE))
@example([(request(1, "x" * (4 << 20)), b"\n"), (request(2, "y"), b"\n")], b"")
@example([(request(1, "a"), b"\n")], request(2, "cut off by EOF")[:-3])
@example([(request(1, "a"), b"\n")], request(2, "whole, without its newline"))
def test_the_loop_transport_writes_what_the_sdks_transport_writes(
    lines: list[tuple[bytes, bytes]], last: bytes
) -> None:
    import anyio

    data = b"".join(line + end for line, end in lines) + last
    ours = anyio.run(_served_in_process, "loop", data)
    theirs = anyio.run(_served_in_process, "sdk", data)
    assert ours == theirs


def test_as_a_process_the_loop_transport_writes_what_the_sdks_writes() -> None:
    # The same comparison across a real process, where stdio_streams() claims fds 0 and 1: one
    # input holding every kind of line the property above draws, cut off by EOF at the end.
    kinds = [request(1, "a"), b'{"jsonrpc": "2.0"}', b"not json", b'{"jsonrpc":"2.0","method":"n\xff"}', b""]
    data = b"\r\n".join(kinds) + b"\n" + request(2, "x" * (1 << 17)) + b"\r" + request(3, "cut")[:-2]
    ours, _ = serve("loop", data)
    theirs, _ = serve("sdk", data)
    assert ours == theirs
    assert ours.endswith(b"after blocking=True,True\n") and ours.count(b"\n") == 8


@pytest.mark.parametrize("transport", ["loop", "sdk"])
def test_eof_at_once_ends_the_session_cleanly(transport: str) -> None:
    out, _ = serve(transport, b"")
    assert out == b"after blocking=True,True\n"


# In this process, over an os.pipe(): the reader and writer themselves, on the event loop.


async def _through_a_pipe(chunks: list[bytes], text: str | None = None) -> list[str]:
    """Lines `PipeLines` reads from a pipe fed `chunks` (raw), or `text` through `PipeWriter`."""
    import anyio

    from adapters.stdio_pipes import PipeLines, PipeWriter

    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    lines: list[str] = []

    async def feed() -> None:
        try:
            if text is not None:
                await PipeWriter(write_end).write(text)
            for chunk in chunks:
                os.write(write_end, chunk)  # at most a few hundred bytes: the pipe never fills
                await anyio.sleep(0)  # let the reader take what is there: lines arrive in pieces
        finally:
            os.close(write_end)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            lines.extend([line async for line in PipeLines(read_end)])
    finally:
        os.close(read_end)
    return lines


_BYTES = st.lists(
    st.one_of(st.binary(max_size=40), st.sampled_from([b"\n", b"\r", b"\r\n", b"\xc3", b"\xa9", b"{}"])),
    max_size=30,
)


@settings(max_examples=100)
@given(_BYTES)
def test_pipe_lines_are_the_lines_the_sdks_text_wrapper_reads(pieces: list[bytes]) -> None:
    """Whatever the bytes and however they are cut: the lines the SDK's UTF-8 text wrapper gives."""
    import io

    import anyio

    expected = list(io.TextIOWrapper(io.BytesIO(b"".join(pieces)), encoding="utf-8", errors="replace"))
    assert anyio.run(_through_a_pipe, pieces) == expected


def test_pipe_writer_writes_a_message_larger_than_the_pipe_whole() -> None:
    import anyio

    message = "é" * (1 << 20) + "\n"  # 2 MiB of UTF-8: the writer waits for the pipe many times
    assert anyio.run(_through_a_pipe, [], message) == [message]
