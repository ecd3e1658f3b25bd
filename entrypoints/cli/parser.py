"""The command line: options, the `sandbox` command, `--help` with every variable, and `--version` looked up only when asked."""

import argparse
from collections.abc import Sequence
from typing import Any

from entrypoints.settings import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT, DISTRIBUTION, PROGRAM, VARIABLES

_DESCRIPTION = """\
An MCP server for Woodpecker CI that asks a person before anything irreversible
or privilege-widening happens. Without a command it serves MCP on stdio."""


def _environment_table() -> str:
    width = max(len(name) for name, _, _ in VARIABLES)
    rows = [f"  {name:<{width}}  {default:<9} {meaning}" for name, default, meaning in VARIABLES]
    return "\n".join(
        [
            "environment variables (booleans are the exact string `true`; ELICITATION is `true` or `false`):",
            f"  {'name':<{width}}  {'default':<9} meaning",
            *rows,
            "",
            "Without WOODPECKER_URL or WOODPECKER_TOKEN the server still starts and lists its tools;",
            "calls then answer with setup instructions. A bad value stops the server with exit code 1",
            "and one line naming the variable and the fix (the value itself is never printed).",
            "",
            "examples:",
            f"  WOODPECKER_URL=https://ci.example.com WOODPECKER_TOKEN=... {PROGRAM}",
            f"  WOODPECKER_MCP_BEARER=$(openssl rand -base64 32) {PROGRAM} --transport http",
            f"  {PROGRAM} sandbox                 # try every tool against a simulated Woodpecker",
            f"  {PROGRAM} sandbox --api-only --port 0",
            f"  {PROGRAM} policy check policy.toml   # check a WOODPECKER_MCP_POLICY file, print its rules",
        ]
    )


def program_version() -> str:
    """The program and its version, as `--version` prints them and a stdio server on a terminal says."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PROGRAM} {version(DISTRIBUTION)}"
    except PackageNotFoundError:
        return f"{PROGRAM} (not installed as a package)"


class _VersionAction(argparse.Action):
    # argparse's own "version" action needs the string up front; this looks it up only when asked.
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(program_version())
        parser.exit()


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError("must be a number between 0 and 65535 (0 picks a free port)")
    return int(text)


def _add_serving_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default): for a client that starts the server; http: Streamable HTTP at /mcp",
    )
    parser.add_argument(
        "--host",
        help=f"with --transport http: address to bind (default WOODPECKER_MCP_HOST or {DEFAULT_HTTP_HOST})",
    )
    parser.add_argument(
        "--port",
        type=_port,
        help=f"with --transport http: port, 0 for a free one (default WOODPECKER_MCP_PORT or {DEFAULT_HTTP_PORT})",
    )


def _add_sandbox_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    sandbox = commands.add_parser(
        "sandbox",
        help="try it against a simulated Woodpecker seeded with sample data",
        description=(
            "Start a simulated Woodpecker on loopback and this server against it (as its admin), "
            "over Streamable HTTP on a free port, and print what to paste into an MCP client. "
            "Stays up until Ctrl-C."
        ),
        epilog=(
            "The tool filters and ELICITATION apply as usual. WOODPECKER_URL, WOODPECKER_TOKEN and the "
            "WOODPECKER_MCP_HOST/PORT/AUTH/BEARER variables are replaced by the sandbox's own: it binds "
            "127.0.0.1 and prints a bearer made for this run."
        ),
    )
    sandbox.add_argument(
        "--api-only",
        action="store_true",
        help="start only the simulated Woodpecker and print one JSON line with its url and tokens",
    )
    sandbox.add_argument(
        "--port",
        type=_port,
        # Its own dest: a subcommand's default would otherwise overwrite a --port given before
        # the word sandbox, which would then be ignored without a word.
        dest="sandbox_port",
        metavar="PORT",
        help="port of the MCP server (with --api-only: of the simulated Woodpecker)",
    )
    sandbox.add_argument(
        "--woodpecker-version",
        choices=("3.17", "3.11"),
        default="3.17",
        help="the Woodpecker release to imitate (default 3.17; 3.11 answers 500 after a repository move)",
    )
    sandbox.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="N",
        help="also seed N pipelines of history (flaky restarts, a red branch) in bench/logs, for analyze_pipeline_history",
    )
    sandbox.add_argument(
        "--stdio",
        action="store_true",
        help="serve MCP on stdio instead, for a client that starts the server; details go to stderr",
    )


def _add_policy_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    policy = commands.add_parser(
        "policy",
        help="check a policy file (WOODPECKER_MCP_POLICY) and print its effective rules",
        description="The policy file's commands (docs/policy.md).",
    )
    actions = policy.add_subparsers(dest="policy_command", metavar="{check}", required=True)
    check = actions.add_parser(
        "check",
        help="check FILE as a start would and print its rules, one a line",
        description=(
            "Check a policy file exactly as the server checks WOODPECKER_MCP_POLICY at start, and print "
            "its effective rules, one a line. Exit code 0 when the server would use it, 1 when it would "
            "stop the server (each problem one line on stderr, naming the line and the fix)."
        ),
    )
    check.add_argument("file", metavar="FILE", help="the policy file (TOML)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description=_DESCRIPTION,
        epilog=_environment_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_serving_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="{sandbox,policy}")
    _add_sandbox_command(commands)
    _add_policy_command(commands)
    return parser


def check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Combinations the parser alone cannot refuse; each is a usage error (exit 2) naming the fix."""
    if args.command == "policy":
        if args.transport != "stdio" or args.host is not None or args.port is not None:
            parser.error("--transport, --host and --port do not apply to `policy`")
    elif args.command == "sandbox":
        if args.transport != "stdio" or args.host is not None or args.port is not None:
            parser.error(
                "--transport, --host and --port before `sandbox` do not apply to it; "
                "its options follow the word sandbox"
            )
        if args.api_only and args.stdio:
            parser.error("choose one of --api-only and --stdio")
        if args.stdio and args.sandbox_port is not None:
            parser.error("--port does not apply to `sandbox --stdio`: the client talks to it on stdin/stdout")
    elif args.transport == "stdio" and (args.host is not None or args.port is not None):
        parser.error("--host and --port apply to --transport http only")
