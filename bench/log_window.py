"""Benchmark: window and search the sandbox's 10,000 / 200,000 / 1,000,000-line step logs streamed over loopback; time and peak memory.

Run with `python -m bench.log_window` (add `--tracemalloc` for the traced peak, which is slow).
The log server runs in a child process, so the numbers are the reading side's alone. Every
time is also given as a ratio to downloading the same bytes with httpx in the same run. "json
reader" is the reading path before the byte-level scanner (every entry JSON-parsed, then windowed), kept
here as the "before". Prints a small table and writes `bench/out/log_window.json`.
"""

import argparse
import contextlib
import gc
import inspect
import json
import os
import platform
import re
import resource
import socket
import subprocess
import sys
import time
import tracemalloc
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import ijson

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway, log_read, log_stream
from adapters.woodpecker_httpx.log_read import decode
from adapters.woodpecker_httpx.log_stream import LogArrayReader
from domain.logs import LogWindower, is_output
from ports.woodpecker import Credential, LogSearchRequest, LogWindowRequest

OUT = Path(__file__).resolve().parent / "out" / "log_window.json"
ROOT = Path(__file__).resolve().parents[1]
PATTERN = "--- FAIL: |panic:"  # a failure a build would print, absent from these logs: every line is searched
# The reader modules of an older commit (--before), loaded beside the current ones.
BEFORE: dict[str, types.ModuleType] = {}


def load_before(commit: str) -> None:
    """log_stream and log_read as they were at `commit`, as modules of their own (read with git show)."""

    def source(path: str) -> str:
        shown = subprocess.run(
            ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return shown.stdout

    for name in ("log_stream", "log_read"):
        path = f"adapters/woodpecker_httpx/{name}.py"
        text = source(path).replace(
            "from adapters.woodpecker_httpx.log_stream import", "from bench_before_log_stream import"
        )
        module = types.ModuleType(f"bench_before_{name}")
        sys.modules[module.__name__] = module
        exec(compile(text, f"{commit}:{path}", "exec"), module.__dict__)
        BEFORE[name] = module


def peak_rss_kib() -> int:
    try:
        with open("/proc/self/status") as status:
            found = re.search(r"VmHWM:\s+(\d+)", status.read())
        if found:
            return int(found.group(1))
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


def start_child(argv: list[str]) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """Start a server process that prints one JSON line about itself once it listens."""
    child = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        child.kill()
        raise SystemExit("the log server did not start")
    return child, json.loads(line)


def stop_child(child: subprocess.Popen[str]) -> None:
    child.terminate()
    try:
        child.wait(10)
    except subprocess.TimeoutExpired:
        child.kill()


def serve_prebuilt(lines: int) -> int:
    """Child mode: build the sandbox's log bytes once, then answer every request with them at socket speed.

    This isolates the reading side: the sandbox itself generates lines in Python, which
    makes it, not the reader, the bottleneck of the end-to-end run.
    """
    from sandbox.biglogs import BigLog
    from sandbox.seed import BIG_LOG_STEPS

    step_id = BIG_LOG_STEPS[lines][2]
    # The same bytes the sandbox serves for this step (its ids start at step_id * 10**7).
    body = b"".join(BigLog(step_id=step_id, lines=lines, first_id=step_id * 10_000_000).stream())
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_server(("127.0.0.1", 0)) as server:
        print(json.dumps({"url": f"http://127.0.0.1:{server.getsockname()[1]}"}), flush=True)
        while True:
            conn, _ = server.accept()
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    part = conn.recv(65536)
                    if not part:
                        break
                    request += part
                with contextlib.suppress(OSError):
                    conn.sendall(head + body if request else b"")


async def download_only(url: str, token: str) -> tuple[int, float]:
    """The floor: reading the bytes without parsing them."""
    size = 0
    async with httpx.AsyncClient(timeout=120, trust_env=False) as client:
        start = time.perf_counter()
        async with client.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as response:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
        return size, time.perf_counter() - start


async def json_reader_tail(url: str, token: str, limit: int) -> tuple[int, list[int]]:
    """The reading path before the byte-level scanner: every entry JSON-parsed, fed to the windower, the kept ones decoded."""
    reader = LogArrayReader()
    windower: LogWindower[dict[str, Any]] = LogWindower(limit, "tail")
    async with httpx.AsyncClient(timeout=120, trust_env=False) as client:
        async with client.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as response:
            async for chunk in response.aiter_bytes():
                for entry in reader.feed(chunk):
                    if is_output(entry.get("type")):
                        windower.feed(entry["line"], entry)
        reader.close()
    kept = [(n, decode(e.get("data"))) for n, e in windower.window()]
    return windower.total, [n for n, _ in kept]


async def scanner_loop(url: str, token: str, limit: int, what: str) -> tuple[int, list[int]]:
    """The gateway's loop (`aiter_bytes` into `LogScanner` into the reader) with the current reader
    modules ("tail after") or those of --before ("tail before"); "tail", "head" or "search"."""
    kind, when = what.split()
    stream, read = (BEFORE["log_stream"], BEFORE["log_read"]) if when == "before" else (log_stream, log_read)
    reader: Any
    also = None
    if kind == "search":
        request = LogSearchRequest(PATTERN, context=3)
        compiled = read.CompiledSearch(request)
        reader, also = read.SearchReader(request, compiled), compiled.prefilter
    else:
        reader = read.WindowReader(LogWindowRequest(limit, "head" if kind == "head" else "tail"))
    options: dict[str, Any] = (
        {"executor": stream.check_executor()} if hasattr(stream, "check_executor") else {}
    )
    if "bounds" in inspect.signature(stream.LogScanner).parameters:
        options["bounds"] = kind != "search"  # as the gateway has it: a search needs no line bounds
    scanner = stream.LogScanner(also=also, **options)
    async with httpx.AsyncClient(timeout=120, trust_env=False) as client:
        async with client.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as response:
            async for chunk in response.aiter_bytes():
                for batch in scanner.feed(chunk):
                    reader.feed(batch)
        for batch in scanner.close():
            reader.feed(batch)
    if kind == "search":
        found = reader.result()
        return found.total_lines, [m.line.number for m in found.matches]
    window = reader.result()
    return window.total_lines, [line.number for line in window.lines]


async def windowed(base: str, path: str, token: str, limit: int, what: str, trace: bool) -> dict[str, Any]:
    """One timed read: "tail" or "head" (get_step_logs), "search" (search_step_logs), or "json reader" (before)."""
    async with HttpxWoodpeckerGateway(base, token=Credential(token), timeout=120, trust_env=False) as gateway:
        gc.collect()
        measured_rss = reset_peak_rss()
        rss_before = peak_rss_kib()
        if trace:
            tracemalloc.start()
        start, cpu = time.perf_counter(), time.process_time()
        if what.endswith((" before", " after")):
            total, numbers = await scanner_loop(base + path, token, limit, what)
        elif what == "search":
            found = await gateway.search_step_log(path, LogSearchRequest(PATTERN, context=3), None)
            total, numbers = found.total_lines, [m.line.number for m in found.matches]
        elif what == "json reader":
            total, numbers = await json_reader_tail(base + path, token, limit)
        else:
            end: Literal["head", "tail"] = "head" if what == "head" else "tail"
            window = await gateway.step_log(path, LogWindowRequest(limit, end), None)
            total, numbers = window.total_lines, [line.number for line in window.lines]
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        traced_peak = tracemalloc.get_traced_memory()[1] if trace else None
        if trace:
            tracemalloc.stop()
        rss_growth = (peak_rss_kib() - rss_before) * 1024 if measured_rss else None
    return {
        "from": what,
        "limit": limit,
        "tracemalloc": trace,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),  # the process's CPU time, every thread's
        "total_lines": total,
        "first_line": numbers[0] if numbers else None,
        "last_line": numbers[-1] if numbers else None,
        "peak_rss_growth_bytes": rss_growth,
        "tracemalloc_peak_bytes": traced_peak,
    }


def compare_parsers(lines: int) -> list[dict[str, Any]]:
    """Our incremental reader against ijson's `items` on the same bytes, in 64 KiB chunks."""
    from sandbox.biglogs import BigLog  # the sandbox's own generator, so the bytes match the served log

    body = b"".join(BigLog(step_id=1, lines=lines, first_id=1).stream())
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]

    def ours() -> int:
        reader, n = LogArrayReader(), 0
        for chunk in chunks:
            n += len(reader.feed(chunk))
        return n + len(reader.close())

    def ijson_items() -> int:
        out, n = ijson.sendable_list(), 0
        coro = ijson.items_coro(out, "item")
        for chunk in chunks:
            coro.send(chunk)
            n += len(out)
            out.clear()
        coro.close()
        return n + len(out)

    results = []
    runs: list[tuple[str, Callable[[], int]]] = [
        ("LogArrayReader (json C scanner)", ours),
        (f"ijson items_coro ({ijson.backend})", ijson_items),
    ]
    for name, parse in runs:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            assert parse() == lines
            best = min(best, time.perf_counter() - start)
        results.append(
            {
                "parser": name,
                "lines": lines,
                "bytes": len(body),
                "seconds": round(best, 3),
                "mb_per_s": round(len(body) / best / 1e6, 1),
            }
        )
    return results


WHAT = ("json reader", "tail", "head", "search")
# With --before: each read through the same loop, with the older readers and with the current ones.
BEFORE_AFTER = tuple(f"{kind} {when}" for kind in ("tail", "head", "search") for when in ("before", "after"))


async def measure(url: str, path: str, token: str, args: argparse.Namespace, source: str) -> dict[str, Any]:
    """Each read of WHAT, `args.repeat` times, each round after a fresh download; the best of each kept.

    Downloads and reads alternate, so a busy moment of the machine moves both; every ratio
    divides a read's best time by the best download time.
    """
    downloads: list[float] = []
    download_cpu: list[float] = []
    best: dict[str, dict[str, Any]] = {}
    growth: dict[str, int | None] = {}
    size = 0
    reads = BEFORE_AFTER if BEFORE else WHAT
    for _ in range(args.repeat):
        cpu = time.process_time()
        size, seconds = await download_only(url + path, token)
        downloads.append(seconds)
        download_cpu.append(time.process_time() - cpu)
        for what in reads:
            run = await windowed(url, path, token, args.limit, what, False)
            if what not in best or run["seconds"] < best[what]["seconds"]:
                best[what] = run
            grew = run["peak_rss_growth_bytes"]
            # Memory is reported as the worst round, time as the best.
            growth[what] = None if grew is None else max(grew, growth.get(what) or 0)
    floor = min(downloads)
    runs = [
        {
            **best[w],
            "peak_rss_growth_bytes": growth[w],
            "ratio_to_download": round(best[w]["seconds"] / floor, 2),
        }
        for w in reads
    ]
    # The machine's load while this block ran (other processes share its CPUs).
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if args.tracemalloc:
        runs.append(await windowed(url, path, token, args.limit, "tail", True))
    return {
        "source": source,
        "log_bytes": size,
        "download_only_seconds": round(floor, 3),
        "download_cpu_seconds": round(min(download_cpu), 3),
        "load_average": None if load is None else round(load, 2),
        "runs": runs,
    }


async def one_size(lines: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    sources = []
    child, info = start_child(["-m", "sandbox", "--api-only"])
    try:
        log = next(b for b in info["big_logs"] if b["lines"] == lines)
        path = f"/api/repos/{log['repo_id']}/logs/{log['number']}/{log['step_id']}"
        token = info["tokens"][info["admin_login"]]
        sources.append(await measure(info["url"], path, token, args, "sandbox (generates lines as it sends)"))
    finally:
        stop_child(child)
    child, info = start_child(["-m", "bench.log_window", "--serve-prebuilt", str(lines)])
    try:
        sources.append(await measure(info["url"], path, "bench-token", args, "prebuilt bytes (socket speed)"))
    finally:
        stop_child(child)
    for source in sources:
        source["lines"] = lines
    return sources


async def run(args: argparse.Namespace) -> dict[str, Any]:
    sources = []
    for lines in args.sizes:
        sources += await one_size(lines, args)
    return {
        "log_lines": max(args.sizes),
        "sizes": list(args.sizes),
        "sources": sources,
        "parsers": [] if args.before else compare_parsers(args.parser_lines),
        "before": args.before,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "ijson_backend": ijson.backend,
    }


def table(result: dict[str, Any]) -> str:
    mib = 1024 * 1024
    rows = [
        f"window {result['sources'][0]['runs'][0]['limit']} lines; search '--- FAIL: |panic:' with 3 lines of context"
    ]
    for source in result["sources"]:
        rows.append(
            f"{source.get('lines', result['log_lines']):,} lines, {source['source']}: {source['log_bytes'] / mib:.1f} MiB, "
            f"download alone {source['download_only_seconds']:.2f} s ({source['download_cpu_seconds']:.2f} s CPU), "
            f"load average {source['load_average']}"
        )
        rows.append(
            f"  {'read':<13} {'traced':>6} {'seconds':>8} {'ratio':>6} {'cpu s':>6} {'lines/s':>10} {'RSS growth':>11} {'traced peak':>12}"
        )
        for r in source["runs"]:
            rss = (
                f"{r['peak_rss_growth_bytes'] / mib:.1f} MiB"
                if r["peak_rss_growth_bytes"] is not None
                else "n/a"
            )
            peak = (
                f"{r['tracemalloc_peak_bytes'] / mib:.2f} MiB"
                if r["tracemalloc_peak_bytes"] is not None
                else "-"
            )
            rate = f"{r['total_lines'] / max(r['seconds'], 1e-9):,.0f}"
            traced = "yes" if r["tracemalloc"] else "no"
            ratio = f"{r['ratio_to_download']:.2f}x" if "ratio_to_download" in r else "-"
            rows.append(
                f"  {r['from']:<13} {traced:>6} {r['seconds']:>8.2f} {ratio:>6} {r['cpu_seconds']:>6.2f} {rate:>10} {rss:>11} {peak:>12}"
            )
    if result["parsers"]:
        rows.append("parsers (same bytes in memory, 64 KiB chunks, best of 3):")
    for p in result["parsers"]:
        rows.append(f"  {p['parser']:<36} {p['seconds']:>6.2f} s {p['mb_per_s']:>7.1f} MB/s")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.log_window", description=__doc__)
    parser.add_argument(
        "--lines",
        type=int,
        nargs="+",
        default=[10_000, 200_000, 1_000_000],
        choices=[10_000, 200_000, 1_000_000],
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds per size; the best of each read is kept"
    )
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--tracemalloc", action="store_true", help="add a traced run (about 20x slower)")
    parser.add_argument("--parser-lines", type=int, default=200_000)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--before",
        metavar="COMMIT",
        help="compare the log readers of COMMIT with the current ones, alternating within each round",
    )
    parser.add_argument("--serve-prebuilt", type=int, metavar="LINES", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_prebuilt:
        return serve_prebuilt(args.serve_prebuilt)
    args.sizes = args.lines
    if args.before:
        load_before(args.before)
    result = anyio.run(run, args)
    report(table(result), result, args.out)
    return 0


def report(text: str, result: dict[str, Any], out: Path) -> None:
    """Print a run's table and write its figures to `out` (JSON)."""
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {out.name} in {out.parent.name}/")


if __name__ == "__main__":
    sys.exit(main())
