"""Every fingerprint that leaves a server process is keyed: processes sharing the seal keys agree,
other keys give unrelated values, and guessing a secret value from a requestState or a Redis key
no longer works offline (issue 25, item 4; docs/adr/0046)."""

import base64
import hashlib
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
import redis
from mcp import Client, StdioServerParameters

from domain.guard.fingerprint import fingerprint
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.guarded import token_binding
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.redis]

NEW_VALUE = {"scope": "repository", "repo_id": 4, "name": "dotfiles_token", "value": "Summer2024!"}
# The five-word dictionary: the value above is one of them.
GUESSES = ("password", "Winter2023!", "hunter2", "Summer2024!", "letmein")
STORE_PREFIX = "woodpecker-mcp:token:"


def new_ring() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


@asynccontextmanager
async def server(sandbox: Sandbox, redis_url: str, ring: str, *, asks: bool) -> AsyncIterator[Client]:
    """The real server as its own stdio process, with this seal key ring and the shared Redis."""
    command, args = server_command()
    env = server_environment(
        sandbox.url,
        sandbox.admin_token,
        WOODPECKER_MCP_SEAL_KEYS=ring,
        WOODPECKER_MCP_TOKEN_STORE=redis_url,
    )
    params = StdioServerParameters(command=command, args=args, env=env)
    callback = Person() if asks else None
    async with Client(params, mode="2026-07-28", elicitation_callback=callback) as client:
        yield client


def payload_of(question: Any) -> dict[str, Any]:
    """What anyone holding the requestState reads: its payload is signed, not encrypted."""
    assert isinstance(question, types.InputRequiredResult), question
    assert question.request_state is not None
    encoded = question.request_state.split(".")[0]
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    return data


def entry_keys(raw: "redis.Redis[str]") -> set[str]:
    """The pending tokens' keys (the indexes are sorted sets; used nonces live under `used:`)."""
    keys = raw.scan_iter(match=STORE_PREFIX + "*")
    return {k for k in keys if ":used:" not in k and raw.type(k) == "string"}


def unkeyed(guess: str, principal: str | None) -> str:
    """The fingerprint a reader could compute for a guessed value without any key."""
    return fingerprint(WOODPECKER_TOOLS.get("update_secret"), {**NEW_VALUE, "value": guess}, principal)


async def test_processes_sharing_the_seal_keys_agree_on_keyed_fingerprints_and_others_do_not(
    sandbox: Sandbox, redis_url: str
) -> None:
    ring, other = new_ring(), new_ring()
    raw: redis.Redis[str] = redis.Redis.from_url(redis_url, decode_responses=True)
    states: list[dict[str, Any]] = []
    stored: list[set[str]] = []
    try:
        with anyio.fail_after(120):
            for keys in (ring, ring, other):
                before = entry_keys(raw)
                async with (
                    server(sandbox, redis_url, keys, asks=True) as asking,
                    server(sandbox, redis_url, keys, asks=False) as plain,
                ):
                    states.append(
                        payload_of(
                            await asking.session.call_tool(
                                "update_secret", NEW_VALUE, allow_input_required=True
                            )
                        )
                    )
                    issued = await plain.call_tool("update_secret", NEW_VALUE)
                    assert (
                        issued.structured_content is not None and "confirm_token" in issued.structured_content
                    )
                stored.append(entry_keys(raw) - before)
    finally:
        raw.close()
    assert sandbox.state_changing_requests() == []

    same, again, stranger = states
    # Same keys, same call: the same fingerprint, and the second token replaced the first under the same key.
    assert same["fp"] == again["fp"] and same["principal"] is None
    assert len(stored[0]) == 1 and stored[1] == set()
    # Other keys, same call: another fingerprint and another Redis key.
    assert stranger["fp"] != same["fp"]
    assert len(stored[2]) == 1 and stored[2] != stored[0]

    # The offline dictionary of the issue: recompute the fingerprint for each guess, as the
    # requestState and the Redis key used to be computed, and compare.
    keys_seen = stored[0] | stored[2]
    for guess in GUESSES:
        for state in (same, stranger):
            plain_fp = unkeyed(guess, state["principal"])
            assert plain_fp != state["fp"], guess
            binding = token_binding(plain_fp, frozenset(state["reasons"]))
            hashed = hashlib.sha256(binding.encode()).hexdigest()
            assert not any(key.endswith(hashed) for key in keys_seen), guess
