"""OAuth mode against a real authorization server on loopback: real keys, JWKS over HTTP, real signatures."""

import logging
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from adapters.oauth_resource import IssuerKeys, JwtTokenVerifier, TokenRejected
from sandbox.server import Sandbox
from tests.fixtures.http import free_port, mcp_client, team_server
from tests.fixtures.oauth import SCOPE, TestAuthorizationServer, authorization_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

RESOURCE = "https://mcp.example.test/mcp"
METADATA_URL = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def oauth_env(sandbox: Sandbox, issuer: str, audit: Path) -> dict[str, str]:
    # The server is also handed the admin's token: oauth mode must never use it.
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_AUTH": "oauth",
        "WOODPECKER_MCP_RESOURCE_URL": RESOURCE,
        "WOODPECKER_MCP_OAUTH_ISSUERS": issuer,
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
    }


def challenge_params(header: str) -> dict[str, str]:
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


async def post_mcp(url: str, token: str | None) -> httpx.Response:
    headers = dict(MCP_HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(url + "/mcp", json=LIST_TOOLS, headers=headers)


async def test_a_valid_access_token_is_served_and_the_servers_own_token_is_never_used(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp:
        async with team_server(oauth_env(sandbox, idp.issuer, tmp_path / "audit.jsonl")) as url:
            with anyio.fail_after(60):
                async with mcp_client(url, idp.token(RESOURCE)) as alice:
                    tools = await alice.list_tools()
                    info = await alice.call_tool("get_server_info", {})
                async with mcp_client(url, idp.token(RESOURCE, key="ec"), mode="legacy") as alice_ec:
                    legacy_tools = await alice_ec.list_tools()
    assert len(tools.tools) >= 71 and len(legacy_tools.tools) == len(tools.tools)
    assert not info.is_error
    assert {r.login for r in sandbox.requests} <= {None}  # get_server_info needs no token


async def test_no_token_gets_a_bare_challenge_naming_the_metadata(sandbox: Sandbox, tmp_path: Path) -> None:
    async with authorization_server() as idp:
        async with team_server(oauth_env(sandbox, idp.issuer, tmp_path / "audit.jsonl")) as url:
            response = await post_mcp(url, None)
    assert response.status_code == 401
    params = challenge_params(response.headers["www-authenticate"])
    # RFC 6750 §3.1: a request without credentials gets no error code.
    assert params == {"resource_metadata": METADATA_URL, "scope": SCOPE}
    assert sandbox.requests == []


def refused_tokens(idp: TestAuthorizationServer) -> dict[str, tuple[str, int, str, str]]:
    """name -> (token, status, RFC 6750 error, what the description says)."""
    audience = "not issued for this resource"
    invalid = "invalid_token"
    return {
        "wrong audience": (idp.token("https://other.example.test/mcp"), 401, invalid, audience),
        "audience of the bare origin": (idp.token("https://mcp.example.test"), 401, invalid, audience),
        "wrong issuer": (idp.token(RESOURCE, iss=idp.base_url + "/realms/other"), 401, invalid, "issuer"),
        "expired": (idp.token(RESOURCE, exp=1_000_000_000, iat=None, nbf=None), 401, invalid, "expired"),
        "not yet valid": (
            idp.token(RESOURCE, nbf=4_000_000_000, exp=4_000_000_600),
            401,
            invalid,
            "not valid yet",
        ),
        "no expiry": (idp.token(RESOURCE, exp=None), 401, invalid, "`exp`"),
        "missing scope": (idp.token(RESOURCE, scope="openid profile"), 403, "insufficient_scope", "scope"),
        "alg none": (idp.unsigned_token(RESOURCE), 401, invalid, "algorithm"),
        "key not in the JWKS": (idp.rogue_token(RESOURCE, kid="rogue"), 401, invalid, "does not publish"),
        "another key under a published kid": (
            idp.rogue_token(RESOURCE, kid=idp.rsa_kid),
            401,
            invalid,
            "does not verify",
        ),
        "HMAC keyed with the public key": (
            idp.hmac_with_public_key_token(RESOURCE),
            401,
            invalid,
            "algorithm",
        ),
        "the encryption key's kid": (
            idp.rogue_token(RESOURCE, kid="enc-1"),
            401,
            invalid,
            "does not publish",
        ),
        "not a JWT": ("not-a-jwt", 401, invalid, "malformed"),
    }


async def test_every_bad_token_is_refused_with_its_rfc6750_error_and_nothing_reaches_woodpecker(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    answers: dict[str, Any] = {}
    async with authorization_server() as idp:
        cases = refused_tokens(idp)
        async with team_server(oauth_env(sandbox, idp.issuer, tmp_path / "audit.jsonl")) as url:
            for name, (token, *_) in cases.items():
                answers[name] = await post_mcp(url, token)
    for name, (_, status, error, reason) in cases.items():
        response = answers[name]
        assert response.status_code == status, name
        params = challenge_params(response.headers["www-authenticate"])
        assert params["error"] == error, name
        assert params["resource_metadata"] == METADATA_URL, name
        assert reason in params["error_description"], name
        assert response.json()["error"] == error, name
    assert sandbox.requests == []


async def test_an_issuer_whose_keys_cannot_be_read_gets_a_retryable_503_and_nothing_reaches_woodpecker(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp:
        token, issuer = idp.token(RESOURCE), idp.issuer
    # The authorization server is gone before our server ever read its keys.
    async with team_server(oauth_env(sandbox, issuer, tmp_path / "audit.jsonl")) as url:
        response = await post_mcp(url, token)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["error"] == "issuer_unavailable"
    assert sandbox.requests == []


async def test_the_protected_resource_metadata_is_what_rfc9728_and_the_mcp_profile_require(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp:
        async with team_server(oauth_env(sandbox, idp.issuer, tmp_path / "audit.jsonl")) as url:
            async with httpx.AsyncClient(timeout=30) as client:
                suffixed = await client.get(url + "/.well-known/oauth-protected-resource/mcp")
                root = await client.get(url + "/.well-known/oauth-protected-resource")
                post = await client.post(url + "/.well-known/oauth-protected-resource/mcp")
        issuer = idp.issuer
    for response in (suffixed, root):
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        document = response.json()
        # RFC 9728 §2: `resource` (required) is this server's resource identifier, the audience
        # tokens must carry; `authorization_servers` lists the issuers (MCP: at least one);
        # `bearer_methods_supported` is the header only (MCP forbids tokens in the query).
        assert document == {
            "resource": RESOURCE,
            "authorization_servers": [issuer],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "Woodpecker CI",
        }
    assert post.status_code == 405
    assert sandbox.requests == []


async def test_unknown_key_ids_reread_the_jwks_at_most_once_per_interval() -> None:
    clock = [1000.0]
    async with authorization_server() as idp:
        keys = IssuerKeys(idp.issuer, min_refresh_seconds=30, max_age_seconds=600, monotonic=lambda: clock[0])
        verifier = JwtTokenVerifier([keys], resource=RESOURCE, required_scopes=[SCOPE])
        assert (await verifier.check(idp.token(RESOURCE))).subject == "alice"
        for n in range(20):
            with pytest.raises(TokenRejected):
                await verifier.check(idp.rogue_token(RESOURCE, kid=f"made-up-{n}"))
        assert keys.fetches == 1
        clock[0] += 31  # the interval has passed: one more read for an unknown kid, then quiet again
        for n in range(5):
            with pytest.raises(TokenRejected):
                await verifier.check(idp.rogue_token(RESOURCE, kid=f"later-{n}"))
        assert keys.fetches == 2
        clock[0] += 600  # past the maximum age: a known kid re-reads too
        await verifier.check(idp.token(RESOURCE))
        assert keys.fetches == 3
        # Discovery happened once; later reads go straight to the JWKS.
        assert idp.requests.count("/.well-known/oauth-authorization-server/realms/team") == 1


async def test_in_oauth_mode_a_foreign_origin_or_host_is_refused_even_with_a_valid_token_and_health_needs_none(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp:
        async with team_server(oauth_env(sandbox, idp.issuer, tmp_path / "audit.jsonl")) as url:
            headers = {**MCP_HEADERS, "Authorization": f"Bearer {idp.token(RESOURCE)}"}
            async with httpx.AsyncClient(timeout=30) as client:
                foreign = await client.post(
                    url + "/mcp", json=LIST_TOOLS, headers={**headers, "Origin": "https://evil.test"}
                )
                wrong_host = await client.post(
                    url + "/mcp", json=LIST_TOOLS, headers={**headers, "Host": "evil.test"}
                )
                health = await client.get(url + "/healthz")
                ready = await client.get(url + "/readyz")
                # Every other route sits behind the same check: the metadata and the linking page.
                others = [
                    await client.get(url + path, headers=headers)
                    for path in ("/.well-known/oauth-protected-resource/mcp", "/link/" + "a" * 43)
                    for headers in ({"Host": "evil.test"}, {"Origin": "https://evil.test"})
                ]
    assert (foreign.status_code, wrong_host.status_code) == (403, 421)
    assert [r.status_code for r in others] == [421, 403, 421, 403]
    assert (health.status_code, ready.status_code) == (200, 200)
    assert [r.path for r in sandbox.requests] == ["/healthz"]


async def test_with_the_token_store_down_a_signed_in_call_is_a_retryable_503_and_no_secret_is_logged(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    env = {
        **oauth_env(sandbox, "", tmp_path / "audit.jsonl"),
        "WOODPECKER_MCP_TOKEN_STORE": f"redis://:store-password@127.0.0.1:{free_port()}/0",
    }
    async with authorization_server() as idp:
        token = idp.token(RESOURCE)
        async with team_server({**env, "WOODPECKER_MCP_OAUTH_ISSUERS": idp.issuer}) as url:
            response = await post_mcp(url, token)
            async with httpx.AsyncClient(timeout=30) as client:
                ready = await client.get(url + "/readyz")
    out, err = capfd.readouterr()
    assert (response.status_code, response.headers["retry-after"]) == (503, "5")
    assert response.json()["error"] == "token_store_unavailable"
    assert ready.status_code == 503
    for text in (caplog.text, out, err, response.text, ready.text):
        for secret in ("store-password", token, sandbox.admin_token):
            assert secret not in text
    assert [r.path for r in sandbox.requests] == ["/healthz"]  # the readiness probe's, nothing else
