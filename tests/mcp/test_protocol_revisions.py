"""Every protocol revision docs/clients.md says the server serves: the SDK's client speaks each; a
guarded tool asks the person on each revision that has elicitation (2025-06-18 on: Codex, Gemini CLI
and mcp-hub speak 2025-06-18) and takes the two-call token on the two that have none.

The SDK's client offers its newest handshake revision; for the older ones the test makes it offer
that revision instead, so the server negotiates it as it would with a client that knows no newer.
"""

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.client.session
import pytest
from mcp import Client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from adapters.mcp_http import build_http_app
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, harness_for, serving
from tests.mcp.guarded_calls import check_guarded_call

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
REVISIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
# The revisions before elicitation/create existed.
NO_ELICITATION = ("2024-11-05", "2025-03-26")


TRANSPORTS = ("in-process", "http")


@asynccontextmanager
async def connected(sandbox: Sandbox, revision: str, person: Person, transport: str) -> AsyncIterator[Client]:
    """The SDK's client, declaring elicitation, speaking `revision` to the real server, in this process or
    over Streamable HTTP on a loopback socket."""
    mode = revision if revision in MODERN_PROTOCOL_VERSIONS else "legacy"
    async with harness_for(sandbox, sandbox.admin_token) as harness, AsyncExitStack() as stack:
        target: Any = harness.server
        if transport == "http":
            target = f"{await stack.enter_async_context(serving(build_http_app(harness.server)))}/mcp"
        async with Client(target, mode=mode, elicitation_callback=person) as client:
            assert client.protocol_version == revision
            yield client


@pytest.fixture
def offer(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make the SDK's client offer `revision` in its handshake (it offers its newest otherwise)."""

    def offering(revision: str) -> None:
        if revision not in MODERN_PROTOCOL_VERSIONS:
            monkeypatch.setattr(mcp.client.session, "LATEST_HANDSHAKE_VERSION", revision)

    return offering


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("revision", [r for r in REVISIONS if r not in NO_ELICITATION])
async def test_each_revision_with_elicitation_shows_the_dialog(
    sandbox: Sandbox, revision: str, transport: str, offer: Callable[[str], None]
) -> None:
    offer(revision)
    person = Person()
    with anyio.fail_after(60):
        async with connected(sandbox, revision, person, transport) as client:
            # One yes (the write is made) and one no (nothing is), each after one question.
            await check_guarded_call(client, person, sandbox, "pause_queue", ("accept", "decline"))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("revision", NO_ELICITATION)
async def test_a_revision_without_elicitation_takes_the_token_and_the_second_call_acts(
    sandbox: Sandbox, revision: str, transport: str, offer: Callable[[str], None]
) -> None:
    # A client of these revisions that declares elicitation anyway cannot be sent a question: the
    # call must not end as an unanswered dialog (nothing done, no way on) but offer the token.
    offer(revision)
    person = Person()
    with anyio.fail_after(60):
        async with connected(sandbox, revision, person, transport) as client:
            first = await client.call_tool("pause_queue", {})
            assert first.structured_content is not None and sandbox.state_changing_requests() == []
            token = first.structured_content["confirm_token"]
            second = await client.call_tool("pause_queue", {"confirm_token": token})
    assert person.questions == []
    assert not second.is_error and len(sandbox.state_changing_requests()) == 1


@pytest.mark.parametrize("page", ["README.md", "docs/clients.md", "docs/http.md"])
def test_the_docs_list_exactly_the_revisions_served(page: str) -> None:
    # The paragraph that says which revisions the server serves names all of them, and no other.
    text = (ROOT / page).read_text(encoding="utf-8")
    (paragraph,) = [p for p in text.split("\n\n") if "protocol revision" in p and "serve" in p]
    assert sorted(set(re.findall(r"\b20\d\d-\d\d-\d\d\b", paragraph))) == sorted(REVISIONS)
