"""The whole team server in this process over real loopback sockets, against the sandbox, with real MCP clients."""

import json
import logging
import secrets
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest

from sandbox.server import Sandbox
from tests.fixtures.http import free_port, mcp_client, team_server
from tests.fixtures.mcp import initialize_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRET_ARGS = {"scope": "repository", "repo_id": 4, "name": "dotfiles_token"}
YES = types.ElicitResult(action="accept", content={"confirm": True})


async def say_yes(context: Any, params: Any) -> types.ElicitResult:
    return YES


def per_client_env(sandbox: Sandbox, audit: Path) -> dict[str, str]:
    # The server is also handed the admin's token: per-client mode must never use it.
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
    }


def shared_env(sandbox: Sandbox, audit: Path, bearer: str) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_BEARER": bearer,
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
    }


def logins(sandbox: Sandbox) -> set[str | None]:
    return {r.login for r in sandbox.requests}


CLIENT_LOGGERS = ("mcp.client", "httpx2", "httpcore2")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def assert_no_canary(canaries: list[str], *texts: str) -> None:
    for text in texts:
        for canary in canaries:
            assert canary not in text


async def test_per_client_mode_forwards_exactly_the_callers_token_and_never_the_servers(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with team_server(per_client_env(sandbox, tmp_path / "audit.jsonl")) as url:
        with anyio.fail_after(30):
            async with mcp_client(url, sandbox.user_token) as bob:
                me = await bob.call_tool("get_current_user", {})
            async with mcp_client(url, sandbox.user_token, mode="legacy") as bob_legacy:
                me_legacy = await bob_legacy.call_tool("get_current_user", {})
    assert me.structured_content["user"]["login"] == sandbox.user_login
    assert me_legacy.structured_content["user"]["login"] == sandbox.user_login
    assert logins(sandbox) == {sandbox.user_login}


async def test_no_bearer_or_a_wrong_one_is_401_before_any_mcp_processing_in_both_modes(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    envs = {
        "shared": shared_env(sandbox, tmp_path / "a.jsonl", bearer),
        "per-client": per_client_env(sandbox, tmp_path / "b.jsonl"),
    }
    for mode, env in envs.items():
        sandbox.clear_requests()
        async with team_server(env) as url, httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                missing = await client.post(url + "/mcp", headers=MCP_HEADERS, json=initialize_request())
                wrong = await client.post(
                    url + "/mcp",
                    headers={**MCP_HEADERS, "Authorization": "Bearer not-a-token-anyone-has"},
                    json=initialize_request(),
                )
        assert missing.status_code == 401, mode
        assert missing.headers["www-authenticate"].startswith('Bearer realm="woodpecker-ci-mcp"'), mode
        assert wrong.status_code == 401, mode
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"], mode
        assert "mcp-session-id" not in wrong.headers
        # Shared mode asks Woodpecker nothing; per-client asks only whether the token is one
        # (anonymously answered 401), and never falls back to the server's token.
        assert all(r.path == "/api/user" and r.login is None for r in sandbox.requests), mode
        if mode == "shared":
            assert sandbox.requests == []


async def test_shared_mode_acts_with_the_servers_token_for_a_client_with_the_secret(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    async with team_server(shared_env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        with anyio.fail_after(30):
            async with mcp_client(url, bearer) as client:
                me = await client.call_tool("get_current_user", {})
    assert me.structured_content["user"]["login"] == sandbox.admin_login
    assert logins(sandbox) == {sandbox.admin_login}


async def test_a_foreign_origin_is_403_and_a_bad_host_is_421_even_with_a_valid_bearer(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
    async with team_server(shared_env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                origin = await client.post(
                    url + "/mcp",
                    headers={**headers, "Origin": "https://evil.example"},
                    json=initialize_request(),
                )
                host = await client.post(
                    url + "/mcp", headers={**headers, "Host": "evil.example"}, json=initialize_request()
                )
                fine = await client.post(url + "/mcp", headers=headers, json=initialize_request())
    assert origin.status_code == 403
    assert host.status_code == 421
    assert fine.status_code == 200
    assert sandbox.requests == []


async def test_an_origin_wildcard_admits_any_origin_while_the_host_is_still_checked(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
    env = {**shared_env(sandbox, tmp_path / "audit.jsonl", bearer), "WOODPECKER_MCP_ALLOWED_ORIGINS": "*"}
    async with team_server(env) as url:
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                origin = await client.post(
                    url + "/mcp",
                    headers={**headers, "Origin": "https://elsewhere.example"},
                    json=initialize_request(),
                )
                host = await client.post(
                    url + "/mcp", headers={**headers, "Host": "evil.example"}, json=initialize_request()
                )
    assert origin.status_code == 200
    assert host.status_code == 421


async def test_client_as_token_is_refused_for_client_b_and_nothing_is_written(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with team_server(per_client_env(sandbox, tmp_path / "audit.jsonl")) as url:
        with anyio.fail_after(30):
            async with (
                mcp_client(url, sandbox.admin_token) as ada,
                mcp_client(url, sandbox.user_token) as bob,
            ):
                first = await ada.call_tool("delete_secret", SECRET_ARGS)
                token = first.structured_content["confirm_token"]
                stolen = await bob.call_tool("delete_secret", {**SECRET_ARGS, "confirm_token": token})
                writes_after_bob = sandbox.state_changing_requests()
                # Bob's attempt did not use up Ada's token: it is still hers to redeem, once.
                own = await ada.call_tool("delete_secret", {**SECRET_ARGS, "confirm_token": token})
    assert stolen.is_error
    assert stolen.structured_content["error"]["kind"] == "token_rejected"
    assert writes_after_bob == []
    assert not own.is_error
    assert [(r.method, r.login) for r in sandbox.state_changing_requests()] == [
        ("DELETE", sandbox.admin_login)
    ]


async def test_client_as_sealed_answer_is_no_answer_for_client_b_and_nothing_is_written(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with team_server(per_client_env(sandbox, tmp_path / "audit.jsonl")) as url:
        with anyio.fail_after(30):
            async with (
                mcp_client(url, sandbox.admin_token, elicitation_callback=say_yes) as ada,
                mcp_client(url, sandbox.user_token, elicitation_callback=say_yes) as bob,
            ):
                question = await ada.session.call_tool(
                    "delete_secret", SECRET_ARGS, allow_input_required=True
                )
                assert isinstance(question, types.InputRequiredResult)
                replayed = await bob.session.call_tool(
                    "delete_secret",
                    SECRET_ARGS,
                    input_responses={"confirm": YES},
                    request_state=question.request_state,
                    allow_input_required=True,
                )
    # Bob is asked afresh (his own question), not handed Ada's approval; no error, no write.
    assert isinstance(replayed, types.InputRequiredResult)
    assert replayed.request_state != question.request_state
    assert sandbox.state_changing_requests() == []


async def test_health_needs_no_credentials_and_readiness_follows_woodpecker(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    env = per_client_env(sandbox, tmp_path / "audit.jsonl")
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(30):
            async with team_server(env) as url:
                live = await client.get(url + "/healthz", headers={"Host": "10.0.0.7:8000"})
                ready = await client.get(url + "/readyz")
            sandbox.inject_fault("GET", "/healthz", 500, times=10)
            async with team_server(env) as url:
                unready = await client.get(url + "/readyz")
                still_live = await client.get(url + "/healthz")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()["status"]) == (200, "ready")
    assert (unready.status_code, unready.json()["checks"]) == (503, {"woodpecker": "failing"})
    assert still_live.status_code == 200
    for response in (live, ready, unready):
        assert sandbox.url not in response.text
        assert sandbox.url.rsplit(":", 1)[1] not in response.text


async def test_four_sessions_of_read_tools_run_without_a_single_error(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    errors: list[str] = []
    calls = [("list_repositories", {}), ("get_current_user", {}), ("get_repository", {"repo_id": 1})]

    async def session(index: int) -> None:
        async with mcp_client(url, bearer, mode="legacy" if index % 2 else "2026-07-28") as client:
            for i in range(25):
                name, args = calls[i % len(calls)]
                result = await client.call_tool(name, args)
                if result.is_error:
                    errors.append(f"{name}: {result.content}")

    async with team_server(shared_env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for index in range(4):
                    group.start_soon(session, index)
    assert errors == []
    assert len(sandbox.requests) >= 100


async def test_no_token_or_bearer_appears_in_logs_or_the_audit_trail(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    bearer = secrets.token_urlsafe(32)
    audit_shared, audit_per_client = tmp_path / "shared.jsonl", tmp_path / "per-client.jsonl"
    with anyio.fail_after(60):
        async with team_server(shared_env(sandbox, audit_shared, bearer)) as url:
            async with mcp_client(url, bearer) as client:
                first = await client.call_tool("delete_secret", SECRET_ARGS)
                token = first.structured_content["confirm_token"]
                await client.call_tool("delete_secret", {**SECRET_ARGS, "confirm_token": token})
                await client.call_tool("delete_secret", {**SECRET_ARGS, "confirm_token": token})
            async with mcp_client(url, "wrong" + bearer) as intruder:
                with pytest.raises(Exception):  # noqa: B017 - the SDK's error for a 401 is not part of this contract
                    await intruder.call_tool("get_current_user", {})
        async with team_server(per_client_env(sandbox, audit_per_client)) as url:
            async with mcp_client(url, sandbox.user_token, elicitation_callback=say_yes) as bob:
                await bob.call_tool(
                    "delete_registry", {"scope": "repository", "repo_id": 4, "address": "x.invalid"}
                )
                await bob.call_tool("get_current_user", {})
    out, err = capfd.readouterr()
    audit = audit_shared.read_text() + audit_per_client.read_text()
    # The clients run in this process too; what they log about their own requests is theirs.
    server_log = "\n".join(
        record.getMessage() for record in caplog.records if not record.name.startswith(CLIENT_LOGGERS)
    )
    assert [json.loads(line)["outcome"] for line in audit_shared.read_text().splitlines()] == [
        "token_issued",
        "approved",
        "executed",
        "token_rejected",
    ]
    assert_no_canary(
        [bearer, sandbox.admin_token, sandbox.user_token, token],
        server_log,
        out,
        err,
        audit,
    )


async def test_an_unreachable_token_store_means_an_error_result_no_write_and_not_ready(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bearer = secrets.token_urlsafe(32)
    env = {
        **shared_env(sandbox, tmp_path / "audit.jsonl", bearer),
        "WOODPECKER_MCP_TOKEN_STORE": f"redis://:store-password@127.0.0.1:{free_port()}/0",
    }
    async with team_server(env) as url:
        with anyio.fail_after(30):
            async with mcp_client(url, bearer) as client:
                first = await client.call_tool("delete_secret", SECRET_ARGS)
                forged = await client.call_tool("delete_secret", {**SECRET_ARGS, "confirm_token": "0" * 32})
            async with httpx.AsyncClient() as http:
                ready = await http.get(url + "/readyz")
    assert first.is_error and "confirm_token" not in (first.structured_content or {})
    assert (first.structured_content or {})["error"]["kind"] == "token_store_unavailable"
    assert forged.is_error
    assert (forged.structured_content or {})["error"]["kind"] == "token_store_unavailable"
    assert sandbox.state_changing_requests() == []
    assert (ready.status_code, ready.json()["checks"]["token_store"]) == (503, "failing")
    assert "store-password" not in ready.text
    assert "store-password" not in caplog.text
