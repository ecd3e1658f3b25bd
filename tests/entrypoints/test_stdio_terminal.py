"""A stdio server run by hand on a terminal says in one stderr line what it is and that it waits
for a client; started by a client (stdin a pipe) it says nothing. The real console script, its
stdin on a pseudo-terminal's follower (issue 36, item 4)."""

import json
import os
import select
import subprocess
import sys
from importlib.metadata import version
from typing import IO

import pytest

from entrypoints.settings import DISTRIBUTION
from sandbox.server import Sandbox
from tests.entrypoints.test_cli import environment, script
from tests.fixtures.mcp import initialize_request

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

WAITING = "an MCP server on stdio, waiting for a client on stdin (Ctrl-C to stop); see README.md"
INITIALIZE = initialize_request("tty")
# The terminal becomes the server's controlling terminal, as a shell's is: what is typed on it,
# Ctrl-C included, reaches the server as it would a person's (a new session, then TIOCSCTTY).
ON_ITS_TERMINAL = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def configured(sandbox: Sandbox) -> dict[str, str]:
    # Everything set and nothing to warn about: any line on stderr is one this start chose to print.
    return environment(WOODPECKER_URL=sandbox.url, WOODPECKER_TOKEN=sandbox.admin_token)


def line_of(stream: IO[bytes], seconds: float = 30) -> bytes:
    ready, _, _ = select.select([stream], [], [], seconds)
    assert ready, "no line within the time"
    return stream.readline()


def test_on_a_terminal_it_says_what_it_is_serves_what_is_typed_and_stops_at_ctrl_c(sandbox: Sandbox) -> None:
    leader, follower = os.openpty()
    command = [sys.executable, "-c", ON_ITS_TERMINAL, script()]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    try:
        with subprocess.Popen(command, stdin=follower, env=configured(sandbox), **pipes) as process:
            os.close(follower)
            assert process.stdout is not None and process.stderr is not None
            try:
                said = line_of(process.stderr).decode()
                # Still an MCP server: a line typed on the terminal is read as JSON-RPC.
                os.write(leader, (json.dumps(INITIALIZE) + "\n").encode())
                answer = json.loads(line_of(process.stdout))
                os.write(leader, b"\x03")  # Ctrl-C, as typed
                process.wait(timeout=20)
                rest = process.stderr.read().decode()
            finally:
                if process.poll() is None:
                    process.kill()
    finally:
        os.close(leader)
    assert said == f"woodpecker-ci-mcp {version(DISTRIBUTION)}: {WAITING} for a client's settings\n", said
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"], answer
    assert process.returncode == 130, rest  # stopped by Ctrl-C, not killed after the timeout
    assert rest == "" and sandbox.admin_token not in said


def test_started_by_a_client_on_a_pipe_it_says_nothing_on_stderr(sandbox: Sandbox) -> None:
    done = subprocess.run(
        [script()],
        input=json.dumps(INITIALIZE) + "\n",
        env=configured(sandbox),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1, done.stdout
    assert done.stderr == ""
