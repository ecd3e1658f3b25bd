"""`woodpecker-ci-mcp sandbox`: a simulated Woodpecker on loopback and this server against it, as its admin."""

import argparse
import json
import os
from typing import TYPE_CHECKING

from entrypoints.cli.serve import announce, bind, say, serve_http, serve_stdio, url_of
from entrypoints.settings import PROGRAM, HttpSettings, StartupError, read_settings

if TYPE_CHECKING:
    from sandbox.server import Sandbox

SANDBOX_SERVER_NAME = "woodpecker-sandbox"


def run_sandbox(args: argparse.Namespace) -> int:
    if args.api_only:
        from sandbox.cli import main as sandbox_main

        port = str(args.sandbox_port or 0)
        history = ["--history", str(args.history)] if args.history else []
        return sandbox_main(
            ["--api-only", "--port", port, "--woodpecker-version", args.woodpecker_version, *history]
        )
    from sandbox.seed_history import MIN_COUNT

    if args.history and args.history < MIN_COUNT:
        say(f"{PROGRAM} sandbox: --history takes at least {MIN_COUNT} pipelines")
        return 2

    import secrets

    from ports.woodpecker import Credential
    from sandbox.server import running_sandbox

    with running_sandbox(args.woodpecker_version, history=args.history) as woodpecker:
        try:
            settings = read_settings(
                os.environ, woodpecker=(woodpecker.url, Credential(woodpecker.admin_token))
            )
        except StartupError as e:
            for text in e.lines:
                say(text)
            return 1
        announce(settings)
        woodpecker_line = (
            f"Simulated Woodpecker {woodpecker.version} at {woodpecker.url} "
            f"(seeded; you act as its admin, {woodpecker.admin_login})"
        )
        if args.stdio:
            say(f"{PROGRAM}: {woodpecker_line}")
            config = {
                "mcpServers": {SANDBOX_SERVER_NAME: {"command": PROGRAM, "args": ["sandbox", "--stdio"]}}
            }
            say(f"{PROGRAM}: serving MCP on stdio; a client starts it with: {json.dumps(config)}")
            return serve_stdio(settings)

        from entrypoints.container import build_container

        http = HttpSettings(host="127.0.0.1", port=args.sandbox_port or 0, bearer=secrets.token_urlsafe(32))
        sock = bind(http, "--port")
        if sock is None:
            return 1
        print(
            connection_details(woodpecker_line, url_of(sock), http.bearer or "", try_hint(woodpecker)),
            flush=True,
        )
        return serve_http(build_container(settings), http, sock)


def try_hint(woodpecker: "Sandbox") -> str:
    """What to try first, with a secret this sandbox holds (read from its seeded data, never named here)."""
    repo_id, name = woodpecker.repository_secret()
    delete = json.dumps({"scope": "repository", "repo_id": repo_id, "name": name})
    return (
        f"Try: list_repositories, then get_step_logs, then delete_secret with {delete} to see the dialog. "
        "Stop with Ctrl-C."
    )


def connection_details(woodpecker_line: str, url: str, bearer: str, hint: str) -> str:
    """What a newcomer pastes into a client, then `hint`. The bearer is made for this run and dies with it."""
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
            hint,
        ]
    )
