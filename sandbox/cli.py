"""Command line: `python -m sandbox --api-only` serves the simulated Woodpecker and prints one JSON line about it."""

import argparse
import json
import signal
import sys
from types import FrameType

from sandbox.app import SandboxApp, SandboxState
from sandbox.seed_history import MIN_COUNT
from sandbox.server import Sandbox, bind_loopback, make_server, new_tokens
from sandbox.world import VERSIONS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox",
        description="A simulated Woodpecker CI server on 127.0.0.1, seeded with sample data.",
    )
    parser.add_argument(
        "--api-only",
        action="store_true",
        help="serve only the simulated Woodpecker API (the product's CLI adds the MCP server)",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 or absent: a free port)")
    parser.add_argument(
        "--woodpecker-version",
        choices=sorted(VERSIONS),
        default="3.17",
        help="which Woodpecker to imitate; 3.11 answers 500 after performing a repository move",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="N",
        help=f"also seed N pipelines of history (flaky restarts, a red branch) in the bench repository, at least {MIN_COUNT}",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.api_only:
        print(
            "this entry point serves only the simulated API: pass --api-only "
            "(`woodpecker-ci-mcp sandbox` runs the MCP server against it)",
            file=sys.stderr,
        )
        return 2
    if not 0 <= args.port <= 65535:
        print(f"invalid port {args.port}", file=sys.stderr)
        return 2
    if args.history and args.history < MIN_COUNT:
        print(f"--history takes at least {MIN_COUNT} pipelines", file=sys.stderr)
        return 2
    try:
        sock = bind_loopback(args.port)
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    state = SandboxState(version=args.woodpecker_version, tokens=new_tokens(), history=args.history)
    server = make_server(SandboxApp(state))
    sandbox = Sandbox(url=f"http://127.0.0.1:{sock.getsockname()[1]}", state=state)
    # The socket already listens, so a client reading this line can connect straight away.
    print(json.dumps(sandbox.info()), flush=True)

    def _quietly(signum: int, frame: FrameType | None) -> None:
        # uvicorn re-raises the signal it stopped on once it has shut down; end normally instead.
        return None

    signal.signal(signal.SIGTERM, _quietly)
    signal.signal(signal.SIGINT, _quietly)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
