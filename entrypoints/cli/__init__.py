"""The `woodpecker-ci-mcp` command: stdio by default, Streamable HTTP, or the sandbox; exit 1 with one line per startup error.

`parser` (the options and `--help`), `serve` (stdio and HTTP), `check` (WOODPECKER_MCP_CHECK_AT_START), `sandbox` (the simulated
Woodpecker and this server against it), `policy` (`policy check FILE`). Only the standard library and the settings' table of
variables load before the command is known: `--help` and `--version` must answer at once (a
gateway may start a process per request), so they import neither pydantic, the catalogue nor
the SDK (ADR 0052); the settings readers, the HTTP stack, the sandbox, Redis and the DI
container are imported on the paths that use them.
"""

import gc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from entrypoints.cli.parser import build_parser, check_usage

if TYPE_CHECKING:
    from entrypoints.cli.sandbox import SANDBOX_SERVER_NAME, connection_details

__all__ = ["SANDBOX_SERVER_NAME", "build_parser", "connection_details", "main"]


def __getattr__(name: str) -> Any:
    # The sandbox command's names load its module (and the settings readers) only when read.
    if name in ("SANDBOX_SERVER_NAME", "connection_details"):
        from entrypoints.cli import sandbox

        return getattr(sandbox, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_usage(parser, args)
    try:
        if args.command == "policy":
            from entrypoints.cli.policy import check

            return check(args.file)
        if args.command == "sandbox":
            from entrypoints.cli.sandbox import run_sandbox

            return run_sandbox(args)
        from entrypoints.collector import pause

        # No collection while the server is imported and built; serve() settles it (ADR 0053).
        was_enabled = pause()
        try:
            from entrypoints.cli.serve import serve

            return serve(args.transport, args.host, args.port)
        finally:
            if was_enabled:
                gc.enable()
    except KeyboardInterrupt:
        return 130
