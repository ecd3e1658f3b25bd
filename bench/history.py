"""`python -m bench.history`: analyze_pipeline_history on a seeded history of 500 pipelines: requests sent,
wall time and bytes of the answer, beside the bare GETs the same reading needs.

The sandbox runs as its own process (`python -m sandbox --api-only --history 500`), so the server
side's CPU does not share this process's GIL. The tool runs in the product's ToolRunner with the
real httpx gateway and the anyio Concurrency adapter (no MCP framing: that adds a few dozen bytes
to the answer). No peer server has such a tool, so the floor is measured in the same run: the
same list pages and pipeline reads with a bare httpx client, one after another and 4 at a time.
Prints a table and writes bench/out/history.json; figures go to bench/RESULTS.md by hand.
"""

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from adapters.anyio_concurrency import AnyioConcurrency
from adapters.system_clock import SystemClock
from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from bench.log_window import start_child, stop_child
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.history import CONCURRENCY, PAGE_SIZE
from ports.use_cases.tools import ToolRunner
from ports.woodpecker import Credential, Request
from sandbox.seed import BENCH_REPO_ID

OUT = Path(__file__).resolve().parent / "out" / "history.json"


def _bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


class Counting(HttpxWoodpeckerGateway):
    """The real gateway, counting the requests the tool sends."""

    sent = 0

    async def send(self, request: Request, credential: Credential | None = None) -> Any:
        self.sent += 1
        return await super().send(request, credential)


async def ours(url: str, token: str, limit: int) -> dict[str, Any]:
    gateway = Counting(url, trust_env=False, retries=0, timeout=30.0)
    runner = ToolRunner(
        WOODPECKER_TOOLS,
        gateway,
        default_credential=Credential(token),
        clock=SystemClock(),
        concurrency=AnyioConcurrency(),
    )
    try:
        start = time.perf_counter()
        result = await runner.run(
            "analyze_pipeline_history", {"repo_id": BENCH_REPO_ID, "limit": limit}, None
        )
        wall = time.perf_counter() - start
    finally:
        await gateway.aclose()
    if result.is_error:
        raise SystemExit(f"analyze_pipeline_history failed: {result.text}")
    return {
        "wall_s": wall,
        "requests": gateway.sent,
        "read": result.structured["read"],
        "structured_bytes": _bytes(result.structured),
        "text_bytes": _bytes(result.text),
        "answer_bytes": _bytes(result.structured) + _bytes(result.text),
        "summary": result.text.splitlines()[1],
    }


async def bare(url: str, token: str, limit: int, at_once: int) -> dict[str, Any]:
    """The same pages and pipeline reads with a bare httpx client, `at_once` reads in flight."""
    headers = {"Authorization": f"Bearer {token}"}
    base = f"{url}/api/repos/{BENCH_REPO_ID}/pipelines"
    async with httpx.AsyncClient(headers=headers, trust_env=False, timeout=30.0) as client:
        start = time.perf_counter()
        listed: list[dict[str, Any]] = []
        pages = 0
        while len(listed) < limit:
            pages += 1
            data = (await client.get(base, params={"page": pages, "perPage": PAGE_SIZE})).json()
            listed.extend(data)
            if len(data) < PAGE_SIZE:
                break
        numbers = [
            p["number"] for p in listed[:limit] if p["status"] in ("success", "failure", "killed", "error")
        ]
        limiter = asyncio.Semaphore(at_once)

        async def one(number: int) -> None:
            async with limiter:
                (await client.get(f"{base}/{number}")).json()

        await asyncio.gather(*(one(n) for n in numbers))
        wall = time.perf_counter() - start
    return {"wall_s": wall, "requests": pages + len(numbers)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pipelines", type=int, default=500, help="history seeded and read (default 500)")
    parser.add_argument(
        "--repeats", type=int, default=5, help="runs of each, the median is reported (default 5)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    options = parser.parse_args(argv)
    child, info = start_child(["-m", "sandbox", "--api-only", "--history", str(options.pipelines)])
    try:
        url, token = info["url"], info["tokens"][info["admin_login"]]
        runs: dict[str, list[dict[str, Any]]] = {"ours": [], "bare_sequential": [], "bare_concurrent": []}
        for _ in range(options.repeats):
            runs["ours"].append(asyncio.run(ours(url, token, options.pipelines)))
            runs["bare_sequential"].append(asyncio.run(bare(url, token, options.pipelines, 1)))
            runs["bare_concurrent"].append(asyncio.run(bare(url, token, options.pipelines, CONCURRENCY)))
    finally:
        stop_child(child)
    wall = {name: statistics.median(r["wall_s"] for r in rs) for name, rs in runs.items()}
    last = runs["ours"][-1]
    figures = {
        "pipelines": options.pipelines,
        "repeats": options.repeats,
        "requests": {name: rs[-1]["requests"] for name, rs in runs.items()},
        "wall_s": {name: round(v, 3) for name, v in wall.items()},
        "ours_over_bare_concurrent": round(wall["ours"] / wall["bare_concurrent"], 2),
        "ours_over_bare_sequential": round(wall["ours"] / wall["bare_sequential"], 2),
        "answer_bytes": last["answer_bytes"],
        "structured_bytes": last["structured_bytes"],
        "text_bytes": last["text_bytes"],
        "read": last["read"],
        "summary": last["summary"],
    }
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"analyze_pipeline_history over {options.pipelines} seeded pipelines (median of {options.repeats})")
    print(f"  {'':28} {'requests':>9} {'wall s':>8}")
    for name in runs:
        print(f"  {name:28} {figures['requests'][name]:>9} {wall[name]:>8.3f}")
    print(
        f"  ours / bare {CONCURRENCY} at a time: {figures['ours_over_bare_concurrent']}; "
        f"ours / bare one at a time: {figures['ours_over_bare_sequential']}"
    )
    print(
        f"  answer: {figures['answer_bytes']:,} bytes ({figures['structured_bytes']:,} structured, "
        f"{figures['text_bytes']:,} text)"
    )
    print(f"  summary: {figures['summary']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
