"""A stdio server stopped by a signal while a question is open (issue 34, item 4): SIGTERM ends it as
Ctrl-C does, with the open question's audit line closed (`abandoned`), exit code 143 (as SIGINT's 130),
and nothing sent to Woodpecker. The real console module in a subprocess, spoken to over its pipes."""

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox.server import Sandbox
from tests.fixtures.mcp import server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


async def _until(stdout: BufferedByteReceiveStream, method: str) -> dict[str, Any]:
    """The next message from the server that is the request `method`."""
    while True:
        message = json.loads(await stdout.receive_until(b"\n", 1 << 20))
        if message.get("method") == method:
            return dict(message)


async def _ask_and_stop(process: Process, how: signal.Signals) -> None:
    assert process.stdin is not None and process.stdout is not None
    stdout = BufferedByteReceiveStream(process.stdout)
    await process.stdin.send(
        _line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {"form": {}}},
                    "clientInfo": {"name": "signals", "version": "0"},
                },
            }
        )
    )
    json.loads(await stdout.receive_until(b"\n", 1 << 20))  # the initialize result
    await process.stdin.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await process.stdin.send(
        _line(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "approve_pipeline", "arguments": {"repo_id": 1, "number": 11}},
            }
        )
    )
    await _until(stdout, "elicitation/create")  # the question is open: the person reads it
    process.send_signal(how)
    await process.wait()


@pytest.mark.parametrize(("how", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
async def test_a_signal_during_an_open_question_closes_its_audit_line_and_sends_nothing(
    sandbox: Sandbox, tmp_path: Path, how: signal.Signals, code: int
) -> None:
    audit = tmp_path / "audit.jsonl"
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_AUDIT_FILE=str(audit))
    process = await anyio.open_process([command, *args], env=env)
    try:
        with anyio.fail_after(60):
            await _ask_and_stop(process, how)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()
    outcomes = [json.loads(line)["outcome"] for line in audit.read_text().splitlines()]
    assert outcomes == ["asked", "abandoned"]
    assert process.returncode == code
    assert sandbox.state_changing_requests() == []
