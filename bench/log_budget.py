"""The CPU a 1,000,000-line log read cannot do without, and the lowest time ratio it allows here.

Run with `python -m bench.log_budget` (`--lines 200000` for a smaller log). Issue 14 asks for a
tail and a search of a 1,000,000-line log within 1.5 times the bare download. Against the
sandbox that holds (`bench/log_window.py`); against a server that sends prebuilt bytes at
socket speed it does not, and this measures why, part by part, on the same bytes:

- the bare download: its wall time, the reading process's CPU and the sending server's CPU;
- what the reader must do to every byte whatever it keeps: the RE2 shape check that makes
  its answer the JSON parser's for any bytes (docs/adr/0037; a search's also looks for the
  base64 forms of the pattern's literals, so that runs without them are never decoded),
  counting the entries, and joining each run's network chunks into one buffer for that check;
- what a window does instead of counting: each run's lowest and highest line number (one split
  of the run at its line numbers, which counts the entries too).

The floor is that CPU spread perfectly over the machine's cores, and never less than the
part that holds Python's GIL (all of it but the RE2 check), nor than the download itself.
It is a bound, not a forecast: real threads hand work over and wait. Prints a table and
writes `bench/out/log_budget.json`.
"""

import argparse
import asyncio
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.woodpecker_httpx import log_stream
from adapters.woodpecker_httpx.log_read import CompiledSearch
from bench.log_window import PATTERN, download_only, report, start_child, stop_child
from ports.woodpecker import LogSearchRequest

OUT = Path(__file__).resolve().parent / "out" / "log_budget.json"
CHUNK = 64 * 1024  # what one network read hands the reader


def body_of(lines: int) -> bytes:
    """The bytes the sandbox serves for its log of `lines` lines (as bench.log_window's prebuilt server)."""
    from sandbox.biglogs import BigLog
    from sandbox.seed import BIG_LOG_STEPS

    step_id = BIG_LOG_STEPS[lines][2]
    return b"".join(BigLog(step_id=step_id, lines=lines, first_id=step_id * 10_000_000).stream())


def runs_of(body: bytes, size: int = log_stream._MIN_RUN) -> list[bytes]:
    """The array's entries cut into runs of about `size` bytes at `},{`, as the scanner cuts them."""
    inner = body.strip()[1:-1]
    runs, start = [], 0
    while start < len(inner):
        end = inner.rfind(b"},{", start, start + size) if start + size < len(inner) else len(inner) - 1
        runs.append(inner[start : end + 1])
        start = end + 2
    return runs


def best_cpu(work: Callable[[], object], rounds: int = 3) -> float:
    """The least process CPU of `rounds` runs of `work` (one thread: CPU and wall agree)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def per_byte_parts(body: bytes) -> dict[str, float]:
    """CPU seconds of each part of the reader's per-byte work over the whole body."""
    runs = runs_of(body)
    check = log_stream._checker(None)
    checked = [check(run) for run in runs]
    if any(c is None for c in checked):
        raise SystemExit("a run failed the shape check: these are not the sandbox's fixed-shape entries")
    widths = [c[0] for c in checked if c is not None]

    def joins() -> None:
        for run in runs:
            view = memoryview(run)
            b"".join([view[: len(run) // 2], view[len(run) // 2 :]])

    def bounds() -> None:
        for run, width in zip(runs, widths, strict=True):
            log_stream.FixedBatch(run, width).bounds()

    # A search looks for its literals' base64 forms in the same RE2 pass (log_read.CompiledSearch).
    searching = log_stream._checker(CompiledSearch(LogSearchRequest(PATTERN, context=3)).prefilter)
    return {
        "shape_check": best_cpu(lambda: [check(run) for run in runs]),
        "shape_check_searching": best_cpu(lambda: [searching(run) for run in runs]),
        "count": best_cpu(lambda: [run.count(b"{") for run in runs]),
        "join": best_cpu(joins),
        "bounds": best_cpu(bounds),
    }


def _process_cpu(pid: int) -> float | None:
    """Another process's user + system CPU seconds (Linux's /proc), else None."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def download_parts(lines: int, rounds: int) -> dict[str, float | None]:
    """The best of `rounds` bare downloads from the prebuilt-bytes server: wall, our CPU, its CPU."""
    child, info = start_child(["-m", "bench.log_window", "--serve-prebuilt", str(lines)])
    try:
        url = info["url"] + "/log"
        asyncio.run(download_only(url, "bench-token"))  # warm: connections, imports
        best: dict[str, float | None] = {"wall": float("inf")}
        for _ in range(rounds):
            server_before, cpu = _process_cpu(child.pid), time.process_time()
            _, wall = asyncio.run(download_only(url, "bench-token"))
            client, server_after = time.process_time() - cpu, _process_cpu(child.pid)
            if wall < (best["wall"] or float("inf")):
                server = (
                    None if server_before is None or server_after is None else server_after - server_before
                )
                best = {"wall": wall, "client_cpu": client, "server_cpu": server}
        return best
    finally:
        stop_child(child)


def floor(
    download: dict[str, float | None], parts: dict[str, float], cores: int, window: bool
) -> dict[str, float]:
    """The least wall time a read could take: its CPU on `cores` cores, its GIL-held part, the download."""
    wall = download["wall"] or 0.0
    received = (download["client_cpu"] or 0.0) + (download["server_cpu"] or 0.0)
    # A window's bounds come from splitting each run at its line numbers, which counts it too; a
    # search counts, and its check also looks for the pattern's literals.
    check = parts["shape_check"] if window else parts["shape_check_searching"]
    reader = check + parts["join"] + (parts["bounds"] if window else parts["count"])
    holding_gil = (download["client_cpu"] or 0.0) + reader - check
    least = max((received + reader) / cores, holding_gil, wall)
    return {
        "cpu_seconds": round(received + reader, 3),
        "gil_seconds": round(holding_gil, 3),
        "floor_seconds": round(least, 3),
        "floor_ratio": round(least / wall, 2) if wall else 0.0,
    }


def measure(lines: int, rounds: int) -> dict[str, Any]:
    body = body_of(lines)
    parts = per_byte_parts(body)
    download = download_parts(lines, rounds)
    cores = os.cpu_count() or 1
    return {
        "lines": lines,
        "bytes": len(body),
        "cores": cores,
        "python": platform.python_version(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "download": {k: None if v is None else round(v, 3) for k, v in download.items()},
        "per_byte_cpu_seconds": {k: round(v, 3) for k, v in parts.items()},
        "search": floor(download, parts, cores, window=False),
        "tail_or_head": floor(download, parts, cores, window=True),
    }


def table(result: dict[str, Any]) -> str:
    d, p = result["download"], result["per_byte_cpu_seconds"]
    mib = result["bytes"] / 1024 / 1024
    server = "n/a" if d["server_cpu"] is None else f"{d['server_cpu']:.2f}"
    rows = [
        f"{result['lines']:,} lines, {mib:.1f} MiB, {result['cores']} cores, load average {result['load_average']}",
        f"bare download: {d['wall']:.2f} s wall, {d['client_cpu']:.2f} CPU-s reading, {server} CPU-s sending",
        "per-byte CPU of the reader, whole body in memory (CPU-s): "
        + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in p.items()),
        f"  {'read':<13} {'CPU-s':>6} {'GIL-s':>6} {'floor s':>8} {'floor ratio':>12}",
    ]
    for name in ("search", "tail_or_head"):
        f = result[name]
        rows.append(
            f"  {name.replace('_', ' '):<13} {f['cpu_seconds']:>6.2f} {f['gil_seconds']:>6.2f} "
            f"{f['floor_seconds']:>8.2f} {f['floor_ratio']:>11.2f}x"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.log_budget", description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000, choices=[10_000, 200_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=3, help="downloads; the fastest is kept")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result = measure(args.lines, args.rounds)
    report(table(result), result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
