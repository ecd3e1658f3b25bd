"""The `woodpecker-ci-mcp` command: stdio by default, Streamable HTTP, or the sandbox; exit 1 with one line per startup error.

Only the standard library and the settings parser load before the command is known: `--help`
and `--version` must answer at once, and a client spawns a stdio server per session, so the
HTTP stack, the sandbox, Redis and the DI container are imported on the paths that use them.
"""

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from entrypoints.settings import (
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    DISTRIBUTION,
    PROGRAM,
    VARIABLES,
    HttpSettings,
    Settings,
    StartupError,
    read_http_settings,
    read_settings,
)

if TYPE_CHECKING:
    import socket

    import uvicorn

    from entrypoints.container import Container

SANDBOX_SERVER_NAME = "woodpecker-sandbox"

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
        ]
    )


def _version() -> str:
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
        print(_version())
        parser.exit()


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError("must be a number between 0 and 65535 (0 picks a free port)")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description=_DESCRIPTION,
        epilog=_environment_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    commands = parser.add_subparsers(dest="command", metavar="{sandbox}")
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
        "--stdio",
        action="store_true",
        help="serve MCP on stdio instead, for a client that starts the server; details go to stderr",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "sandbox":
        if args.transport != "stdio" or args.host is not None or args.port is not None:
            parser.error(
                "--transport, --host and --port before `sandbox` do not apply to it; "
                "its options follow the word sandbox"
            )
        if args.api_only and args.stdio:
            parser.error("choose one of --api-only and --stdio")
        if args.stdio and args.sandbox_port is not None:
            parser.error("--port does not apply to `sandbox --stdio`: the client talks to it on stdin/stdout")
        try:
            return _sandbox(args)
        except KeyboardInterrupt:
            return 130
    if args.transport == "stdio" and (args.host is not None or args.port is not None):
        parser.error("--host and --port apply to --transport http only")
    try:
        return _serve(args.transport, args.host, args.port)
    except KeyboardInterrupt:
        return 130


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _announce(settings: Settings, http: HttpSettings | None = None) -> None:
    from domain.config import ELICITATION_OFF_LINE

    for warning in (*settings.warnings, *(http.warnings if http is not None else ())):
        _say(warning)
    if not settings.elicitation:
        _say(ELICITATION_OFF_LINE)
    # Per-client and oauth HTTP need no token of the server's own: each person brings one.
    needs_token = http is None or http.auth == "shared"
    missing = [
        name
        for name, value in (("WOODPECKER_URL", settings.woodpecker_url), ("WOODPECKER_TOKEN", settings.token))
        if value is None and (name != "WOODPECKER_TOKEN" or needs_token)
    ]
    if missing:
        verb, pronoun = ("is", "it is") if len(missing) == 1 else ("are", "they are")
        _say(
            f"{PROGRAM}: {' and '.join(missing)} {verb} not set; the tools are listed, and calls answer "
            f"with setup instructions until {pronoun}"
        )


def _serve(transport: str, host: str | None, port: int | None) -> int:
    # Both readers run even when the first refuses, so one start reports every bad variable.
    problems: list[str] = []
    settings: Settings | None = None
    http: HttpSettings | None = None
    try:
        settings = read_settings(os.environ)
    except StartupError as e:
        problems.extend(e.lines)
    if transport == "http":
        try:
            http = read_http_settings(
                os.environ, host=host, port=port, server_token=settings.token if settings else None
            )
        except StartupError as e:
            problems.extend(e.lines)
    if problems or settings is None:
        for text in problems:
            _say(text)
        return 1
    _announce(settings, http)

    import anyio

    from entrypoints.container import build_container, run_stdio

    if http is None:
        anyio.run(run_stdio, build_container(settings))
        return 0
    try:
        sock = _listen(http.host, http.port)
    except OSError as e:
        _say(
            f"{PROGRAM}: cannot listen on {http.host}:{http.port} ({e.strerror or e}); choose another "
            "--port / WOODPECKER_MCP_PORT or --host / WOODPECKER_MCP_HOST"
        )
        return 1
    container = build_container(settings, per_client=http.auth != "shared", http=http)
    return anyio.run(_serve_http, container, http, sock, backend_options=_loop_options())


def _loop_options() -> dict[str, Any]:
    """uvloop under the HTTP server where it is installed (a dependency on Linux and macOS): the
    event loop is much of the CPU per call under many sessions (docs/adr/0021)."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def _listen(host: str, port: int) -> "socket.socket":
    """Bind before serving, so a busy port is one clear line and port 0 is known at once."""
    import socket

    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _url_of(sock: "socket.socket") -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


async def _serve_http(container: "Container", http: HttpSettings, sock: "socket.socket") -> int:
    from entrypoints.container import build_http_app, opened

    async with opened(container):
        app = await build_http_app(container, http, _say)
        server = _uvicorn_server(app, http)
        _say(f"{PROGRAM}: serving MCP (Streamable HTTP) at {_url_of(sock)}; stop with Ctrl-C")
        await _run_until_signal(server, sock)
    return 0


def _uvicorn_server(app: Any, http: HttpSettings) -> "uvicorn.Server":
    import contextlib
    from collections.abc import Iterator

    import uvicorn

    from entrypoints.http_app import uvicorn_config

    class _Server(uvicorn.Server):
        # uvicorn would install its own SIGINT/SIGTERM handlers and re-raise the signal on the
        # way out; _run_until_signal handles both so the command ends with exit code 0.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return _Server(uvicorn_config(app, host=http.host, port=http.port))


async def _run_until_signal(server: "uvicorn.Server", sock: "socket.socket") -> None:
    import signal

    import anyio

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                # A second Ctrl-C stops at once instead of waiting for open streams to end.
                if server.should_exit:
                    server.force_exit = True
                server.should_exit = True

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal)
            await server.serve(sockets=[sock])
            group.cancel_scope.cancel()
    finally:
        sock.close()


# ------------------------------------------------------------------------------------- sandbox


def _sandbox(args: argparse.Namespace) -> int:
    if args.api_only:
        from sandbox.cli import main as sandbox_main

        return sandbox_main(
            [
                "--api-only",
                "--port",
                str(args.sandbox_port or 0),
                "--woodpecker-version",
                args.woodpecker_version,
            ]
        )

    import secrets

    from ports.woodpecker import Credential
    from sandbox.server import running_sandbox

    with running_sandbox(args.woodpecker_version) as woodpecker:
        try:
            settings = read_settings(
                os.environ, woodpecker=(woodpecker.url, Credential(woodpecker.admin_token))
            )
        except StartupError as e:
            for text in e.lines:
                _say(text)
            return 1
        _announce(settings)
        woodpecker_line = (
            f"Simulated Woodpecker {woodpecker.version} at {woodpecker.url} "
            f"(seeded; you act as its admin, {woodpecker.admin_login})"
        )
        import anyio

        from entrypoints.container import build_container, run_stdio

        if args.stdio:
            _say(f"{PROGRAM}: {woodpecker_line}")
            config = {
                "mcpServers": {SANDBOX_SERVER_NAME: {"command": PROGRAM, "args": ["sandbox", "--stdio"]}}
            }
            _say(f"{PROGRAM}: serving MCP on stdio; a client starts it with: {json.dumps(config)}")
            anyio.run(run_stdio, build_container(settings))
            return 0

        http = HttpSettings(host="127.0.0.1", port=args.sandbox_port or 0, bearer=secrets.token_urlsafe(32))
        try:
            sock = _listen(http.host, http.port)
        except OSError as e:
            _say(
                f"{PROGRAM}: cannot listen on {http.host}:{http.port} ({e.strerror or e}); choose another --port"
            )
            return 1
        url = _url_of(sock)
        print(connection_details(woodpecker_line, url, http.bearer or ""), flush=True)
        return anyio.run(_serve_http, build_container(settings), http, sock, backend_options=_loop_options())


def connection_details(woodpecker_line: str, url: str, bearer: str) -> str:
    """What a newcomer pastes into a client. The bearer is made for this run and dies with it."""
    snippet = {
        "mcpServers": {
            SANDBOX_SERVER_NAME: {
                "type": "http",
                "url": url,
                "headers": {"Authorization": f"Bearer {bearer}"},
            }
        }
    }
    return "\n".join(
        [
            woodpecker_line,
            f"MCP server (Streamable HTTP): {url}",
            f"Bearer (valid until this command stops): {bearer}",
            "",
            "Claude Code:",
            f'  claude mcp add --transport http {SANDBOX_SERVER_NAME} {url} --header "Authorization: Bearer {bearer}"',
            "",
            "Any client that takes a JSON server list (mcpServers):",
            f"  {json.dumps(snippet)}",
            "",
            "Try: list_repositories, then get_step_logs, then delete_secret to see the dialog. Stop with Ctrl-C.",
        ]
    )
