"""A call that cannot reach Woodpecker says, in the result the model reads, the URL it tried and
why: over real sockets to a closed port, an unresolvable name, a plain-HTTP port named https://
and a TLS port whose certificate nobody trusts; TLS advice only in the last (issue 36, item 4)."""

import socket
from pathlib import Path

import anyio
import pytest
from mcp import Client

from sandbox.server import Sandbox
from tests.fixtures.gateway import CANARY, self_signed_server_tls, serving_tls
from tests.fixtures.mcp import harness_for

pytestmark = pytest.mark.anyio

TLS_ADVICE = ("WOODPECKER_INSECURE_TLS=true", "WOODPECKER_CA_FILE")


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _texts(url: str) -> dict[str, str]:
    """The text of get_server_info (no token) and get_current_user (the token) against `url`."""
    texts = {}
    async with harness_for(url, CANARY) as harness, Client(harness.server) as client:
        for tool in ("get_server_info", "get_current_user"):
            with anyio.fail_after(20):
                result = await client.call_tool(tool, {})
            assert result.is_error, (tool, result.content)
            text = str(getattr(result.content[0], "text", ""))
            assert CANARY not in text and CANARY not in str(result.structured_content)
            texts[tool] = text
    return texts


async def test_a_closed_port_names_the_url_and_that_the_connection_was_refused() -> None:
    port = closed_port()
    for tool, text in (await _texts(f"http://127.0.0.1:{port}/ci")).items():
        assert f"at http://127.0.0.1:{port}/ci:" in text, (tool, text)
        assert "connection was refused" in text and "check the port in WOODPECKER_URL" in text, text
        assert not any(advice in text for advice in TLS_ADVICE), text


async def test_an_unresolvable_name_names_the_url_and_that_the_name_did_not_resolve() -> None:
    # .invalid never resolves (RFC 6761); the default port is named, as it is the one tried.
    for tool, text in (await _texts("https://woodpecker.invalid")).items():
        assert "at https://woodpecker.invalid:443:" in text, (tool, text)
        assert "host name could not be resolved" in text, text
        assert not any(advice in text for advice in TLS_ADVICE), text


async def test_https_to_a_plain_http_port_says_so_without_tls_advice(sandbox: Sandbox) -> None:
    url = sandbox.url.replace("http://", "https://")
    for tool, text in (await _texts(url)).items():
        assert f"at {url}" in text and "answered in plain HTTP" in text, (tool, text)
        assert "use http://" in text, text
        assert "WOODPECKER_INSECURE_TLS=true" not in text, text
    assert sandbox.requests == []


async def test_a_self_signed_certificate_names_the_url_the_reason_and_the_tls_advice(
    tmp_path: Path,
) -> None:
    async with serving_tls(self_signed_server_tls(tmp_path)) as server:
        for tool, text in (await _texts(server.url)).items():
            assert f"The TLS certificate of Woodpecker at {server.url} was not accepted" in text, (tool, text)
            assert "self-signed certificate" in text, text  # OpenSSL's own reason
            assert all(advice in text for advice in TLS_ADVICE), text
        assert server.requests == []
