"""The team app's composition helpers: bind warning, Host defaults, principal key, Woodpecker probe and verifier."""

from collections.abc import Mapping
from typing import Any

import pytest

from entrypoints.http_app import (
    allowed_hosts_for,
    bind_warning,
    build_team_app,
    principal_key_for,
    woodpecker_probe,
    woodpecker_verifier,
)
from entrypoints.settings import read_http_settings
from ports.woodpecker import (
    ApiResponse,
    Credential,
    LogWindow,
    LogWindowRequest,
    NotConfigured,
    Request,
    Unauthorized,
    Unavailable,
)
from tests.fixtures.http import EchoApp

pytestmark = pytest.mark.anyio

BEARER = "b" * 40


class FakeGateway:
    """Answers every request with `outcome` (an ApiResponse, or an exception to raise); records calls."""

    def __init__(self, outcome: ApiResponse | Exception) -> None:
        self.outcome = outcome
        self.sent: list[tuple[Request, Credential | None]] = []

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        self.sent.append((call, credential))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        raise AssertionError("not used")


def http(env: Mapping[str, str], host: str = "127.0.0.1") -> Any:
    return read_http_settings({"WOODPECKER_MCP_BEARER": BEARER, **env}, host=host, port=0)


def test_binding_loopback_is_quiet_and_anything_wider_warns_about_tls() -> None:
    assert bind_warning("127.0.0.1") is None
    assert bind_warning("localhost") is None
    assert bind_warning("::1") is None
    everywhere = bind_warning("0.0.0.0")
    assert everywhere is not None and "all interfaces" in everywhere and "TLS" in everywhere
    lan = bind_warning("192.168.1.20")
    assert lan is not None and "192.168.1.20" in lan


def test_build_team_app_hands_the_warning_to_warn_once() -> None:
    said: list[str] = []
    build_team_app(http({}, host="0.0.0.0"), EchoApp(), principal_key=b"k" * 32, probes={}, warn=said.append)
    build_team_app(http({}), EchoApp(), principal_key=b"k" * 32, probes={}, warn=said.append)
    assert len(said) == 1 and "all interfaces" in said[0]
    assert BEARER not in said[0]


def test_without_a_host_list_loopback_and_the_bound_address_are_allowed() -> None:
    assert allowed_hosts_for(http({})) == ("127.0.0.1:*", "localhost:*", "[::1]:*")
    assert "10.1.2.3" in allowed_hosts_for(http({}, host="10.1.2.3"))
    assert "0.0.0.0" not in allowed_hosts_for(http({}, host="0.0.0.0"))
    assert allowed_hosts_for(http({"WOODPECKER_MCP_ALLOWED_HOSTS": "mcp.example.org"})) == (
        "mcp.example.org",
    )


def test_the_principal_key_follows_the_first_seal_key_and_is_random_without_one() -> None:
    first, second = b"1" * 32, b"2" * 32
    assert principal_key_for([first, second]) == principal_key_for([first])
    assert principal_key_for([first]) != principal_key_for([second, first])
    assert principal_key_for([]) != principal_key_for([])


async def test_the_verifier_asks_woodpecker_who_the_token_belongs_to() -> None:
    ok = FakeGateway(ApiResponse(200, {"login": "bob"}))
    assert await woodpecker_verifier(ok)(Credential("bob-token")) is True
    assert ok.sent == [(Request("GET", "/api/user"), Credential("bob-token"))]
    assert await woodpecker_verifier(FakeGateway(Unauthorized("no")))(Credential("x")) is False
    # Not configured: nothing to check against, nothing to reach; the tools explain the setup.
    assert await woodpecker_verifier(FakeGateway(NotConfigured("no")))(Credential("x")) is True
    with pytest.raises(Unavailable):
        await woodpecker_verifier(FakeGateway(Unavailable("down")))(Credential("x"))


async def test_the_readiness_probe_asks_woodpeckers_root_healthz_without_a_credential() -> None:
    up = FakeGateway(ApiResponse(204, None))
    assert await woodpecker_probe(up)() is True
    assert up.sent == [(Request("GET", "/healthz"), None)]
    with pytest.raises(Unavailable):
        await woodpecker_probe(FakeGateway(Unavailable("down")))()
