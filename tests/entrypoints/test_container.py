"""The composition root: every provider resolvable, settings reaching the parts they govern, fakes swapped in by override."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from dependency_injector import errors, providers
from mcp import Client

from adapters.memory_token_store import InMemoryTokenStore
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import SETUP
from entrypoints.container import Container, build_container, build_http_app, opened, resolved
from entrypoints.settings import read_http_settings, read_settings
from ports.woodpecker import Credential, Request
from tests.fakes.audit import RecordingAudit
from tests.fakes.clock import FakeClock
from tests.fakes.randomness import FakeRandomness
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.gateway import json_response, private_ca, serving_tls
from tests.fixtures.http import serve_asgi
from tests.fixtures.mcp import initialize_request

pytestmark = pytest.mark.anyio

TOKEN = "container-test-token"


def container_with_fakes(environ: dict[str, str]) -> tuple[Container, FakeWoodpecker, RecordingAudit]:
    environ = {"WOODPECKER_URL": "https://ci.example.com", "WOODPECKER_TOKEN": TOKEN, **environ}
    container = build_container(read_settings(environ))
    woodpecker = FakeWoodpecker({"/api/repos/5": {"id": 5, "full_name": "acme/api"}})
    audit = RecordingAudit()
    clock = FakeClock()
    container.gateway.override(providers.Object(woodpecker))
    container.clock.override(providers.Object(clock))
    container.randomness.override(providers.Object(FakeRandomness()))
    container.token_store.override(providers.Object(InMemoryTokenStore(now=clock.now)))
    container.audit.override(providers.Object(audit))
    return container, woodpecker, audit


def test_every_dependency_is_provided_once_settings_are() -> None:
    Container(settings=read_settings({})).check_dependencies()


def test_a_container_without_settings_is_reported_as_incomplete() -> None:
    with pytest.raises(errors.Error, match="settings"):
        Container().check_dependencies()


READS = sum(t.is_read for t in WOODPECKER_TOOLS)


@pytest.mark.parametrize(
    ("environ", "count", "filtered"),
    [
        ({"WOODPECKER_READ_ONLY": "true"}, READS, ("delete_repository", {"repo_id": 5})),
        ({"WOODPECKER_ALLOW_TOOLS": "essential"}, 12, ("get_current_user", {})),
        # get_repository and get_repository_permissions
        (
            {"WOODPECKER_DENY_TOOLS": "get_repo*"},
            len(WOODPECKER_TOOLS) - 2,
            ("get_repository", {"repo_id": 5}),
        ),
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_server_lists_exactly_the_tools_the_settings_selected(
    environ: dict[str, str], count: int, filtered: tuple[str, dict[str, Any]], mode: str
) -> None:
    # A filtered tool is never registered: absent from tools/list, and unknown to tools/call.
    container, woodpecker, _ = container_with_fakes(environ)
    server = await resolved(container.mcp_server())
    name, arguments = filtered
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            called = await client.call_tool(name, arguments)
    assert len(names) == count
    assert name not in names
    assert called.is_error and "Unknown tool" in called.content[0].text
    assert woodpecker.calls == []


async def test_elicitation_false_takes_the_token_path_through_the_wired_store_audit_and_gateway() -> None:
    container, woodpecker, audit = container_with_fakes({"ELICITATION": "false"})
    server = await resolved(container.mcp_server())
    person_asked: list[str] = []

    async def person(ctx: Any, params: Any) -> Any:
        person_asked.append(params.message)
        raise AssertionError("with ELICITATION=false nobody is asked")

    with anyio.fail_after(10):
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            first = await client.call_tool("delete_repository", {"repo_id": 5})
            assert woodpecker.writes == []
            token = first.structured_content["confirm_token"]
            second = await client.call_tool("delete_repository", {"repo_id": 5, "confirm_token": token})
    assert "ELICITATION=false" in first.content[0].text
    assert second.structured_content.get("outcome") != "token_rejected"
    assert [(c.method, c.path) for c in woodpecker.writes] == [("DELETE", "/api/repos/5")]
    assert woodpecker.credentials[-1] == Credential(TOKEN)
    assert [e["outcome"] for e in audit.events][:1] == ["token_issued"]
    assert person_asked == []


async def test_without_a_woodpecker_url_the_real_wiring_answers_with_setup_instructions() -> None:
    container = build_container(read_settings({}))
    async with opened(container):
        server = await resolved(container.mcp_server())
        with anyio.fail_after(10):
            async with Client(server) as client:
                tools = (await client.list_tools()).tools
                result = await client.call_tool("list_repositories", {})
    assert len(tools) == len(WOODPECKER_TOOLS)
    assert result.is_error and result.content[0].text == SETUP


async def test_per_client_mode_never_falls_back_to_the_servers_token() -> None:
    settings = read_settings({"WOODPECKER_URL": "https://ci.example.com", "WOODPECKER_TOKEN": TOKEN})
    assert build_container(settings).credential() == Credential(TOKEN)
    # Per-client mode is the HTTP transport's (the gateway is built before serving, not at a call).
    http = read_http_settings({"WOODPECKER_MCP_AUTH": "per-client"})
    per_client = build_container(settings, per_client=True, http=http)
    assert per_client.credential() is None
    async with opened(per_client):
        assert (await resolved(per_client.application())).credential is None
        assert "token=none" in repr(await resolved(per_client.gateway()))


async def test_opened_closes_the_resources_it_opened() -> None:
    events: list[str] = []

    async def recording_gateway() -> AsyncIterator[FakeWoodpecker]:
        events.append("open")
        try:
            yield FakeWoodpecker()
        finally:
            events.append("close")

    container = build_container(read_settings({}))
    container.gateway.override(providers.Resource(recording_gateway))
    async with opened(container):
        await resolved(container.runner())
        assert events == ["open"]
    assert events == ["open", "close"]


def test_the_seal_key_ring_comes_from_the_settings_in_order() -> None:
    import base64

    keys = [bytes([n]) * 32 for n in (1, 2)]
    raw = ",".join(base64.b64encode(k).decode() for k in keys)
    container = build_container(read_settings({"WOODPECKER_MCP_SEAL_KEYS": raw}))
    sealer = container.sealer()
    only_second = build_container(
        read_settings({"WOODPECKER_MCP_SEAL_KEYS": base64.b64encode(keys[1]).decode()})
    ).sealer()
    sealed = sealer.seal(b"payload")
    assert sealer.unseal(only_second.seal(b"other")) == b"other"  # every key opens
    assert only_second.unseal(sealed) is None  # the first key seals


HOST_AND_ORIGIN_CASES = [
    pytest.param(
        {},
        [
            ({"Host": "127.0.0.1:8000"}, 200),
            ({"Host": "LOCALHOST:8000"}, 200),
            ({"Origin": "http://localhost:5"}, 403),
        ],
        id="defaults",
    ),
    pytest.param(
        {"WOODPECKER_MCP_ALLOWED_HOSTS": "mcp.example.com"},
        [
            ({"Host": "mcp.example.com"}, 200),
            ({"Host": "mcp.example.com:8443"}, 200),
            ({"Host": "MCP.Example.com"}, 200),
            ({"Host": "evil.example.com"}, 421),
        ],
        id="a-name",
    ),
    pytest.param(
        {"WOODPECKER_MCP_ALLOWED_HOSTS": "mcp.example.com:443"},
        [({"Host": "mcp.example.com:443"}, 200), ({"Host": "mcp.example.com:8443"}, 421)],
        id="a-name-and-port",
    ),
    pytest.param(
        {"WOODPECKER_MCP_ALLOWED_ORIGINS": "http://localhost:*, https://App.example.com"},
        [
            ({"Origin": "http://localhost:6274"}, 200),
            ({"Origin": "http://localhost"}, 200),
            ({"Origin": "https://app.example.com"}, 200),
            ({"Origin": "https://evil.example"}, 403),
        ],
        id="origins",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("environ", "cases"), HOST_AND_ORIGIN_CASES)
async def test_the_http_app_admits_exactly_the_configured_hosts_and_origins_through_both_checks(
    environ: dict[str, str], cases: list[tuple[dict[str, str], int]]
) -> None:
    # Our gate and the SDK's check behind it must agree: a request ours admits is not then
    # refused by the SDK's stricter, case-sensitive matching.
    bearer = "h" * 40
    container = build_container(read_settings({}))
    http = read_http_settings({"WOODPECKER_MCP_BEARER": bearer, **environ})
    initialize = initialize_request()
    common = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"}
    statuses = []
    with anyio.fail_after(20):
        async with opened(container):
            app = await build_http_app(container, http, warn=lambda _: None)
            async with serve_asgi(app) as base, httpx2.AsyncClient() as client:
                for headers, _ in cases:
                    response = await client.post(
                        f"{base}/mcp", json=initialize, headers={**common, **headers}
                    )
                    statuses.append((headers, response.status_code))
    assert statuses == [(headers, status) for headers, status in cases]


async def test_the_ca_file_setting_reaches_the_woodpecker_client(tmp_path: Path) -> None:
    ca = private_ca(tmp_path)
    async with serving_tls(ca.server) as server:
        server.then(json_response(200, {"login": "ada"}))
        environ = {
            "WOODPECKER_URL": server.url,
            "WOODPECKER_TOKEN": TOKEN,
            "WOODPECKER_CA_FILE": str(ca.ca_file),
        }
        container = build_container(read_settings(environ))
        async with opened(container):
            gateway = await resolved(container.gateway())
            with anyio.fail_after(15):
                answer = await gateway.send(Request("GET", "/api/user"), None)
    assert answer.data == {"login": "ada"}
