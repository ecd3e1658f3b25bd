"""`python -m bench` (`make bench`): every benchmark against one sandbox on loopback in one run, printed as a table and written to bench/out/results.json.

Nothing here asserts a speed: the figures are for people, and each comes with the floor
measured in the same run, so a slower or busier machine changes both alike.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from bench import clean_install, http_load, measure, peer
from bench.table import render

OUT_DIR = Path(__file__).resolve().parent / "out"
SIZES = (10_000, 200_000, 1_000_000)
TAIL_SIZES = (40_000, 200_000)
SECTIONS = (
    "cold_start",
    "first_answer",
    "round_trip",
    "log_tail",
    "step_logs",
    "http",
    "guard",
    "log_window",
)


def machine() -> dict[str, Any]:
    """What the figures ran on, without anything that names the machine or its paths."""
    cpu = "unknown"
    memory_gib = None
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
        with open("/proc/meminfo") as info:
            total_kib = next(int(line.split()[1]) for line in info if line.startswith("MemTotal"))
            memory_gib = round(total_kib / 1024 / 1024, 1)
    except (OSError, StopIteration):
        pass

    def installed(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": cpu,
        "memory_gib": memory_gib,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.machine()}",
        "packages": {name: installed(name) for name in ("mcp", "httpx", "pydantic", "uvicorn", "starlette")},
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg")
        else None,
    }


def server_argv() -> list[str]:
    """The console script a client would spawn, or `python -m entrypoints` where it is not installed."""
    script = Path(sys.executable).with_name("woodpecker-ci-mcp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "entrypoints"]


def start_sandbox(env: dict[str, str]) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    child = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--api-only", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=measure.ROOT,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        child.kill()
        raise SystemExit("the sandbox did not start")
    info: dict[str, Any] = json.loads(line)
    return child, info


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: few repetitions, logs up to 200,000 lines"
    )
    parser.add_argument("--spawns", type=int, help="cold starts per server (default 7; quick 3)")
    parser.add_argument("--calls", type=int, help="read round trips in one session (default 300; quick 50)")
    parser.add_argument(
        "--http-calls", type=int, help="calls per HTTP session and round (default 100; quick 20)"
    )
    parser.add_argument(
        "--http-driver",
        choices=http_load.DRIVERS,
        default="wire",
        help="HTTP sessions as raw JSON-RPC POSTs written on the socket (wire, the default: the lightest load on the shared cores), "
        "the same POSTs through httpx (httpx, issue 16's fourth pass) or the SDK's Client (sdk, the passes before it)",
    )
    parser.add_argument("--guard-iterations", type=int, help="approvals per path (default 30; quick 5)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        help="run only these sections",
    )
    parser.add_argument(
        "--no-peer",
        action="store_true",
        help=f"do not run the peer server ({peer.PACKAGE} {peer.VERSION}, installed on demand into bench/.peer-venv)",
    )
    parser.add_argument(
        "--ours-from",
        choices=("auto", "clean", "dev"),
        default="auto",
        help="run our server from a clean install of this checkout (clean: bench/.ours-venv, no test extras, like the peer's) "
        "or from this development environment (dev); auto, the default: clean when the peer runs, dev otherwise. "
        "With clean, first_answer also times the development environment beside it",
    )
    parser.add_argument(
        "--stdio-client",
        choices=("wire", "sdk"),
        default="wire",
        help="round_trip's client: raw JSON-RPC lines on the pipes (wire, the default) or the MCP SDK's own Client (sdk)",
    )
    parser.add_argument("--tail-repeats", type=int, help="log tails per size and server (default 7; quick 3)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "results.json")
    args = parser.parse_args(argv)
    quick = args.quick
    args.spawns = args.spawns or (3 if quick else 7)
    args.calls = args.calls or (50 if quick else 300)
    args.http_calls = args.http_calls or (20 if quick else 100)
    args.guard_iterations = args.guard_iterations or (5 if quick else 30)
    args.tail_repeats = args.tail_repeats or (3 if quick else 7)
    args.sizes = SIZES[:2] if quick else SIZES
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    wanted = set(args.only or SECTIONS)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    results: dict[str, Any] = {
        "benchmark": "woodpecker-ci-mcp",
        "quick": args.quick,
        "machine": machine(),
        "server_command": Path(server_argv()[-1]).name,
    }
    the_peer: peer.Peer | str = "not run (--no-peer)" if args.no_peer else peer.ensure(_say)
    if isinstance(the_peer, str):
        _say(f"peer {peer.PACKAGE} {peer.VERSION}: {the_peer}")
        results["peer"] = {"package": peer.PACKAGE, "skipped": the_peer}
    else:
        results["peer"] = {"package": peer.PACKAGE, "version": the_peer.version, "python": "3.13"}
    dev_argv = server_argv()
    ours_argv = dev_argv
    ours_from = (
        args.ours_from if args.ours_from != "auto" else ("dev" if isinstance(the_peer, str) else "clean")
    )
    if ours_from == "clean":
        built = clean_install.ensure(_say)
        if isinstance(built, str):
            _say(f"our server runs from the development environment: {built}")
            ours_from = f"dev ({built})"
        else:
            ours_argv = built
    results["ours_from"] = ours_from
    results["stdio_client"] = args.stdio_client
    sandbox, info = start_sandbox(base_env)
    audit_file = measure.temporary_audit_file()
    bench = measure.Bench(
        sandbox=info,
        sandbox_pid=sandbox.pid,
        server_argv=ours_argv,
        dev_argv=dev_argv if ours_argv != dev_argv else None,
        base_env=base_env,
        audit_file=audit_file,
        log=_say,
        peer=None if isinstance(the_peer, str) else the_peer,
        peer_skipped=the_peer if isinstance(the_peer, str) else None,
    )
    started = time.perf_counter()
    sections: list[tuple[str, Callable[[], Any]]] = [
        ("cold_start", lambda: measure.cold_start(bench, args.spawns)),
        ("first_answer", lambda: measure.first_answer(bench, args.spawns)),
        ("round_trip", lambda: measure.round_trip(bench, args.calls, client=args.stdio_client)),
        ("log_tail", lambda: measure.log_tail(bench, TAIL_SIZES, args.tail_repeats)),
        ("step_logs", lambda: measure.step_logs(bench, args.sizes)),
        (
            "http",
            lambda: measure.http_throughput(
                bench, 16, args.http_calls, warmup=max(5, args.http_calls // 10), driver=args.http_driver
            ),
        ),
        ("guard", lambda: measure.guard(bench, args.guard_iterations)),
    ]
    try:
        for name, run in sections:
            if name in wanted:
                _say(f"{name} ...")
                section_started = time.perf_counter()
                results[name] = run()
                _say(f"{name}: {time.perf_counter() - section_started:.1f} s")
    finally:
        bench.close()
        sandbox.terminate()
        sandbox.wait(10)
        os.unlink(audit_file)
    if "log_window" in wanted:
        _say("log_window (bench/log_window.py) ...")
        results["log_window"] = measure.log_window(
            args.sizes,
            10_000 if args.quick else 200_000,
            # A smoke run must not overwrite the last full figures.
            OUT_DIR / ("log_window.quick.json" if args.quick else "log_window.json"),
        )
    results["wall_seconds"] = round(time.perf_counter() - started, 1)
    # Other work on the machine moves every figure; the load says how much there was.
    results["load_average_at_end"] = (
        [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    )
    print(render(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten to {args.out.name} in {args.out.parent.name}/")
    return 0


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
