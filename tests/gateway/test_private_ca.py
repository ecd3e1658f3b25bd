"""WOODPECKER_CA_FILE: a Woodpecker behind a private CA is trusted without switching verification off."""

import asyncio
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from ports.woodpecker import Request, Unavailable
from sandbox.server import Sandbox
from tests.fixtures.gateway import (
    GatewayFactory,
    PrivateCa,
    ScriptedServer,
    json_response,
    private_ca,
    serving_tls,
)

pytestmark = pytest.mark.anyio

GET = Request("GET", "/api/user")


@pytest.fixture
def ca(tmp_path: Path) -> PrivateCa:
    return private_ca(tmp_path)


@pytest.fixture
async def ca_server(ca: PrivateCa) -> AsyncIterator[ScriptedServer]:
    """A real TLS listener on loopback whose certificate the private CA signed for 127.0.0.1."""
    async with serving_tls(ca.server) as server:
        yield server


async def test_without_the_ca_file_the_same_server_is_refused_with_a_hint(
    ca_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    with anyio.fail_after(10), pytest.raises(Unavailable) as caught:
        await make_gateway(ca_server.url).send(GET, None)
    assert "WOODPECKER_CA_FILE" in str(caught.value)
    assert ca_server.requests == []


async def test_another_ca_does_not_vouch_for_the_server(
    tmp_path: Path, ca_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    stranger = private_ca(tmp_path, label="stranger")
    with anyio.fail_after(10), pytest.raises(Unavailable):
        await make_gateway(ca_server.url, ca_file=str(stranger.ca_file)).send(GET, None)
    assert ca_server.requests == []


async def test_the_host_name_is_still_checked(tmp_path: Path, make_gateway: GatewayFactory) -> None:
    # Signed by the trusted CA, but for another name: verification stays on, so it is refused.
    elsewhere = private_ca(tmp_path, names=("woodpecker.internal.example",), label="elsewhere")
    async with serving_tls(elsewhere.server) as server:
        with anyio.fail_after(10), pytest.raises(Unavailable):
            await make_gateway(server.url, ca_file=str(elsewhere.ca_file)).send(GET, None)
        assert server.requests == []


async def test_a_server_signed_by_the_private_ca_is_trusted_and_nothing_process_wide_changes(
    ca: PrivateCa, ca_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    trusting = make_gateway(ca_server.url, ca_file=str(ca.ca_file))
    ca_server.then(json_response(200, {"login": "ada"}))
    with anyio.fail_after(10):
        assert (await trusting.send(GET, None)).data == {"login": "ada"}
    with anyio.fail_after(10), pytest.raises(Unavailable):
        await make_gateway(ca_server.url).send(GET, None)
    assert ssl._create_default_https_context is ssl.create_default_context


async def test_https_to_a_port_that_speaks_plain_http_says_so_and_never_advises_insecure_tls(
    sandbox: Sandbox, make_gateway: GatewayFactory
) -> None:
    # The sandbox speaks plain HTTP; WOODPECKER_URL says https:// for its port.
    url = sandbox.url.replace("http://", "https://")
    with anyio.fail_after(10), pytest.raises(Unavailable) as caught:
        await make_gateway(url).send(GET, None)
    said = str(caught.value)
    assert "plain HTTP" in said and "use http://" in said
    assert "WOODPECKER_INSECURE_TLS=true" not in said


async def test_a_handshake_that_fails_before_any_certificate_names_the_url_and_never_advises_insecure_tls(
    make_gateway: GatewayFactory,
) -> None:
    # A plain listener that hangs up on the ClientHello: no certificate was ever shown to trust.
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        with anyio.fail_after(10), pytest.raises(Unavailable) as caught:
            await make_gateway(url).send(GET, None)
    finally:
        server.close()
    said = str(caught.value)
    assert f"The TLS handshake with Woodpecker at {url} failed" in said, said
    assert "WOODPECKER_INSECURE_TLS=true" not in said and "WOODPECKER_CA_FILE" not in said, said
