"""A real stdio start: importing the command loads no server stack, a whole session never loads the HTTP gates, Redis or the sandbox, nor the Woodpecker client before a call needs it, and the token leaves the environment."""

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from tests.fixtures.mcp import initialize_request

pytestmark = pytest.mark.anyio

REPO_ROOT = Path(__file__).resolve().parents[2]
CANARY = "canary-token-4b1d"

# Records what importing the command costs (`--help` stops there), then runs a stdio session
# to its end and records everything loaded by then: a client spawns one such process per session.
PROBE = """
import json, os, sys
from entrypoints.cli import main
at_import = sorted(sys.modules)
code = main([])
report = {
    "at_import": at_import,
    "after_session": sorted(sys.modules),
    "token_in_environ": "WOODPECKER_TOKEN" in os.environ,
}
print(json.dumps(report), file=sys.stderr)
sys.exit(code)
"""

SESSION = [
    initialize_request("probe"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "list_repositories", "arguments": {}},
    },
]

# Ours, loaded only on the paths that use them (the SDK's own `mcp.server` package pulls in
# starlette and uvicorn whatever we do, so those are not ours to promise).
NEVER_ON_STDIO = (
    "redis",
    "sandbox",
    "adapters.http_auth",
    "adapters.http_health",
    "adapters.mcp_http",
    "adapters.redis_token_store",
    "entrypoints.http_app",
)
# The Woodpecker client loads at the first call that reaches Woodpecker (`FirstCallGateway`); this
# session has no URL, so none does, and initialize and tools/list never wait for httpx.
NOT_BEFORE_A_WOODPECKER_CALL = ("httpx", "httpcore", "adapters.woodpecker_httpx")
NOT_FOR_HELP = ("mcp", "dependency_injector", "httpx", "anyio", "starlette", "uvicorn", "adapters")


def loaded(modules: list[str], roots: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == root or m.startswith(root + ".") for root in roots)]


@pytest.mark.slow
async def test_a_stdio_session_loads_no_http_redis_or_sandbox_and_takes_the_token_out_of_its_environment() -> (
    None
):
    # A token but no URL: the session answers from the catalogue and with setup text.
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    environ["WOODPECKER_TOKEN"] = CANARY
    with anyio.fail_after(60):
        async with await anyio.open_process(
            [sys.executable, "-c", PROBE], env=environ, cwd=REPO_ROOT
        ) as process:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            answers = BufferedByteReceiveStream(process.stdout)
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in SESSION))
            # stdin stays open until the last answer is in: end of input ends the session.
            replies = [json.loads(await answers.receive_until(b"\n", 1 << 20)) for _ in range(3)]
            await process.stdin.aclose()
            chunks = [chunk async for chunk in process.stderr]
            await process.wait()
    stderr = b"".join(chunks).decode()
    assert process.returncode == 0, stderr[-2000:]
    assert [r.get("id") for r in replies] == [1, 2, 3]
    assert len(replies[1]["result"]["tools"]) == len(WOODPECKER_TOOLS)
    report = json.loads(stderr.splitlines()[-1])
    assert loaded(report["at_import"], NOT_FOR_HELP) == []
    assert loaded(report["after_session"], NEVER_ON_STDIO) == []
    assert loaded(report["after_session"], NOT_BEFORE_A_WOODPECKER_CALL) == []
    assert "entrypoints.container" in report["after_session"]  # the probe did run a session
    assert report["token_in_environ"] is False
    assert CANARY not in stderr and CANARY not in json.dumps(replies)
