"""Benchmark: search a plain and a coloured 200,000-line step log as its lines are shown (ADR 0088).

    python -m bench.log_search_shown [--lines N] [--repeat R] [--before COMMIT]

The same lines twice, once plain and once with the escape sequences a colouring build tool
writes around each line's first word; searched for `get_pipeline_failure_summary`'s pattern
(one RE2 pass per run of entries where nothing is to clean) and for `--- FAIL: |panic:` (the
literals' base64 shortcut), neither of which matches. The bytes are held in memory and fed to
the scanner and search reader in 64 KiB chunks, as the gateway does, so the numbers are the
reading alone. Each time is the best of R and is also given as a ratio to the plain log's
literal search in the same run; with `--before`, the readers of that commit run beside.
"""

import argparse
import base64
import time
from typing import Any

from adapters.woodpecker_httpx import log_read, log_stream
from bench.log_window import BEFORE, load_before
from domain.woodpecker.results import ERROR_PATTERN
from ports.woodpecker import LogSearchRequest

PATTERNS = {"failure summary's pattern": ERROR_PATTERN, "literals --- FAIL: |panic:": "--- FAIL: |panic:"}
CHUNK = 64 * 1024


def body(lines: int, coloured: bool) -> bytes:
    entries = []
    for i in range(lines):
        word, rest = "compiling", f"crate foo v0.{i % 997}.{i % 13} (registry+https://example.org/index)"
        text = f"\x1b[1m\x1b[32m{word}\x1b[0m {rest}" if coloured else f"{word} {rest}"
        data = base64.b64encode(text.encode()).decode()
        entries.append(f'{{"id":{i},"step_id":7,"time":{i // 80},"line":{i},"data":"{data}","type":0}}')
    return ("[" + ",".join(entries) + "]").encode()


def search(read: Any, stream: Any, raw: bytes, pattern: str) -> tuple[float, int]:
    request = LogSearchRequest(pattern, context=3)
    compiled = read.CompiledSearch(request)
    reader = read.SearchReader(request, compiled)
    start = time.perf_counter()
    scanner = stream.LogScanner(also=compiled.prefilter)
    for at in range(0, len(raw), CHUNK):
        for batch in scanner.feed(raw[at : at + CHUNK]):
            reader.feed(batch)
    for batch in scanner.close():
        reader.feed(batch)
    return time.perf_counter() - start, reader.result().total_lines


def best(read: Any, stream: Any, raw: bytes, pattern: str, repeat: int, lines: int) -> float:
    times = []
    for _ in range(repeat):
        seconds, searched = search(read, stream, raw, pattern)
        assert searched == lines, (searched, lines)
        times.append(seconds)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.log_search_shown", description=__doc__)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", metavar="COMMIT", help="also run the readers of this commit")
    args = parser.parse_args()
    readers = {"after": (log_read, log_stream)}
    if args.before:
        load_before(args.before)
        readers = {"before": (BEFORE["log_read"], BEFORE["log_stream"]), **readers}
    logs = {kind: body(args.lines, kind == "coloured") for kind in ("plain", "coloured")}
    floor = None
    print(f"{args.lines:,} lines, best of {args.repeat}; ratio to the plain log's literal search (after)")
    rows = []
    for reader, (read, stream) in readers.items():
        for kind, raw in logs.items():
            for name, pattern in PATTERNS.items():
                seconds = best(read, stream, raw, pattern, args.repeat, args.lines)
                rows.append((reader, kind, name, seconds))
                if (
                    reader == "after"
                    and kind == "plain"
                    and pattern == PATTERNS["literals --- FAIL: |panic:"]
                ):
                    floor = seconds
    assert floor is not None
    for reader, kind, name, seconds in rows:
        print(f"  {reader:<7}{kind:<10}{name:<30}{seconds:7.3f} s {seconds / floor:6.1f}x")


if __name__ == "__main__":
    main()
