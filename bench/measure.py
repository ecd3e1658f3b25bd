"""The measurements of `python -m bench`: each returns plain JSON data, and every speed figure comes with the floor it is divided by, measured in the same run.

Floors: for a cold start, the same SDK's low-level server with no tools (and the bare
interpreter); for a tool call, the Woodpecker requests that call made, replayed by this
process with httpx (the requests are read back from the sandbox's request log, so the floor
is exactly what the server sent upstream); for a step log, downloading the same log.
"""

import functools
import json
import math
import os
import re
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from bench import http_load
from bench.peer import LOG_TOOL, READ_TOOL, Peer
from bench.stdio_client import LEGACY, MODERN, ServerFailed, StdioServer, proc_cpu_seconds

ROOT = Path(__file__).resolve().parents[1]
OURS = frozenset({"domain", "ports", "adapters", "entrypoints"})
SDK = frozenset({"mcp", "mcp_types"})
ACCEPT = {"confirm": {"action": "accept", "content": {"confirm": True}}}


# ---------------------------------------------------------------------------------- helpers


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """Median, p90, p99, min and max in milliseconds (nearest-rank percentiles)."""
    ordered = sorted(seconds)
    return {
        "n": len(ordered),
        "median_ms": ms(statistics.median(ordered)),
        "p90_ms": ms(nearest_rank(ordered, 0.90)),
        "p99_ms": ms(nearest_rank(ordered, 0.99)),
        "min_ms": ms(ordered[0]),
        "max_ms": ms(ordered[-1]),
    }


def ratio(ours: float, floor: float) -> float | None:
    return round(ours / floor, 2) if floor > 0 else None


@dataclass
class Bench:
    """What every measurement needs: how to start our server, and the running sandbox."""

    sandbox: dict[str, Any]
    server_argv: list[str]
    base_env: dict[str, str]
    audit_file: str
    log: Callable[[str], None] = print
    # The peer server, or None (then `peer_skipped` says why).
    peer: Peer | None = None
    peer_skipped: str | None = None
    # The sandbox's process, whose CPU during a load shares the cores with the servers'.
    sandbox_pid: int | None = None
    # Our server from the development environment, where `server_argv` is a clean install of
    # the checkout (`bench.clean_install`); None when `server_argv` already is that environment.
    dev_argv: list[str] | None = None
    woodpecker: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.woodpecker = httpx.Client(
            base_url=self.sandbox["url"],
            headers={"Authorization": f"Bearer {self.token}"},
            trust_env=False,
            timeout=300,
        )

    @property
    def token(self) -> str:
        token: str = self.sandbox["tokens"][self.sandbox["admin_login"]]
        return token

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **self.base_env,
            "WOODPECKER_URL": self.sandbox["url"],
            "WOODPECKER_TOKEN": self.token,
            "WOODPECKER_MCP_AUDIT_FILE": self.audit_file,
            **extra,
        }

    def stdio(self, **extra_env: str) -> StdioServer:
        return StdioServer(self.server_argv, self.env(**extra_env), cwd=str(ROOT))

    def peer_env(self, **extra: str) -> dict[str, str]:
        assert self.peer is not None
        return self.peer.env(self.base_env, self.sandbox["url"], self.token, **extra)

    def peer_stdio(self) -> StdioServer:
        assert self.peer is not None
        return StdioServer(self.peer.argv, self.peer_env(), cwd=str(ROOT))

    def sdk_stdio(self, peer: bool = False, argv: Sequence[str] | None = None) -> Any:
        """The same session through the MCP SDK's `Client` (`--stdio-client sdk`)."""
        from bench.sdk_stdio_client import SdkStdioServer

        if peer:
            assert self.peer is not None
            return SdkStdioServer(self.peer.argv, self.peer_env(), cwd=str(ROOT))
        return SdkStdioServer(argv or self.server_argv, self.env(), cwd=str(ROOT))

    def upstream(self, session: StdioServer, name: str, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The Woodpecker requests one tool call makes, as the sandbox recorded them."""
        return self.recorded(lambda: session.call(name, arguments))

    def recorded(self, action: Callable[[], object]) -> list[dict[str, Any]]:
        """The Woodpecker requests made while `action` runs, as the sandbox recorded them."""
        self.woodpecker.delete("/_sandbox/requests").raise_for_status()
        action()
        recorded: list[dict[str, Any]] = self.woodpecker.get("/_sandbox/requests").json()
        return [{"method": r["method"], "path": r["path"], "query": r["query"]} for r in recorded]

    def replay(self, requests: Sequence[Mapping[str, Any]]) -> None:
        for r in requests:
            self.woodpecker.request(r["method"], r["path"], params=r["query"]).raise_for_status()

    def reset(self) -> None:
        self.woodpecker.post("/_sandbox/reset").raise_for_status()

    def close(self) -> None:
        self.woodpecker.close()


# ---------------------------------------------------------------------------------- cold start


@dataclass
class Spawn:
    seconds: float  # spawn -> tools/list answered
    cpu_seconds: float  # the whole child, start to exit (it exits at once after the answer)
    tools: int
    answer_bytes: int


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _spawn_to_tools_list(
    bench: Bench, argv: Sequence[str] | None = None, *, environ: Mapping[str, str] | None = None, **env: str
) -> Spawn:
    """Spawn a stdio server, time it to the `tools/list` answer, and count the CPU it used (children are reaped one at a time)."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    environ = environ if environ is not None else bench.env(**env)
    server = StdioServer(argv or bench.server_argv, environ, cwd=str(ROOT), started=started)
    with server:
        server.initialize()
        tools = server.list_tools()
        seconds = time.perf_counter() - started
    return Spawn(seconds, _children_cpu() - cpu_before, len(tools), server.last_response_bytes)


def _spawn_interpreter() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def cold_start(bench: Bench, spawns: int) -> dict[str, Any]:
    """Spawn -> `tools/list` answered, ours beside the bare SDK server; interleaved so load drift hits both alike."""
    floor_argv = [sys.executable, "-m", "bench.sdk_floor_server"]
    ours: list[Spawn] = []
    floor: list[Spawn] = []
    peer: list[Spawn] = []
    interpreter: list[float] = []

    def spawn_peer() -> Spawn:
        assert bench.peer is not None
        return _spawn_to_tools_list(bench, bench.peer.argv, environ=bench.peer_env())

    # One unmeasured round first: the page cache and .pyc files warm, as for any client after the first.
    _spawn_to_tools_list(bench)
    _spawn_to_tools_list(bench, floor_argv)
    if bench.peer is not None:
        spawn_peer()
    for _ in range(spawns):
        ours.append(_spawn_to_tools_list(bench))
        floor.append(_spawn_to_tools_list(bench, floor_argv))
        if bench.peer is not None:
            peer.append(spawn_peer())
        interpreter.append(_spawn_interpreter())
    essential = _spawn_to_tools_list(bench, WOODPECKER_ALLOW_TOOLS="essential")
    read_only = _spawn_to_tools_list(bench, WOODPECKER_READ_ONLY="true")
    sizes = {
        name: {"tools": spawn.tools, "bytes": spawn.answer_bytes}
        for name, spawn in (("all", ours[-1]), ("essential", essential), ("read_only", read_only))
    }
    wall = statistics.median(s.seconds for s in ours), statistics.median(s.seconds for s in floor)
    cpu = statistics.median(s.cpu_seconds for s in ours), statistics.median(s.cpu_seconds for s in floor)
    return {
        "spawns": spawns,
        "ours": summary([s.seconds for s in ours]),
        "sdk_floor": summary([s.seconds for s in floor]),
        "interpreter": summary(interpreter),
        "ratio_to_sdk_floor": ratio(*wall),
        # On a busy machine the least-disturbed start of each is the steadier comparison.
        "ratio_of_minimums": ratio(min(s.seconds for s in ours), min(s.seconds for s in floor)),
        "added_by_this_project_ms": ms(wall[0] - wall[1]),
        "cpu_ms": {"ours_median": ms(cpu[0]), "sdk_floor_median": ms(cpu[1]), "ratio": ratio(*cpu)},
        "peer": {
            **summary([s.seconds for s in peer]),
            "cpu_median_ms": ms(statistics.median(s.cpu_seconds for s in peer)),
            "tools": peer[-1].tools,
            "answer_bytes": peer[-1].answer_bytes,
            "ratio_ours_to_peer": ratio(wall[0], statistics.median(s.seconds for s in peer)),
        }
        if peer
        else None,
        "tools_list": sizes,
        "imports": startup_imports(bench),
        "import_cpu_ms": import_cpu(),
    }


# ---------------------------------------------------------------------------------- first answer


@dataclass
class FirstAnswer:
    to_answer: float  # spawn -> the first read call answered (initialize, initialized, tools/call)
    first_call: float  # that call alone, sent after an idle pause (the session's first)
    later_call: float  # the median of the calls after it


def _first_answer(
    argv: Sequence[str], environ: Mapping[str, str], tool: str, arguments: Mapping[str, Any], idle: float
) -> tuple[float, float, float]:
    """(spawn -> first read answered with no pause, first call after `idle` s, median later call): two spawns."""
    started = time.perf_counter()
    with StdioServer(argv, environ, cwd=str(ROOT), started=started) as server:
        server.initialize()
        server.call(tool, arguments)
        to_answer = time.perf_counter() - started
    with StdioServer(argv, environ, cwd=str(ROOT)) as server:
        server.initialize()
        server.list_tools()
        # A person or a model reads the tool list before the first call.
        time.sleep(idle)
        began = time.perf_counter()
        server.call(tool, arguments)
        first = time.perf_counter() - began
        later = []
        for _ in range(9):
            began = time.perf_counter()
            server.call(tool, arguments)
            later.append(time.perf_counter() - began)
    return to_answer, first, statistics.median(later)


def first_answer(bench: Bench, rounds: int, idle: float = 0.5) -> dict[str, Any]:
    """Spawn -> the first read call answered (a gateway that starts a process per request pays this on
    every call), and the session's first call beside its later ones; ours and the peer alternating."""
    name, arguments = "get_repository", {"repo_id": 1}
    runs: dict[str, list[tuple[float, float, float]]] = {"ours": [], "ours_dev": [], "peer": []}
    servers: list[tuple[str, Sequence[str], Mapping[str, str], str]] = [
        ("ours", bench.server_argv, bench.env(), name)
    ]
    if bench.dev_argv is not None:
        # The development environment beside the clean install: what the test extras cost.
        servers.append(("ours_dev", bench.dev_argv, bench.env(), name))
    if bench.peer is not None:
        servers.append(("peer", bench.peer.argv, bench.peer_env(), READ_TOOL))
    for _who, argv, environ, tool in servers:  # one unmeasured round: page cache and .pyc files warm
        _first_answer(argv, environ, tool, arguments, 0.0)
    for _ in range(rounds):
        for who, argv, environ, tool in servers:
            runs[who].append(_first_answer(argv, environ, tool, arguments, idle))

    def figures(seen: list[tuple[float, float, float]]) -> dict[str, Any]:
        extra = [first - later for _, first, later in seen]
        return {
            "spawn_to_first_answer": summary([s[0] for s in seen]),
            "first_call": summary([s[1] for s in seen]),
            "later_call_median_ms": ms(statistics.median(s[2] for s in seen)),
            "first_call_extra_median_ms": ms(statistics.median(extra)),
        }

    result: dict[str, Any] = {
        "rounds": rounds,
        "idle_seconds": idle,
        "tool": name,
        "ours": figures(runs["ours"]),
    }
    result["ours_dev"] = figures(runs["ours_dev"]) if runs["ours_dev"] else None
    result["peer"] = None
    if runs["peer"]:
        peer = figures(runs["peer"])
        peer["ratio_spawn_to_first_answer_ours_to_peer"] = ratio(
            result["ours"]["spawn_to_first_answer"]["median_ms"], peer["spawn_to_first_answer"]["median_ms"]
        )
        if result["ours_dev"] is not None:
            result["ours_dev"]["ratio_spawn_to_first_answer_ours_to_peer"] = ratio(
                result["ours_dev"]["spawn_to_first_answer"]["median_ms"],
                peer["spawn_to_first_answer"]["median_ms"],
            )
        result["peer"] = peer
    return result


# What a stdio session imports, what the SDK alone imports, and everything the command could
# import if it did not defer the HTTP stack, Redis and the sandbox to the paths that use them.
IMPORT_SETS = {
    "mcp_sdk_alone": ("mcp.server", "mcp.server.stdio", "anyio"),
    "stdio_path": ("entrypoints.cli", "entrypoints.container"),
    "everything_eagerly": (
        "entrypoints.cli",
        "entrypoints.container",
        "entrypoints.http_app",
        "adapters.mcp_http",
        "adapters.http_auth",
        "adapters.http_health",
        "adapters.redis_token_store",
        "sandbox.server",
        "sandbox.cli",
    ),
}
_IMPORT_CPU = """
import importlib, json, sys, time
started = time.process_time()
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(time.process_time() - started))
"""


def import_cpu(runs: int = 9) -> dict[str, float | None]:
    """CPU seconds to import each set in a fresh interpreter, the least of `runs` (CPU time barely moves with load)."""
    result: dict[str, float | None] = {}
    for name, modules in IMPORT_SETS.items():
        seen = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-c", _IMPORT_CPU, *modules], capture_output=True, text=True, cwd=ROOT
            )
            if done.returncode != 0:
                break
            seen.append(float(json.loads(done.stdout)))
        result[name] = ms(min(seen)) if len(seen) == runs else None
    return result


def startup_imports(bench: Bench) -> dict[str, Any]:
    """Where a stdio start's import time goes (`-X importtime` self times of one spawn, grouped by top-level package)."""
    by_package: Counter[str] = Counter()
    with bench.stdio(PYTHONPROFILEIMPORTTIME="1") as server:
        server.initialize()
        server.list_tools()
        server.close()
        text = server.stderr_text()
    for line in text.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if found:
            by_package[found.group(2).split(".")[0]] += int(found.group(1))
    total = sum(by_package.values())
    ours = sum(v for k, v in by_package.items() if k in OURS)
    sdk = sum(v for k, v in by_package.items() if k in SDK)
    return {
        "total_ms": round(total / 1000, 1),
        "this_project_ms": round(ours / 1000, 1),
        "mcp_sdk_ms": round(sdk / 1000, 1),
        "top_packages_ms": {k: round(v / 1000, 1) for k, v in by_package.most_common(12)},
        "note": "self times under -X importtime, which adds its own overhead; compare shares, not sums",
    }


# ---------------------------------------------------------------------------------- read round trip


# The least a server on the same SDK does for the read: one GET, the body as text and data.
SDK_READ_FLOOR = [sys.executable, "-m", "bench.sdk_floor_server", "--read"]


def round_trip(
    bench: Bench, calls: int, warmup: int = 20, block: int = 10, client: str = "wire"
) -> dict[str, Any]:
    """`get_repository` over one stdio session beside its own Woodpecker GET (and the peer's `get_repo` beside its GET), alternating in blocks of `block`.

    `client`: "wire", raw JSON-RPC lines on the pipes (`StdioServer`); "sdk", the MCP SDK's own
    `Client` (`bench.sdk_stdio_client`), whose per-call cost is then in both servers' figures."""
    name, arguments = "get_repository", {"repo_id": 1}
    ours: list[float] = []
    floor: list[float] = []
    theirs: list[float] = []
    their_floor: list[float] = []
    sdk_floor: list[float] = []
    sdk = client == "sdk"
    ours_session = bench.sdk_stdio() if sdk else bench.stdio()
    peer_session = (bench.sdk_stdio(peer=True) if sdk else bench.peer_stdio()) if bench.peer else _Nothing()
    floor_session = (
        bench.sdk_stdio(argv=SDK_READ_FLOOR)
        if sdk
        else StdioServer(SDK_READ_FLOOR, bench.env(), cwd=str(ROOT))
    )
    with ours_session as server, peer_session as peer, floor_session as bare:
        server.initialize()
        requests = bench.upstream(server, name, arguments)
        bare.initialize()
        if bench.upstream(bare, name, arguments) != requests:
            raise RuntimeError("the SDK's bare read server made other Woodpecker requests than ours")
        peer_requests: list[dict[str, Any]] = []
        if peer is not None:
            peer.initialize()
            peer_requests = bench.upstream(peer, READ_TOOL, arguments)
        for _ in range(warmup):
            server.call(name, arguments)
            bench.replay(requests)
            bare.call(name, arguments)
            if peer is not None:
                peer.call(READ_TOOL, arguments)
                bench.replay(peer_requests)
        # Each server idles while the others are timed, so its CPU over the whole loop is its calls' CPU.
        cpu_before = server.cpu_seconds()
        peer_cpu_before = peer.cpu_seconds() if peer is not None else 0.0
        bare_cpu_before = bare.cpu_seconds()
        while len(ours) < calls:
            _timed_block(block, ours, lambda: server.call(name, arguments))
            _timed_block(block, floor, lambda: bench.replay(requests))
            _timed_block(block, sdk_floor, lambda: bare.call(name, arguments))
            if peer is not None:
                _timed_block(block, theirs, lambda: peer.call(READ_TOOL, arguments))
                _timed_block(block, their_floor, lambda: bench.replay(peer_requests))
        server_cpu = server.cpu_seconds() - cpu_before
        peer_cpu = peer.cpu_seconds() - peer_cpu_before if peer is not None else 0.0
        bare_cpu = bare.cpu_seconds() - bare_cpu_before
        bare_bytes = bare.last_response_bytes
        answer_bytes = server.last_response_bytes
        peer_answer_bytes = peer.last_response_bytes if peer is not None else 0
    mine, base = summary(ours), summary(floor)
    above = mine["median_ms"] - base["median_ms"]
    result: dict[str, Any] = {
        "tool": name,
        "arguments": arguments,
        "client": client,
        "upstream_requests": requests,
        "answer_bytes": answer_bytes,
        "ours": mine,
        "floor_direct_httpx": base,
        "ratio_median": ratio(mine["median_ms"], base["median_ms"]),
        "ratio_p99": ratio(mine["p99_ms"], base["p99_ms"]),
        "above_floor_median_ms": round(above, 3),
        "server_cpu_ms_per_call": ms(server_cpu / len(ours)),
        # The least a server on this SDK does for the same read (bench.sdk_floor_server --read).
        "sdk_floor": {
            "answer_bytes": bare_bytes,
            "calls": summary(sdk_floor),
            "above_floor_median_ms": round(summary(sdk_floor)["median_ms"] - base["median_ms"], 3),
            "server_cpu_ms_per_call": ms(bare_cpu / len(sdk_floor)),
        },
        "peer": None,
    }
    if theirs:
        peer_mine, peer_base = summary(theirs), summary(their_floor)
        peer_above = peer_mine["median_ms"] - peer_base["median_ms"]
        peer_cpu_per_call = ms(peer_cpu / len(theirs))
        result["peer"] = {
            "tool": READ_TOOL,
            "upstream_requests": peer_requests,
            "answer_bytes": peer_answer_bytes,
            "calls": peer_mine,
            "floor_direct_httpx": peer_base,
            "above_floor_median_ms": round(peer_above, 3),
            "server_cpu_ms_per_call": peer_cpu_per_call,
            "ratio_above_floor_ours_to_peer": ratio(above, peer_above),
            "ratio_cpu_ours_to_peer": ratio(result["server_cpu_ms_per_call"], peer_cpu_per_call),
            # Where the SDK's bare server stands against the peer: the lowest ours/peer any server
            # on this SDK could show in this run.
            "ratio_above_floor_sdk_floor_to_peer": ratio(
                result["sdk_floor"]["above_floor_median_ms"], peer_above
            ),
        }
    return result


def _timed_block(count: int, into: list[float], action: Callable[[], object]) -> None:
    for _ in range(count):
        started = time.perf_counter()
        action()
        into.append(time.perf_counter() - started)


class _Nothing:
    """A stand-in context manager for a server that is not run (the peer, when skipped)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# ---------------------------------------------------------------------------------- step logs


def _download(bench: Bench, path: str) -> tuple[int, float]:
    size = 0
    started = time.perf_counter()
    with bench.woodpecker.stream("GET", path) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            size += len(chunk)
    return size, time.perf_counter() - started


def step_logs(bench: Bench, sizes: Sequence[int]) -> list[dict[str, Any]]:
    """`get_step_logs` (defaults: the tail) on each big-log step, each in a fresh server so its peak RSS is its own."""
    steps = {log["lines"]: log for log in bench.sandbox["big_logs"]}
    rows = []
    for lines in sizes:
        log = steps[lines]
        path = f"/api/repos/{log['repo_id']}/logs/{log['number']}/{log['step_id']}"
        arguments = {"repo_id": log["repo_id"], "number": log["number"], "step_id": log["step_id"]}
        log_bytes, download_seconds = _download(bench, path)
        with bench.stdio() as server:
            server.initialize()
            server.list_tools()
            # One small call first, so the baseline includes an open Woodpecker client.
            server.call("get_step_logs", {**arguments, "step_id": steps[min(steps)]["step_id"], "limit": 1})
            rss_before = server.peak_rss_kib()
            started = time.perf_counter()
            result = server.call("get_step_logs", arguments)
            seconds = time.perf_counter() - started
            rss_after = server.peak_rss_kib()
            answer_bytes = server.last_response_bytes
        structured = result.get("structuredContent") or {}
        growth = (rss_after - rss_before) * 1024
        rows.append(
            {
                "lines": lines,
                "log_bytes": log_bytes,
                "total_lines_reported": structured.get("total_lines"),
                "lines_returned": len(structured.get("lines") or ()),
                "answer_bytes": answer_bytes,
                "seconds": round(seconds, 3),
                "floor_download_seconds": round(download_seconds, 3),
                "ratio_to_download": ratio(seconds, download_seconds),
                "server_peak_rss_kib_before": rss_before,
                "server_peak_rss_kib_after": rss_after,
                "peak_rss_growth_bytes": growth,
                "peak_rss_growth_per_log_byte": round(growth / log_bytes, 4) if log_bytes else None,
            }
        )
        bench.log(
            f"  {lines:>9,} lines: {seconds:.2f} s (download alone {download_seconds:.2f} s), "
            f"server peak RSS {rss_before // 1024} -> {rss_after // 1024} MiB"
        )
    return rows


def log_tail(bench: Bench, sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """`get_step_logs` (the default 200-line tail) on each size, ours and the peer's alternating in one session each; wall per call."""
    steps = {log["lines"]: log for log in bench.sandbox["big_logs"]}
    rows = []
    with bench.stdio() as server, bench.peer_stdio() if bench.peer else _Nothing() as peer:
        server.initialize()
        if peer is not None:
            peer.initialize()
        for lines in sizes:
            log = steps[lines]
            ours_args = {"repo_id": log["repo_id"], "number": log["number"], "step_id": log["step_id"]}
            peer_args = {
                "repo_id": log["repo_id"],
                "pipeline_number": log["number"],
                "step_id": log["step_id"],
            }
            ours: list[float] = []
            theirs: list[float] = []
            failures: dict[str, str] = {}
            for _ in range(repeats):
                for who, session, tool, args, into in (
                    ("ours", server, "get_step_logs", ours_args, ours),
                    ("peer", peer, LOG_TOOL, peer_args, theirs),
                ):
                    if session is None or who in failures:
                        continue
                    started = time.perf_counter()
                    try:
                        session.call(tool, args)
                    except ServerFailed as e:
                        failures[who] = str(e)[:300]
                        continue
                    into.append(time.perf_counter() - started)
            row: dict[str, Any] = {
                "lines": lines,
                "ours_median_ms": ms(statistics.median(ours)) if ours else None,
                "peer_median_ms": ms(statistics.median(theirs)) if theirs else None,
                "failures": failures,
            }
            row["ratio_ours_to_peer"] = (
                ratio(row["ours_median_ms"], row["peer_median_ms"]) if ours and theirs else None
            )
            rows.append(row)
            bench.log(
                f"  {lines:>9,} lines: ours {row['ours_median_ms']} ms, peer {row['peer_median_ms']} ms"
                + (f", failed: {', '.join(failures)}" if failures else "")
            )
    return {"repeats": repeats, "tool_arguments": "defaults (the last 200 lines)", "rows": rows}


# ---------------------------------------------------------------------------------- HTTP


async def _floor_load(
    bench: Bench, plan: Sequence[Sequence[Mapping[str, Any]]], sessions: int, calls: int
) -> dict[str, Any]:
    """`sessions` concurrent httpx clients replaying the upstream requests of the same tool mix."""
    latencies: list[float] = []

    async def one(index: int) -> None:
        async with httpx.AsyncClient(
            base_url=bench.sandbox["url"],
            headers={"Authorization": f"Bearer {bench.token}"},
            trust_env=False,
            timeout=60,
        ) as client:
            for i in range(calls):
                started = time.perf_counter()
                for r in plan[(index + i) % len(plan)]:
                    (await client.request(r["method"], r["path"], params=r["query"])).raise_for_status()
                latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(sessions):
            group.start_soon(one, index)
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "calls": len(ordered),
        "seconds": round(elapsed, 2),
        "calls_per_second": round(len(ordered) / elapsed, 1),
        "p50_ms": ms(statistics.median(ordered)),
        "p99_ms": ms(nearest_rank(ordered, 0.99)),
    }


HTTP_READ = ("get_repository", {"repo_id": 1})


def _serve_http(
    argv: Sequence[str], env: Mapping[str, str], port: int, health: bool
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        list(argv), env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    try:
        (http_load.wait_for_health if health else http_load.wait_for_port)(port, process)
    except BaseException:
        process.kill()
        process.wait(10)
        raise
    return process


def _sandbox_cpu(bench: Bench) -> float:
    return proc_cpu_seconds(bench.sandbox_pid) if bench.sandbox_pid is not None else 0.0


def _load_rounds(
    process: subprocess.Popen[bytes],
    url: str,
    bearer: str,
    sessions: int,
    calls: int,
    warmup: int,
    plan: Sequence[tuple[str, dict[str, Any]]],
    driver: str,
) -> tuple[dict[str, Any], list[float], float]:
    """One warm-up and one measured run of `http_load.drive`: (summary, latencies, server CPU seconds)."""
    drive = functools.partial(http_load.drive, driver=driver)
    warm = anyio.run(drive, url, bearer, sessions, warmup, process.pid, plan)
    cpu_before = proc_cpu_seconds(process.pid)
    run = anyio.run(drive, url, bearer, sessions, calls, process.pid, plan)
    cpu = proc_cpu_seconds(process.pid) - cpu_before
    run["warmup_errors"] = warm["errors"]
    return run, run.pop("latencies_s"), cpu


def _load_summary(runs: Sequence[dict[str, Any]], latencies: list[float], cpu: float) -> dict[str, Any]:
    calls = sum(r["calls"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    ordered = sorted(latencies)
    return {
        "calls": calls,
        "errors": sum(r["errors"] for r in runs) + sum(r["warmup_errors"] for r in runs),
        "first_errors": [e for r in runs for e in r["first_errors"]][:5],
        "seconds": round(seconds, 2),
        "calls_per_second": round(calls / seconds, 1) if seconds else 0.0,
        "p50_ms": ms(statistics.median(ordered)) if ordered else None,
        "p99_ms": ms(nearest_rank(ordered, 0.99)) if ordered else None,
        "server_cpu_ms_per_call": ms(cpu / calls) if calls else None,
    }


def http_throughput(
    bench: Bench, sessions: int, calls: int, warmup: int, rounds: int = 2, driver: str = "wire"
) -> dict[str, Any]:
    """`bench.http_load`'s driver (half 2025-11-25, half 2026-07-28 sessions) calling the read tool on our HTTP server and on the peer's, in alternating rounds, beside the replayed floor.

    `driver` (`http_load.DRIVERS`): "wire", each session is raw JSON-RPC POSTs written on its socket
    (`http_load.RawSession` over `WireConnection`); "httpx", the same POSTs through httpx; "sdk", the
    SDK's `Client`, which costs the benchmark process more CPU per call than either server."""
    name, arguments = HTTP_READ
    with bench.stdio() as server:
        server.initialize()
        plan = [bench.upstream(server, name, arguments)]
    bearer = secrets.token_urlsafe(32)
    servers: dict[
        str, tuple[list[str], dict[str, str], int, bool, str, list[tuple[str, dict[str, Any]]]]
    ] = {}
    port = http_load.free_port()
    servers["ours"] = (
        [*bench.server_argv, "--transport", "http", "--port", str(port)],
        bench.env(WOODPECKER_MCP_BEARER=bearer),
        port,
        True,
        bearer,
        [HTTP_READ],
    )
    if bench.peer is not None:
        peer_port = http_load.free_port()
        servers["peer"] = (
            bench.peer.argv,
            bench.peer_env(WOODPECKER_MCP_TRANSPORT="http", HOST="127.0.0.1", PORT=str(peer_port)),
            peer_port,
            False,
            # The peer forwards the caller's bearer to Woodpecker: the Woodpecker token is the bearer.
            bench.token,
            [(READ_TOOL, arguments)],
        )
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in servers}
    latencies: dict[str, list[float]] = {k: [] for k in servers}
    cpu: dict[str, float] = dict.fromkeys(servers, 0.0)
    rss_end: dict[str, int] = {}
    client_cpu = 0.0
    sandbox_cpu: dict[str, float] = dict.fromkeys(servers, 0.0)
    for _ in range(rounds):
        for who, (argv, env, at, health, token, tool_plan) in servers.items():
            process = _serve_http(argv, env, at, health)
            try:
                client_before = _own_cpu()
                sandbox_before = _sandbox_cpu(bench)
                run, seen, used = _load_rounds(
                    process, f"http://127.0.0.1:{at}/mcp", token, sessions, calls, warmup, tool_plan, driver
                )
                # (the warm-up's share too: both servers get the same warm-up)
                sandbox_cpu[who] += _sandbox_cpu(bench) - sandbox_before
                if who == "ours":
                    client_cpu += _own_cpu() - client_before
                runs[who].append({k: v for k, v in run.items() if k != "rss_samples_kib"})
                latencies[who] += seen
                cpu[who] += used
                rss_end[who] = http_load.rss_kib(process.pid)
            finally:
                process.terminate()
                process.wait(10)
    floor = anyio.run(_floor_load, bench, plan, sessions, calls)
    ours = _load_summary(runs["ours"], latencies["ours"], cpu["ours"])
    result: dict[str, Any] = {
        "sessions": sessions,
        "calls_per_session": calls,
        "rounds": rounds,
        "tools": [name],
        "upstream_requests": plan[0],
        "ours": ours,
        "server_rss_kib_end": rss_end["ours"],
        "server_cpu_ms_per_call": ours["server_cpu_ms_per_call"],
        # The 16 clients run in this process on the same cores: their cost bounds the rate too.
        "driver": driver,
        "client_cpu_ms_per_call": ms(client_cpu / ours["calls"]) if ours["calls"] else None,
        # The sandbox answering each call's GET, per measured call (warm-up included in its CPU).
        "sandbox_cpu_ms_per_call": {
            who: ms(sandbox_cpu[who] / len(latencies[who])) if latencies[who] else None for who in servers
        },
        "floor_direct_httpx": floor,
        "throughput_ratio": ratio(floor["calls_per_second"], ours["calls_per_second"]),
        "p50_ratio": ratio(ours["p50_ms"] or 0, floor["p50_ms"]),
        "p99_ratio": ratio(ours["p99_ms"] or 0, floor["p99_ms"]),
        "peer": None,
    }
    if "peer" in runs:
        peer = _load_summary(runs["peer"], latencies["peer"], cpu["peer"])
        result["peer"] = {
            **peer,
            "tool": READ_TOOL,
            "server_rss_kib_end": rss_end["peer"],
            "ratio_calls_per_second_ours_to_peer": ratio(ours["calls_per_second"], peer["calls_per_second"]),
            "ratio_p99_ours_to_peer": ratio(ours["p99_ms"] or 0, peer["p99_ms"] or 0),
            "ratio_cpu_per_call_ours_to_peer": ratio(
                ours["server_cpu_ms_per_call"] or 0, peer["server_cpu_ms_per_call"] or 0
            ),
        }
    return result


# ---------------------------------------------------------------------------------- the guard


def _blocked_pipeline(bench: Bench) -> tuple[int, int]:
    for repo in bench.woodpecker.get("/api/user/repos").json():
        for pipeline in bench.woodpecker.get(f"/api/repos/{repo['id']}/pipelines").json():
            if pipeline["status"] == "blocked":
                return int(repo["id"]), int(pipeline["number"])
    raise RuntimeError("the sandbox has no blocked pipeline to approve")


def _approved(result: Mapping[str, Any]) -> None:
    if result.get("resultType") == "input_required" or result.get("isError"):
        raise RuntimeError(f"the approval did not go through: {json.dumps(result)[:300]}")


def guard(bench: Bench, iterations: int) -> dict[str, Any]:
    """`approve_pipeline` through each way of asking, beside `decline_pipeline` (the same POST, unguarded) and the bare POST.

    Every iteration re-seeds the sandbox first (untimed), so the pipeline is blocked again.
    The client answers yes at once: the figures are the server's cost, not a person's.
    """
    repo_id, number = _blocked_pipeline(bench)
    target = {"repo_id": repo_id, "number": number}
    times: dict[str, list[float]] = {k: [] for k in ("unguarded_write", "token", "dialog", "sealed", "floor")}
    rounds: dict[str, int] = {"unguarded_write": 1, "token": 2, "dialog": 1, "sealed": 2, "floor": 1}

    def timed(path: str, action: Callable[[], None]) -> None:
        bench.reset()
        started = time.perf_counter()
        action()
        times[path].append(time.perf_counter() - started)

    with bench.stdio() as plain, bench.stdio() as dialog, bench.stdio() as modern:
        plain.initialize(protocol=LEGACY, elicitation=False)
        dialog.initialize(protocol=LEGACY, elicitation=True)
        modern.initialize(protocol=MODERN, elicitation=True)

        def unguarded() -> None:
            _approved(plain.call("decline_pipeline", target))

        def token() -> None:
            first = plain.call("approve_pipeline", target)
            issued = first["structuredContent"]["confirm_token"]
            _approved(plain.call("approve_pipeline", {**target, "confirm_token": issued}))

        def pushed() -> None:
            _approved(dialog.call("approve_pipeline", target))

        def sealed() -> None:
            question = modern.call("approve_pipeline", target)
            state = question["requestState"]
            _approved(modern.call("approve_pipeline", target, inputResponses=ACCEPT, requestState=state))

        bench.reset()
        upstream = {"unguarded_write": bench.recorded(unguarded)}
        for path, action in (("token", token), ("dialog", pushed), ("sealed", sealed)):
            bench.reset()
            upstream[path] = bench.recorded(action)
        # The bare POST: the approval alone, without the read the guard makes before asking.
        approve = [r for r in upstream["dialog"] if r["method"] != "GET"]

        def floor() -> None:
            bench.replay(approve)

        actions = {
            "unguarded_write": unguarded,
            "token": token,
            "dialog": pushed,
            "sealed": sealed,
            "floor": floor,
        }
        for _ in range(iterations):
            for path, action in actions.items():
                timed(path, action)
    bench.reset()
    base = statistics.median(times["unguarded_write"])
    return {
        "tool": "approve_pipeline",
        "iterations": iterations,
        "upstream_requests": upstream,
        "paths": {
            path: {
                "client_round_trips": rounds[path],
                **summary(seconds),
                "ratio_to_unguarded_write": ratio(statistics.median(seconds), base),
            }
            for path, seconds in times.items()
        },
        "note": (
            "token: first call issues a token, second redeems it (ELICITATION off or a client without dialogs); "
            "dialog: 2025-11-25 elicitation/create pushed during the call; sealed: 2026-07-28 input_required "
            "with the HMAC-sealed requestState, then the retry; floor: the bare POST from this process"
        ),
    }


# ---------------------------------------------------------------------------------- log window


def log_window(lines: Sequence[int], parser_lines: int, out: Path) -> dict[str, Any]:
    """Run `bench.log_window` (the gateway's own benchmark) in a child process and keep its JSON."""
    argv = [
        sys.executable,
        "-m",
        "bench.log_window",
        "--lines",
        *[str(n) for n in lines],
        "--parser-lines",
        str(parser_lines),
    ]
    completed = subprocess.run([*argv, "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        return {
            "error": f"bench.log_window exited {completed.returncode}",
            "stderr": completed.stderr[-1500:],
        }
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def temporary_audit_file() -> str:
    """Guarded calls write a real audit line each, as in production, into a file of their own."""
    handle, path = tempfile.mkstemp(prefix="bench-audit-", suffix=".jsonl")
    os.close(handle)
    return path
