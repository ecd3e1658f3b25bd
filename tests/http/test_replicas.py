"""Two server processes sharing a seal key ring and one real Redis behave as one server; other keys do not."""

import base64
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import redis

from sandbox.server import Sandbox
from tests.fixtures.http import ServerProcess, mcp_client, stop_together, team_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.redis]

YES = types.ElicitResult(action="accept", content={"confirm": True})
SECRET = {"scope": "repository", "repo_id": 4, "name": "dotfiles_token"}
REGISTRY = {"scope": "repository", "repo_id": 4, "address": "registry.example.org:5000"}
OTHER_SECRET = {"scope": "repository", "repo_id": 1, "name": "docker_password"}
OTHER_REGISTRY = {"scope": "repository", "repo_id": 1, "address": "ghcr.io/acme"}


async def say_yes(context: Any, params: Any) -> types.ElicitResult:
    return YES


def new_key() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


class Fleet:
    def __init__(self, sandbox: Sandbox, redis_url: str, workdir: Path) -> None:
        self.bearer = secrets.token_urlsafe(32)
        self.keys = new_key()
        self.sandbox = sandbox
        self.redis_url = redis_url
        self.workdir = workdir

    def environ(self, name: str, keys: str) -> dict[str, str]:
        return {
            "WOODPECKER_URL": self.sandbox.url,
            "WOODPECKER_TOKEN": self.sandbox.admin_token,
            "WOODPECKER_MCP_BEARER": self.bearer,
            "WOODPECKER_MCP_SEAL_KEYS": keys,
            "WOODPECKER_MCP_TOKEN_STORE": self.redis_url,
            "WOODPECKER_MCP_AUDIT_FILE": str(self.workdir / f"{name}.audit.jsonl"),
        }


@pytest.fixture
def fleet(
    sandbox: Sandbox, redis_url: str, tmp_path: Path
) -> Iterator[tuple[Fleet, ServerProcess, ServerProcess]]:
    f = Fleet(sandbox, redis_url, tmp_path)
    # Same key ring; the second key only opens (rotation), the first seals.
    ring = f"{f.keys},{new_key()}"
    replicas = [ServerProcess(f.environ(name, ring), tmp_path, name) for name in ("one", "two")]
    try:
        for replica in replicas:
            replica.wait_until_live()
        yield f, replicas[0], replicas[1]
    finally:
        stop_together(*replicas)


async def answer_yes(client: Any, args: dict[str, Any], state: str | None) -> Any:
    """The 2026-07-28 retry of delete_secret carrying a yes and `state`."""
    return await client.session.call_tool(
        "delete_secret",
        args,
        input_responses={"confirm": YES},
        request_state=state,
        allow_input_required=True,
    )


def deletes(sandbox: Sandbox) -> list[str]:
    return [r.path for r in sandbox.state_changing_requests()]


async def test_a_fleet_sharing_keys_and_redis_acts_as_one_server_and_other_keys_get_a_fresh_question(
    fleet: tuple[Fleet, ServerProcess, ServerProcess], sandbox: Sandbox, redis_url: str
) -> None:
    f, one, two = fleet
    with anyio.fail_after(60):
        async with (
            mcp_client(one.url, f.bearer, elicitation_callback=say_yes) as asks_one,
            mcp_client(two.url, f.bearer, elicitation_callback=say_yes) as asks_two,
            mcp_client(one.url, f.bearer) as plain_one,
            mcp_client(two.url, f.bearer) as plain_two,
        ):
            # A 2026-07-28 question from replica one, answered at replica two: executes, once.
            question = await asks_one.session.call_tool("delete_secret", SECRET, allow_input_required=True)
            assert isinstance(question, types.InputRequiredResult)
            answered = await answer_yes(asks_two, SECRET, question.request_state)
            assert isinstance(answered, types.CallToolResult) and not answered.is_error
            assert deletes(sandbox) == ["/api/repos/4/secrets/dotfiles_token"]
            # The same state and yes again, at either replica: acted on once, so a fresh question.
            for replica in (asks_one, asks_two):
                replayed = await answer_yes(replica, SECRET, question.request_state)
                assert isinstance(replayed, types.InputRequiredResult), replayed
                assert replayed.request_state != question.request_state
            assert deletes(sandbox) == ["/api/repos/4/secrets/dotfiles_token"]

            # A token issued by one is redeemed once at two, then refused back at one.
            issued = await plain_one.call_tool("delete_registry", REGISTRY)
            token = issued.structured_content["confirm_token"]
            redeemed = await plain_two.call_tool("delete_registry", {**REGISTRY, "confirm_token": token})
            again = await plain_one.call_tool("delete_registry", {**REGISTRY, "confirm_token": token})
            assert not redeemed.is_error
            assert again.is_error and again.structured_content["error"]["kind"] == "token_rejected"
            assert len(deletes(sandbox)) == 2

            # Material for a replica with other keys (same Redis, same bearer).
            question = await asks_one.session.call_tool(
                "delete_secret", OTHER_SECRET, allow_input_required=True
            )
            issued = await plain_one.call_tool("delete_registry", OTHER_REGISTRY)
            other_token = issued.structured_content["confirm_token"]

        # That replica is a stranger: a fresh question and a refused token, and no write.
        async with (
            team_server(f.environ("stranger", new_key())) as stranger_url,
            mcp_client(stranger_url, f.bearer, elicitation_callback=say_yes) as stranger,
            mcp_client(stranger_url, f.bearer) as stranger_plain,
        ):
            fresh = await answer_yes(stranger, OTHER_SECRET, question.request_state)
            refused = await stranger_plain.call_tool(
                "delete_registry", {**OTHER_REGISTRY, "confirm_token": other_token}
            )
        assert isinstance(fresh, types.InputRequiredResult)
        assert refused.is_error and refused.structured_content["error"]["kind"] == "token_rejected"
        assert len(deletes(sandbox)) == 2

    # Canary: nothing either process wrote, nor Redis, holds a bearer, a Woodpecker token or a confirm token.
    stop_together(one, two)
    written = one.output() + two.output()
    written += "".join(p.read_text() for p in f.workdir.glob("*.audit.jsonl"))
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for key in raw.scan_iter(match="woodpecker-mcp:*"):
            value = raw.get(key) if raw.type(key) == "string" else raw.zrange(key, 0, -1)
            written += f"{key}={value}\n"
    finally:
        raw.close()
    assert "token_issued" in written and "executed" in written
    for canary in (f.bearer, sandbox.admin_token, sandbox.user_token, token, other_token):
        assert canary not in written
