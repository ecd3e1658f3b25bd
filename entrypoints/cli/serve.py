"""Serving MCP: read the settings (every refusal at once), say what is missing, then stdio or Streamable HTTP until a signal."""

import os
import sys
from typing import TYPE_CHECKING, Any

from entrypoints.settings import (
    PROGRAM,
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


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def announce(settings: Settings, http: HttpSettings | None = None) -> None:
    """The warnings, then what is not set yet: the server starts all the same."""
    from domain.config import ELICITATION_OFF_LINE

    for warning in (*settings.warnings, *(http.warnings if http is not None else ())):
        say(warning)
    if not settings.elicitation:
        say(ELICITATION_OFF_LINE)
    elif http is None and settings.approval_page != "auto":
        say(
            f"{PROGRAM}: WOODPECKER_MCP_APPROVAL_PAGE={settings.approval_page}: "
            + (
                "every guarded call asks on a page in this machine's browser, dialogs or not"
                if settings.approval_page == "always"
                else "no approval page; a client without a dialog gets the two-call token"
            )
        )
    if settings.policy is not None:
        from domain.woodpecker.catalogue import WOODPECKER_TOOLS
        from entrypoints.settings.policy import policy_lines

        # The effective policy, one line per rule: what the operator set is what they read (ADR 0079).
        for text in policy_lines(settings.policy, WOODPECKER_TOOLS, settings.tools):
            say(text)
    # Per-client and oauth HTTP need no token of the server's own: each person brings one.
    needs_token = http is None or http.auth == "shared"
    missing = [
        name
        for name, value in (("WOODPECKER_URL", settings.woodpecker_url), ("WOODPECKER_TOKEN", settings.token))
        if value is None and (name != "WOODPECKER_TOKEN" or needs_token)
    ]
    if missing:
        verb, pronoun = ("is", "it is") if len(missing) == 1 else ("are", "they are")
        say(
            f"{PROGRAM}: {' and '.join(missing)} {verb} not set; the tools are listed, and calls answer "
            f"with setup instructions until {pronoun}"
        )


def _read(transport: str, host: str | None, port: int | None) -> tuple[Settings, HttpSettings | None] | None:
    """Both readers run even when the first refuses, so one start reports every bad variable."""
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
    if settings is not None and not problems:
        from entrypoints.settings.model import four_eyes_problems
        from entrypoints.settings.variables import line

        problems.extend(line(p) for p in four_eyes_problems(settings, http))
    if problems or settings is None:
        for text in problems:
            say(text)
        return None
    return settings, http


def serve(transport: str, host: str | None, port: int | None) -> int:
    read = _read(transport, host, port)
    if read is None:
        return 1
    settings, http = read
    if settings.check_at_start:
        from entrypoints.cli.check import unreachable_line

        # Before the warnings: a server that does not start says one line, as a refused setting does.
        refused = unreachable_line(settings)
        if refused is not None:
            say(refused)
            return 1
    announce(settings, http)
    from entrypoints.container import build_container

    if http is None:
        if _on_a_terminal():
            from entrypoints.cli.parser import program_version

            # Run by hand, a silent stdio server looks hung; a client's pipe is no terminal.
            say(
                f"{program_version()}: an MCP server on stdio, waiting for a client on stdin (Ctrl-C to stop); "
                "see README.md for a client's settings"
            )
        return serve_stdio(settings)
    sock = bind(http, "--port / WOODPECKER_MCP_PORT or --host / WOODPECKER_MCP_HOST")
    if sock is None:
        return 1
    return serve_http(build_container(settings, per_client=http.auth != "shared", http=http), http, sock)


def _on_a_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


# The exit code after SIGTERM, as a shell reports a process the signal ended (128 + 15), the way
# Ctrl-C ends with 130 (entrypoints/cli/__init__.py).
SIGTERM_EXIT = 143


def serve_stdio(settings: Settings) -> int:
    import anyio

    from entrypoints.container import build_container

    stopped = anyio.run(_stdio_until_sigterm, build_container(settings))
    return SIGTERM_EXIT if stopped else 0


async def _stdio_until_sigterm(container: "Container") -> bool:
    """Serve stdio until the client disconnects (False) or SIGTERM comes (True). SIGTERM stops as
    Ctrl-C does: it cancels everything under way, so an open question's audit line is closed
    (`abandoned`), and nothing is sent afterwards (the default action would end the process with
    a lone `asked` line)."""
    import signal

    import anyio

    from entrypoints.container import run_stdio

    if sys.platform == "win32":  # no signal receivers there: the default action
        await run_stdio(container)
        return False
    stopped = False
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async with anyio.create_task_group() as group:

            async def stop_on_sigterm() -> None:
                nonlocal stopped
                async for _ in signals:
                    stopped = True
                    group.cancel_scope.cancel()
                    return

            group.start_soon(stop_on_sigterm)
            await run_stdio(container)
            group.cancel_scope.cancel()
    return stopped


def serve_http(container: "Container", http: HttpSettings, sock: "socket.socket") -> int:
    import anyio

    return anyio.run(_serve_http, container, http, sock, backend_options=_loop_options())


def _loop_options() -> dict[str, Any]:
    """uvloop under the HTTP server where it is installed (a dependency on Linux and macOS): the
    event loop is much of the CPU per call under many sessions (docs/adr/0021)."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}


def bind(http: HttpSettings, other: str) -> "socket.socket | None":
    """The listening socket, or None after one line saying so and what to choose instead (`other`)."""
    try:
        return _listen(http.host, http.port)
    except OSError as e:
        say(
            f"{PROGRAM}: cannot listen on {http.host}:{http.port} ({e.strerror or e}); choose another {other}"
        )
        return None


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


def url_of(sock: "socket.socket") -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


async def _serve_http(container: "Container", http: HttpSettings, sock: "socket.socket") -> int:
    from entrypoints.collector import settle
    from entrypoints.container import build_http_app, opened

    async with opened(container):
        app = await build_http_app(container, http, say)
        server = _uvicorn_server(app, http)
        settle()
        say(f"{PROGRAM}: serving MCP (Streamable HTTP) at {url_of(sock)}; stop with Ctrl-C")
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

    return _Server(
        uvicorn_config(
            app,
            host=http.host,
            port=http.port,
            header_timeout=http.header_timeout_seconds,
            max_connections=http.max_connections,
        )
    )


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
