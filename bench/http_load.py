"""Benchmark: many concurrent MCP sessions calling read tools over Streamable HTTP; errors, latency and server memory.

Run with `python -m bench.http_load` (options: --sessions, --calls, --bound-mib). The sandbox
and the server each run in their own child process (`python -m sandbox --api-only` and
`python -m entrypoints --transport http`, shared-secret mode), so the server's RSS is its
own. Half the sessions speak 2025-11-25 (stateful, SSE), half 2026-07-28 (sessionless).

The verdict: zero errors, and the server's RSS after the run at most `--bound-mib` above its
RSS after warm-up. Prints a summary and writes `bench/out/http_load.json`.
"""

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import re
import secrets
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

OUT = Path(__file__).resolve().parent / "out" / "http_load.json"
READ_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_current_user", {}),
    ("list_repositories", {}),
    ("get_repository", {"repo_id": 1}),
    ("list_pipelines", {"repo_id": 1}),
]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        found = re.search(r"VmRSS:\s+(\d+)", status.read())
    return int(found.group(1)) if found else 0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Until something accepts connections on the port (for a server without a health route)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start listening in time")


def wait_for_health(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as probe:
                probe.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if probe.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("the server did not become live in time")


@asynccontextmanager
async def session(url: str, bearer: str, mode: str) -> AsyncIterator[Client]:
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"}) as http_client:
        async with Client(streamable_http_client(url, http_client=http_client), mode=mode) as client:
            yield client


async def drive(
    url: str,
    bearer: str,
    sessions: int,
    calls: int,
    pid: int,
    plan: Sequence[tuple[str, dict[str, Any]]] = READ_CALLS,
    *,
    driver: str = "sdk",
) -> dict[str, Any]:
    """`sessions` concurrent sessions of `calls` calls each, cycling through `plan` (tool name, arguments).

    `driver` (one of DRIVERS): "sdk", each session is the SDK's `Client`; "httpx", a `RawSession`
    (the same requests, no client library) over one httpx client; "wire", a `RawSession` over one
    keep-alive HTTP/1.1 connection written and read by `WireConnection`."""
    latencies: list[float] = []
    errors: list[str] = []
    samples: list[tuple[float, int]] = []
    done = anyio.Event()

    async def one(index: int) -> None:
        legacy = bool(index % 2)
        opened = (
            session(url, bearer, "legacy" if legacy else MODERN)
            if driver == "sdk"
            else raw_session(url, bearer, LEGACY if legacy else MODERN, driver)
        )
        try:
            async with opened as client:
                for i in range(calls):
                    name, args = plan[(index + i) % len(plan)]
                    started = time.perf_counter()
                    failed, content = await _call(client, name, args)
                    latencies.append(time.perf_counter() - started)
                    if failed:
                        errors.append(f"{name}: {content}")
        except Exception as e:  # a broken session is an error of the run, not of the benchmark
            errors.append(f"session {index}: {type(e).__name__}: {e}")

    async def sample() -> None:
        start = time.perf_counter()
        while not done.is_set():
            samples.append((round(time.perf_counter() - start, 2), rss_kib(pid)))
            with anyio.move_on_after(0.5):
                await done.wait()

    started = time.perf_counter()
    async with anyio.create_task_group() as outer:
        outer.start_soon(sample)
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(one, index)
        done.set()
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "calls": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:5],
        "seconds": round(elapsed, 2),
        "calls_per_second": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(statistics.median(ordered) * 1000, 2) if ordered else None,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2)
        if ordered
        else None,
        "rss_samples_kib": samples,
        "latencies_s": latencies,
    }


# The ways a session can be driven (`drive(driver=...)`, `python -m bench --http-driver`).
DRIVERS = ("wire", "httpx", "sdk")
# What the raw driver sends as the SDK's client does: the same methods, headers and `_meta`.
CLIENT_INFO = {"name": "woodpecker-ci-mcp-bench", "version": "0"}
LEGACY, MODERN = "2025-11-25", "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}


class RawSession:
    """One MCP session as raw JSON-RPC POSTs over one keep-alive connection.

    It sends what the SDK's `Client` sends for a read (a 2025-11-25 session: `initialize`, then
    `notifications/initialized`, then calls with the session id; a 2026-07-28 one:
    `server/discover`, then calls with the `_meta` envelope and the `Mcp-Method`/`Mcp-Name`
    headers), and reads either answer a server may give, one JSON body or an SSE stream whose
    event carries the answer. What it skips is the client library's own work per call (its
    task groups, memory streams and pydantic models), so that a load generator on the same
    cores as the servers costs each server less than it costs to answer.
    """

    def __init__(self, poster: "Poster", mode: str) -> None:
        self.poster = poster
        self.mode = mode
        self.next_id = 0
        self.headers: dict[str, str] = {}

    async def start(self) -> None:
        if self.mode == MODERN:
            await self.request("server/discover", {"_meta": MODERN_META})
            return
        params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
        status, head, body = await self.poster.post(
            self._message("initialize", params), self._head("initialize")
        )
        session = head.get("mcp-session-id")
        self._result(status, head, body)
        self.headers = {"mcp-protocol-version": LEGACY, **({"mcp-session-id": session} if session else {})}
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, _ = await self.poster.post(notified, self._head(None))
        if status >= 400:
            raise RuntimeError(f"notifications/initialized: HTTP {status}")

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if self.mode == MODERN:
            params["_meta"] = MODERN_META
        return await self.request("tools/call", params, name)

    async def request(self, method: str, params: dict[str, Any], name: str | None = None) -> dict[str, Any]:
        return self._result(*await self.poster.post(self._message(method, params), self._head(method, name)))

    def _message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}

    def _head(self, method: str | None, name: str | None = None) -> dict[str, str]:
        head = dict(self.headers)
        if self.mode == MODERN and method is not None:
            head.update({"mcp-protocol-version": MODERN, "mcp-method": method})
            if name is not None:
                head["mcp-name"] = name
        return head

    def _result(self, status: int, head: Mapping[str, str], body: bytes) -> dict[str, Any]:
        """The JSON-RPC result for this request, from a JSON body or the SSE event that carries it."""
        if status >= 400:
            raise RuntimeError(f"HTTP {status}: {body[:200]!r}")
        if not head.get("content-type", "").startswith("text/event-stream"):
            return self._checked(json.loads(body))
        data: list[str] = []
        for line in [*body.decode().splitlines(), ""]:
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                message = json.loads("\n".join(data))
                data = []
                if message.get("id") == self.next_id:
                    return self._checked(message)
        raise RuntimeError("the event stream ended without the answer")

    @staticmethod
    def _checked(message: dict[str, Any]) -> dict[str, Any]:
        if "error" in message:
            raise RuntimeError(f"JSON-RPC error: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result


class Poster(Protocol):
    """POSTs a JSON-RPC message to the MCP endpoint: (status, lower-cased headers, whole body)."""

    async def post(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]: ...


class HttpxPoster:
    """Each POST through one keep-alive httpx client (the fourth pass's raw driver)."""

    def __init__(self, client: Any, url: str) -> None:
        self.client, self.url = client, url

    async def post(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        answer = await self.client.post(self.url, json=message, headers=dict(headers))
        return answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.content


class WireConnection:
    """Each POST written and read by hand on one keep-alive HTTP/1.1 connection (asyncio streams).

    A load generator, not a client library: it writes one request head and body, then reads the
    status line, the headers and a body framed by Content-Length or chunked encoding (an answer
    without either is read to the end and the next POST reconnects). Its CPU per call is a small
    fraction of httpx's, so on a machine whose cores the servers share, the rate measures the
    servers.
    """

    def __init__(self, url: str, bearer: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.fixed = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {bearer}\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Type: application/json\r\n"
        )
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        with anyio.fail_after(120):
            return await self._exchange(message, headers)

    async def _exchange(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        body = json.dumps(message, separators=(",", ":")).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write(f"{self.fixed}{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        fields = {}
        for line in head[1:]:
            if line:
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
        if "content-length" in fields:
            content = await reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            content = await self._chunks(reader)
        else:
            content = await reader.read()
            fields["connection"] = "close"
        if fields.get("connection", "").lower() == "close":
            await self.aclose()
        return status, fields, content

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> bytes:
        pieces: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailer fields
                return b"".join(pieces)
            pieces.append((await reader.readexactly(size + 2))[:-2])

    async def aclose(self) -> None:
        if self.streams is not None:
            writer = self.streams[1]
            self.streams = None
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _call(client: Any, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Call a tool through either kind of session: (whether it failed, its structured content)."""
    if isinstance(client, RawSession):
        answer = await client.call_tool(name, arguments)
        return bool(answer.get("isError")), answer.get("structuredContent")
    result = await client.call_tool(name, arguments)
    return bool(result.is_error), result.structured_content


@asynccontextmanager
async def raw_session(url: str, bearer: str, mode: str, driver: str = "wire") -> AsyncIterator[RawSession]:
    if driver == "wire":
        wire = WireConnection(url, bearer)
        try:
            raw = RawSession(wire, mode)
            await raw.start()
            yield raw
        finally:
            await wire.aclose()
        return
    import httpx

    async with httpx.AsyncClient(
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
        },
        trust_env=False,
        timeout=120,
    ) as client:
        raw = RawSession(HttpxPoster(client, url), mode)
        await raw.start()
        yield raw


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_load", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--calls", type=int, default=500, help="calls per session")
    parser.add_argument("--warmup", type=int, default=50, help="calls per session before measuring memory")
    parser.add_argument("--bound-mib", type=float, default=32.0, help="allowed RSS growth after warm-up")
    parser.add_argument(
        "--driver", choices=DRIVERS, default="sdk", help="how each session is driven (see drive())"
    )
    args = parser.parse_args()

    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    sandbox = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--api-only", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=base_env,
    )
    server: subprocess.Popen[bytes] | None = None
    try:
        assert sandbox.stdout is not None
        info = json.loads(sandbox.stdout.readline())
        bearer = secrets.token_urlsafe(32)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "entrypoints", "--transport", "http", "--port", str(port)],
            env={
                **base_env,
                "WOODPECKER_URL": info["url"],
                "WOODPECKER_TOKEN": info["tokens"][info["admin_login"]],
                "WOODPECKER_MCP_BEARER": bearer,
                "WOODPECKER_MCP_AUDIT_FILE": os.devnull,
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_health(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        rss_start = rss_kib(server.pid)
        warmup = anyio.run(
            functools.partial(drive, driver=args.driver), url, bearer, args.sessions, args.warmup, server.pid
        )
        rss_warm = rss_kib(server.pid)
        cpu_before = {
            "server": cpu_seconds(server.pid),
            "sandbox": cpu_seconds(sandbox.pid),
            "client": time.process_time(),
        }
        run = anyio.run(
            functools.partial(drive, driver=args.driver), url, bearer, args.sessions, args.calls, server.pid
        )
        rss_end = rss_kib(server.pid)
        cpu_after = {
            "server": cpu_seconds(server.pid),
            "sandbox": cpu_seconds(sandbox.pid),
            "client": time.process_time(),
        }
    finally:
        for process in (server, sandbox):
            if process is not None:
                process.terminate()
                process.wait(timeout=10)

    growth_mib = (rss_end - rss_warm) / 1024
    flat = growth_mib <= args.bound_mib
    result = {
        "benchmark": "http_load",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "sessions": args.sessions,
        "calls_per_session": args.calls,
        "tools": [name for name, _ in READ_CALLS],
        "warmup_errors": warmup["errors"],
        **{k: v for k, v in run.items() if k not in ("rss_samples_kib", "latencies_s")},
        "server_rss_kib": {"start": rss_start, "after_warmup": rss_warm, "end": rss_end},
        "rss_growth_mib": round(growth_mib, 2),
        # Where the time went: a side near run["seconds"] of CPU is the bottleneck.
        "cpu_seconds": {k: round(cpu_after[k] - cpu_before[k], 2) for k in cpu_before},
        "rss_bound_mib": args.bound_mib,
        "rss_samples_kib": run["rss_samples_kib"],
        "verdict": "pass" if flat and run["errors"] == 0 and warmup["errors"] == 0 else "fail",
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{run['calls']} calls from {args.sessions} sessions in {run['seconds']} s: "
        f"{run['calls_per_second']} calls/s, p50 {run['p50_ms']} ms, p99 {run['p99_ms']} ms, "
        f"errors {run['errors']}"
    )
    print(
        f"server RSS: start {rss_start // 1024} MiB, after warm-up {rss_warm // 1024} MiB, "
        f"end {rss_end // 1024} MiB (growth {growth_mib:.1f} MiB, bound {args.bound_mib:g} MiB): {result['verdict']}"
    )
    print("CPU seconds during the run: " + ", ".join(f"{k} {v}" for k, v in result["cpu_seconds"].items()))
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT.name}")
    return 0 if result["verdict"] == "pass" else 1


if __name__ == "__main__":
    raise SystemExit(main())
