"""MCP over stdin/stdout read and written on the event loop, no worker threads (ADR 0038).

The SDK's `stdio_server` reads a line and writes an answer through anyio's worker threads:
three thread hand-offs per call. `stdio_streams` hands the same SDK function two objects of
ours instead of its thread-backed files: `PipeLines` (the lines of stdin) and `PipeWriter`
(writes to stdout). Both wait for the pipe on the event loop (`add_reader`, `add_writer`)
and do the reading and writing with `os.read` and `os.write` on non-blocking descriptors.
The SDK still does everything else: the JSON-RPC parsing of each line, what an invalid line
becomes, the memory streams, the end of the session at EOF.

What stays as the SDK does it:
- lines are decoded as its text wrapper decodes them (UTF-8 with replacement characters,
  universal newlines, the last line without its newline still delivered at EOF);
- stdin and stdout are claimed: while serving, fd 0 reads the null device and fd 1 writes to
  stderr, so a child process or a stray `print` never reaches the wire; both come back after;
- back-pressure: an answer is written whole before the next is taken, and a line is read
  only when the session asks for one.

Where stdin or stdout is not a pipe or a socket (a regular file, a terminal, the null
device), where stdout and stderr are one pipe, or where the loop cannot watch descriptors
(Windows' proactor loop, another async library), `stdio_streams` is the SDK's own transport,
except that lines typed on a terminal are read on the loop (`TerminalLines`), so that Ctrl-C
stops a server run by hand at once.
"""

from __future__ import annotations

import asyncio
import codecs
import io
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, cast

from mcp.server.stdio import stdio_server

# One read takes what the pipe holds, up to this (a Linux pipe holds 64 KiB by default).
CHUNK = 1 << 16

__all__ = ["CHUNK", "PipeLines", "PipeWriter", "TerminalLines", "on_a_terminal", "stdio_streams", "watchable"]


async def _ready(fd: int, watch: Callable[..., None], unwatch: Callable[[int], object]) -> None:
    """Wait until the loop says fd is ready; on cancellation stop watching it."""
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not waiter.done():
            waiter.set_result(None)

    watch(fd, wake)
    try:
        await waiter
    finally:
        unwatch(fd)


class PipeLines:
    """The lines of a non-blocking descriptor, decoded as the SDK's text wrapper decodes them."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._decoder = io.IncrementalNewlineDecoder(decoder, translate=True)
        self._lines: deque[str] = deque()
        self._partial: list[str] = []
        self._eof = False

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._eof:
                raise StopAsyncIteration
            await self._fill()
        return self._lines.popleft()

    async def _fill(self) -> None:
        try:
            data = os.read(self._fd, CHUNK)
        except BlockingIOError:
            await _ready(self._fd, self._loop.add_reader, self._loop.remove_reader)
            return
        self._take(data)

    def _take(self, data: bytes) -> None:
        self._eof = not data
        text = self._decoder.decode(data, final=self._eof)
        *complete, rest = text.split("\n")
        if complete:
            complete[0] = "".join((*self._partial, complete[0]))
            self._partial.clear()
            self._lines.extend(line + "\n" for line in complete)
        if rest:
            self._partial.append(rest)
        if self._eof and self._partial:
            self._lines.append("".join(self._partial))
            self._partial.clear()


class TerminalLines(PipeLines):
    """The lines typed on a terminal. Its descriptor is shared with the shell, so it stays blocking
    (never claimed): each read waits on the loop until the terminal holds input, and a cancellation
    (Ctrl-C, SIGTERM) only stops the wait. The SDK's reader would sit in a worker thread's read,
    which nothing cancels: the server would not stop until a line was typed."""

    async def _fill(self) -> None:
        await _ready(self._fd, self._loop.add_reader, self._loop.remove_reader)
        try:
            data = os.read(self._fd, CHUNK)
        except BlockingIOError:  # another reader of the terminal took the input first
            return
        except OSError:  # EIO: the terminal hung up, as its window closed
            data = b""
        self._take(data)


class PipeWriter:
    """Writes text to a non-blocking descriptor, each write whole before it returns."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await _ready(self._fd, self._loop.add_writer, self._loop.remove_writer)
                continue
            data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: `write` returns once the pipe holds every byte."""


def _pipe_like(fd: int) -> os.stat_result | None:
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return status if stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode) else None


def watchable() -> bool:
    """Whether stdin and stdout can be served on this loop, without threads."""
    if sys.platform == "win32":  # pragma: no cover - the proactor loop watches no descriptors
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another async library runs this task
        return False
    stdin, stdout = _pipe_like(0), _pipe_like(1)
    if stdin is None or stdout is None:
        return False
    try:
        stderr = os.fstat(2)
    except OSError:
        stderr = None
    if stderr is not None and (stderr.st_dev, stderr.st_ino) == (stdout.st_dev, stdout.st_ino):
        return False  # making stdout non-blocking would make stderr non-blocking too
    try:
        loop.add_reader(0, lambda: None)
    except (NotImplementedError, OSError, ValueError):
        return False
    loop.remove_reader(0)
    return True


@contextmanager
def _claimed(fd: int, diversion: Callable[[], int]) -> Any:
    """Serve fd from a private non-blocking duplicate while fd points at `diversion`."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    was_blocking = os.get_blocking(private)
    try:
        aside = diversion()
        try:
            os.dup2(aside, fd)
        finally:
            os.close(aside)
        try:
            os.set_blocking(private, False)
            yield private
        finally:
            os.set_blocking(private, was_blocking)
            os.dup2(private, fd)
    finally:
        os.close(private)


@asynccontextmanager
async def _on_the_loop() -> AsyncIterator[Any]:
    with (
        _claimed(0, lambda: os.open(os.devnull, os.O_RDONLY)) as stdin,
        _claimed(1, lambda: os.dup(2)) as stdout,
    ):
        # The SDK types these as anyio's thread-backed files; it uses `async for line`,
        # `write` and `flush`, which these provide.
        lines = cast(Any, PipeLines(stdin))
        writer = cast(Any, PipeWriter(stdout))
        async with stdio_server(lines, writer) as streams:
            yield streams


def on_a_terminal() -> bool:
    """Whether stdin is a terminal this loop can watch (a person runs the server by hand)."""
    if sys.platform == "win32":  # pragma: no cover - the proactor loop watches no descriptors
        return False
    try:
        loop = asyncio.get_running_loop()
        if not os.isatty(0):
            return False
        loop.add_reader(0, lambda: None)
    except (RuntimeError, NotImplementedError, OSError, ValueError):
        return False
    loop.remove_reader(0)
    return True


@asynccontextmanager
async def _from_the_terminal() -> AsyncIterator[Any]:
    # Only the reading is ours; answers go out through the SDK's own writer.
    async with stdio_server(cast(Any, TerminalLines(0))) as streams:
        yield streams


def stdio_streams() -> AbstractAsyncContextManager[Any]:
    """The session's (read, write) streams over stdin/stdout: on the loop where it can (stdin from
    a terminal read on the loop too), else the SDK's."""
    if watchable():
        return _on_the_loop()
    return _from_the_terminal() if on_a_terminal() else stdio_server()
