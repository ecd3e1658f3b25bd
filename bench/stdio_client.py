"""A minimal JSON-RPC client over a stdio MCP server's pipes: every read bounded by a deadline, and the server's pid at hand for its memory.

The benchmarks drive the server with raw JSON lines rather than the SDK's `Client` so that
the figures are the server's own work plus the pipe, not the client library's validation,
and so that the benchmark owns the child process (its pid, its VmHWM, its exit).
"""

import json
import os
import re
import selectors
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
CLIENT_INFO = {"name": "woodpecker-ci-mcp-bench", "version": "0"}
ACCEPT = {"action": "accept", "content": {"confirm": True}}


class ServerFailed(RuntimeError):
    """The server exited, answered with a JSON-RPC error, or did not answer in time."""


def proc_status_kib(pid: int, field: str) -> int:
    """A `/proc/<pid>/status` figure in KiB (VmRSS, VmHWM), 0 where there is no /proc."""
    try:
        with open(f"/proc/{pid}/status") as status:
            found = re.search(rf"^{field}:\s+(\d+)", status.read(), re.MULTILINE)
    except OSError:
        return 0
    return int(found.group(1)) if found else 0


def proc_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a live process has used so far (0.0 where there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # Fields after the parenthesised name; utime and stime are the 12th and 13th of them.
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class StdioServer:
    """One spawned stdio MCP server. Use as a context manager; `close()` ends it (EOF, then terminate)."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | None = None,
        timeout: float = 120.0,
        started: float | None = None,
    ) -> None:
        self.timeout = timeout
        # The server's stderr goes to a file: a pipe nobody reads would block it, and the
        # file's tail explains a failure.
        self._stderr = tempfile.TemporaryFile()
        self.started = time.perf_counter() if started is None else started
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env),
            cwd=cwd,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out, selectors.EVENT_READ)
        self._buffer = bytearray()
        self._next_id = 0
        self.protocol = LEGACY
        self.capabilities: dict[str, Any] = {}
        self.last_response_bytes = 0

    @property
    def pid(self) -> int:
        return self.process.pid

    def peak_rss_kib(self) -> int:
        return proc_status_kib(self.pid, "VmHWM")

    def rss_kib(self) -> int:
        return proc_status_kib(self.pid, "VmRSS")

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid)

    # ------------------------------------------------------------------ wire

    def _send(self, message: Mapping[str, Any]) -> None:
        self._in.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._in.flush()

    def _read_line(self, deadline: float) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise ServerFailed(f"no answer within {self.timeout:g} s{self._stderr_tail()}")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise ServerFailed(f"the server closed its output{self._stderr_tail()}")
            self._buffer += chunk

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-1500:].decode("utf-8", "replace").strip()
        return f"; its stderr ends with:\n{tail}" if tail else ""

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its `result`, answering any elicitation the server pushes meanwhile with yes."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        body = dict(params or {})
        if self.protocol == MODERN:
            meta = dict(body.get("_meta") or {})
            meta.update(
                {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                }
            )
            body["_meta"] = meta
        if body:
            message["params"] = body
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._read_line(deadline)
            answer = json.loads(line)
            if "method" in answer:
                if "id" in answer:  # a request from the server: only elicitation is expected
                    reply = ACCEPT if answer["method"] == "elicitation/create" else {}
                    self._send({"jsonrpc": "2.0", "id": answer["id"], "result": reply})
                continue  # a notification
            if answer.get("id") != ident:
                continue
            if "error" in answer:
                raise ServerFailed(f"{method} answered with an error: {answer['error']}")
            self.last_response_bytes = len(line)
            result: dict[str, Any] = answer["result"]
            return result

    # ------------------------------------------------------------------ MCP

    def initialize(self, *, protocol: str = LEGACY, elicitation: bool = False) -> dict[str, Any]:
        """The 2025-11-25 handshake, or for 2026-07-28 `server/discover` (capabilities then ride on every request)."""
        self.capabilities = {"elicitation": {"form": {}}} if elicitation else {}
        if protocol == MODERN:
            self.protocol = MODERN
            return self.request("server/discover")
        result = self.request(
            "initialize",
            {"protocolVersion": protocol, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO},
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.request("tools/list")["tools"]
        return tools

    def call(self, name: str, arguments: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": dict(arguments), **extra})
        if result.get("isError"):
            raise ServerFailed(f"{name} failed: {result.get('structuredContent') or result.get('content')}")
        return result

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._in.close()
                self.process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.terminate()
                try:
                    self.process.wait(5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def stderr_text(self) -> str:
        """Everything the server wrote to stderr so far."""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
        self._selector.close()
        self._stderr.close()
