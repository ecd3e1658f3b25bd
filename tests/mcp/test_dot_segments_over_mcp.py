"""An approved secret or registry delete never deletes anything else: over MCP (in process and over HTTP, both revisions), with the person accepting, a name of ".." sends nothing outside its own route.

The gateway reaches the sandbox over a real socket in both, so the paths checked are the ones
that crossed the wire; the client reaches the server on in-memory streams or over loopback
HTTP. The server as a stdio process is test_e2e's (docs/adr/0025).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from adapters.mcp_http import build_http_app
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# The call, and the route every request it makes must stay on.
DOT_DELETES: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("delete_secret", {"scope": "repository", "repo_id": 1, "name": ".."}, "/api/repos/1/secrets/"),
    ("delete_registry", {"scope": "repository", "repo_id": 1, "address": ".."}, "/api/repos/1/registries/"),
    ("delete_secret", {"scope": "organization", "org_id": 5, "name": ".."}, "/api/orgs/5/secrets/"),
)


async def _check_dot_deletes(client: Client, sandbox: Sandbox) -> None:
    for tool, args, route in DOT_DELETES:
        sandbox.reset()
        result = await client.call_tool(tool, dict(args))
        sent = [(r.method, r.path) for r in sandbox.requests]
        assert all(path.startswith(route) for _, path in sent), (tool, args, sent)
        assert result.is_error, (tool, args, result.content)
        text = str(getattr(result.content[0], "text", ""))
        assert "Deleted" not in text and ("name" in text or "address" in text), text
        with sandbox.state.lock:
            assert 1 in sandbox.world.repos and 5 in sandbox.world.orgs, (tool, args)


@asynccontextmanager
async def _client(sandbox: Sandbox, transport: str, mode: str, person: Person) -> AsyncIterator[Client]:
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        if transport == "memory":
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                yield client
            return
        async with serving(build_http_app(harness.server)) as base:
            async with Client(f"{base}/mcp", mode=mode, elicitation_callback=person) as client:
                yield client


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_dot_name_deletes_nothing_else_even_when_accepted(
    sandbox: Sandbox, transport: str, mode: str
) -> None:
    person = Person("accept")
    with anyio.fail_after(90):
        async with _client(sandbox, transport, mode, person) as client:
            await _check_dot_deletes(client, sandbox)
    assert person.questions == []  # refused before any question: there is nothing to approve
