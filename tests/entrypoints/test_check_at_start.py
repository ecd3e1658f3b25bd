"""WOODPECKER_MCP_CHECK_AT_START through the real console script: against a closed port it exits 1
before serving with one stderr line naming the variable, the URL, the cause and the fix; against
the sandbox it asks /version once, without a token, and serves (issue 36, item 4)."""

import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from sandbox.server import Sandbox
from tests.entrypoints.test_cli import CANARY, environment, script

pytestmark = pytest.mark.anyio

CHECK = "WOODPECKER_MCP_CHECK_AT_START"


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(args: list[str], **variables: str) -> subprocess.CompletedProcess[str]:
    # stdin at its end: a stdio server that does start ends at once, with code 0.
    return subprocess.run(
        [script(), *args],
        env=environment(WOODPECKER_TOKEN=CANARY, **variables),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args,extra",
    [([], {}), (["--transport", "http", "--port", "0"], {"WOODPECKER_MCP_BEARER": "b" * 40})],
    ids=["stdio", "http"],
)
def test_a_closed_port_stops_the_server_at_start_with_one_line_naming_url_cause_and_fix(
    args: list[str], extra: dict[str, str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    done = run(args, WOODPECKER_URL=url, **{CHECK: "true"}, **extra)
    assert done.returncode == 1, done.stderr
    assert time.monotonic() - started < 30
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    said = done.stderr
    assert said.startswith(f"woodpecker-ci-mcp: {CHECK}=true"), said
    assert f"at {url}:" in said and "connection was refused" in said, said
    assert "check the port in WOODPECKER_URL" in said and f"unset {CHECK}" in said, said
    assert "serving MCP" not in said and CANARY not in said


def test_without_the_check_the_same_url_starts_and_the_first_call_finds_out() -> None:
    done = run([], WOODPECKER_URL=f"http://127.0.0.1:{closed_port()}")
    assert done.returncode == 0, done.stderr
    assert CHECK not in done.stderr


def test_an_unresolvable_name_stops_the_server_naming_it() -> None:
    done = run([], WOODPECKER_URL="https://woodpecker.invalid", **{CHECK: "true"})
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "at https://woodpecker.invalid:443:" in done.stderr and "could not be resolved" in done.stderr


@pytest.mark.parametrize(
    "variables,named",
    [
        ({CHECK: "yes"}, f"{CHECK} must be exactly true or false"),
        ({CHECK: "true"}, "WOODPECKER_URL is not set"),
    ],
)
def test_a_check_that_cannot_apply_is_refused_like_any_setting(variables: dict[str, str], named: str) -> None:
    done = run([], **variables)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and named in done.stderr, done.stderr


@pytest.mark.slow
async def test_against_the_sandbox_it_asks_version_once_without_a_token_then_serves(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=script(),
        env=environment(WOODPECKER_URL=sandbox.url, WOODPECKER_TOKEN=sandbox.admin_token, **{CHECK: "true"}),
    )
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err, anyio.fail_after(60):
        async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
            asked = [(r.method, r.path, r.login) for r in sandbox.requests]
            user = await client.call_tool("get_current_user", {})
    assert asked == [("GET", "/version", None)]
    assert not user.is_error, user.content
    stderr = errlog.read_text()
    assert CHECK not in stderr and sandbox.admin_token not in stderr, stderr
