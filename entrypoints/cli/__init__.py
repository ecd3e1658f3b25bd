"""The `woodpecker-ci-mcp` command: stdio by default, Streamable HTTP, or the sandbox; exit 1 with one line per startup error.

`parser` (the options and `--help`), `serve` (stdio and HTTP), `sandbox` (the simulated
Woodpecker and this server against it). Only the standard library and the settings parser load
before the command is known: `--help` and `--version` must answer at once, and a client spawns
a stdio server per session, so the HTTP stack, the sandbox, Redis and the DI container are
imported on the paths that use them.
"""

from collections.abc import Sequence

from entrypoints.cli.parser import build_parser, check_usage
from entrypoints.cli.sandbox import SANDBOX_SERVER_NAME, connection_details, run_sandbox
from entrypoints.cli.serve import serve

__all__ = ["SANDBOX_SERVER_NAME", "build_parser", "connection_details", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_usage(parser, args)
    try:
        if args.command == "sandbox":
            return run_sandbox(args)
        return serve(args.transport, args.host, args.port)
    except KeyboardInterrupt:
        return 130
