"""A real stdio session spends the idle time after `initialize` loading what its first call needs: by
the end of a session that only listed the tools, httpx, the Woodpecker adapter and (for an https
root) its TLS context are loaded without any request to Woodpecker, and a later first call is
answered by the warmed gateway; a plain-HTTP root builds no TLS context at all (ADR 0052). Without WOODPECKER_URL no call can reach Woodpecker and nothing is warmed (see
test_startup_imports)."""

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox.server import Sandbox
from tests.fixtures.mcp import initialize_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]

# Serves one stdio session, then waits for a warm-up thread still running and reports what it loaded.
PROBE = """
import json, sys, threading
from entrypoints.cli import main
code = main([])
warming = [t for t in threading.enumerate() if t.name == "gateway-warm-up"]
for t in warming:
    t.join(60)
from adapters.woodpecker_httpx import transport
report = {
    "modules": sorted(sys.modules),
    "tls_contexts_built": transport._verifying_context.cache_info().misses,
    "tls_context_reused": transport._verifying_context.cache_info().hits,
}
print(json.dumps(report), file=sys.stderr)
sys.exit(code)
"""

HANDSHAKE = [
    initialize_request("probe"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


async def session(
    sandbox: Sandbox, messages: list[dict[str, object]], answers: int, url: str | None = None
) -> tuple[list, dict]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    environ["WOODPECKER_URL"] = url or sandbox.url
    environ["WOODPECKER_TOKEN"] = sandbox.admin_token
    with anyio.fail_after(90):
        async with await anyio.open_process(
            [sys.executable, "-c", PROBE], env=environ, cwd=REPO_ROOT
        ) as process:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            lines = BufferedByteReceiveStream(process.stdout)
            replies = []
            for message in messages:
                await process.stdin.send(json.dumps(message).encode() + b"\n")
                if "id" in message:
                    replies.append(json.loads(await lines.receive_until(b"\n", 1 << 20)))
            await process.stdin.aclose()
            chunks = [chunk async for chunk in process.stderr]
            await process.wait()
    stderr = b"".join(chunks).decode()
    assert process.returncode == 0, stderr[-2000:]
    assert len(replies) == answers
    return replies, json.loads(stderr.splitlines()[-1])


async def test_a_session_that_only_lists_the_tools_has_warmed_the_woodpecker_client_without_calling_it(
    sandbox: Sandbox,
) -> None:
    # An https root (never reached: no call is made) has a TLS context to build as well.
    replies, report = await session(sandbox, HANDSHAKE, 2, url="https://127.0.0.1:9")
    assert "tools" in replies[1]["result"]
    assert "adapters.woodpecker_httpx" in report["modules"] and "httpx" in report["modules"]
    assert report["tls_contexts_built"] == 1 and report["tls_context_reused"] == 0
    assert sandbox.requests == []  # warming loads code; it never reaches Woodpecker


async def test_the_first_call_after_the_warm_up_is_answered_by_woodpecker(sandbox: Sandbox) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get_current_user", "arguments": {}},
    }
    replies, report = await session(sandbox, [*HANDSHAKE, call], 3)
    result = replies[2]["result"]
    assert result.get("isError") is not True, result
    assert sandbox.admin_login in json.dumps(result["structuredContent"])
    assert "adapters.woodpecker_httpx" in report["modules"]
    # The sandbox is plain HTTP: neither the warm-up nor the call built a TLS context.
    assert report["tls_contexts_built"] == 0
