"""A page of the server's own loopback origin may call it; everything else an attacker could send is still refused.

The whole team server (both Origin checks: the gate in front and the SDK's behind it) over a
real loopback socket, against the sandbox. Host and Origin are set by hand, as a browser (or
an attacker's page after DNS rebinding) would send them (docs/adr/0050).
"""

import secrets
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import initialize_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def env(sandbox: Sandbox, audit: Path, bearer: str) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_BEARER": bearer,
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
    }


def same_origin_cases(port: int) -> list[tuple[str, str]]:
    """(Host, Origin) pairs a page of the server's own loopback origin sends."""
    return [
        (f"localhost:{port}", f"http://localhost:{port}"),
        (f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"),
        (f"[::1]:{port}", f"http://[::1]:{port}"),
        (f"LocalHost:{port}", f"http://localhost:{port}"),
        (f"localhost:{port}", f"HTTP://LOCALHOST:{port}"),
    ]


def refused_cases(port: int) -> list[tuple[str, str, int]]:
    """(Host, Origin, status): each differs from a same-origin pair in one part an attacker controls."""
    return [
        # Another port on loopback: another program's page (a dev server, a local web app).
        (f"localhost:{port}", f"http://localhost:{port + 1}", 403),
        (f"localhost:{port}", "http://localhost", 403),
        (f"localhost:{port}", f"http://127.0.0.1:{port}", 403),
        # Another scheme, a path, a trailing dot: not the same origin, nothing is normalised.
        (f"localhost:{port}", f"https://localhost:{port}", 403),
        (f"localhost:{port}", f"http://localhost:{port}/", 403),
        (f"localhost:{port}", f"http://localhost.:{port}", 403),
        (f"localhost:{port}", f"http://localhost.evil.example:{port}", 403),
        (f"localhost:{port}", "null", 403),
        # DNS rebinding itself: the attacker's name is in both headers, and the Host is not ours.
        (f"localhost.evil.example:{port}", f"http://localhost.evil.example:{port}", 421),
        (f"evil.example:{port}", f"http://evil.example:{port}", 421),
        (f"localhost.:{port}", f"http://localhost.:{port}", 421),
        # A name under .localhost can be asked of DNS by some resolvers: not taken as loopback here.
        (f"app.localhost:{port}", f"http://app.localhost:{port}", 421),
    ]


async def test_a_same_origin_request_to_an_allowed_loopback_host_is_served_by_both_checks(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    async with team_server(env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        port = urlsplit(url).port
        assert port is not None
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
        statuses = {}
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                for host, origin in same_origin_cases(port):
                    answer = await client.post(
                        url + "/mcp",
                        headers={**headers, "Host": host, "Origin": origin},
                        json=initialize_request(),
                    )
                    statuses[host, origin] = (
                        answer.status_code,
                        answer.json().get("result", {}).get("protocolVersion"),
                    )
    assert statuses == {case: (200, "2025-11-25") for case in same_origin_cases(port)}


async def test_every_near_miss_of_the_same_origin_is_still_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    bearer = secrets.token_urlsafe(32)
    async with team_server(env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        port = urlsplit(url).port
        assert port is not None
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
        got = {}
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                for host, origin, _status in refused_cases(port):
                    answer = await client.post(
                        url + "/mcp",
                        headers={**headers, "Host": host, "Origin": origin},
                        json=initialize_request(),
                    )
                    got[host, origin] = answer.status_code
                # Two Origin headers, one of them the same origin: refused, as any repeated Origin is.
                twice = await client.post(
                    url + "/mcp",
                    headers=httpx.Headers(
                        [
                            *headers.items(),
                            ("Host", f"localhost:{port}"),
                            ("Origin", f"http://localhost:{port}"),
                            ("Origin", "https://evil.example"),
                        ]
                    ),
                    json=initialize_request(),
                )
    assert got == {(host, origin): status for host, origin, status in refused_cases(port)}
    assert twice.status_code == 403
    assert sandbox.requests == []


async def test_the_sdk_client_calls_a_tool_from_the_servers_own_origin_in_both_protocol_eras(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    async with team_server(env(sandbox, tmp_path / "audit.jsonl", bearer)) as url:
        port = urlsplit(url).port
        logins = []
        with anyio.fail_after(30):
            for mode in ("2026-07-28", "legacy"):
                # The client connects to 127.0.0.1:PORT, so its Host is that; the Origin matches it.
                async with mcp_client(
                    url, bearer, mode=mode, headers={"Origin": f"http://127.0.0.1:{port}"}
                ) as client:
                    me = await client.call_tool("get_current_user", {})
                logins.append(me.structured_content["user"]["login"])
    assert logins == [sandbox.admin_login, sandbox.admin_login]


async def test_the_same_origin_of_a_loopback_host_that_is_not_allowed_is_still_421(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    only_public = {
        **env(sandbox, tmp_path / "audit.jsonl", bearer),
        "WOODPECKER_MCP_ALLOWED_HOSTS": "mcp.example.com",
    }
    async with team_server(only_public) as url:
        port = urlsplit(url).port
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(30):
                loopback = await client.post(
                    url + "/mcp",
                    headers={**headers, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
                    json=initialize_request(),
                )
                public = await client.post(
                    url + "/mcp",
                    headers={**headers, "Host": "mcp.example.com", "Origin": "http://mcp.example.com"},
                    json=initialize_request(),
                )
    # Only loopback names count: the same origin of an allowed public name is still a listed-only Origin.
    assert (loopback.status_code, public.status_code) == (421, 403)
