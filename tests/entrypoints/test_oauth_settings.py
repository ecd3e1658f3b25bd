"""OAuth mode's variables: required together, strict URLs and scope, values never echoed."""

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entrypoints.http_app import oauth_gate
from entrypoints.settings import StartupError, read_http_settings
from ports.woodpecker import Credential
from tests.fixtures.http import EchoApp

OAUTH = {
    "WOODPECKER_MCP_AUTH": "oauth",
    "WOODPECKER_MCP_RESOURCE_URL": "https://mcp.example.org/mcp",
    "WOODPECKER_MCP_OAUTH_ISSUERS": "https://sso.example.org/realms/team, https://login.example.com/",
}


def refusal(environ: dict[str, str]) -> str:
    with pytest.raises(StartupError) as caught:
        read_http_settings(environ)
    return str(caught.value)


def test_oauth_mode_reads_the_resource_the_issuers_and_the_default_scope() -> None:
    http = read_http_settings(OAUTH, server_token=Credential("t" * 40))
    assert http.auth == "oauth"
    assert http.resource_url == "https://mcp.example.org/mcp"
    assert http.oauth_issuers == ("https://sso.example.org/realms/team", "https://login.example.com/")
    assert http.oauth_scope == "woodpecker"
    assert http.bearer is None
    assert any("WOODPECKER_TOKEN is ignored with WOODPECKER_MCP_AUTH=oauth" in w for w in http.warnings)


def test_oauth_mode_without_resource_or_issuers_names_both() -> None:
    text = refusal({"WOODPECKER_MCP_AUTH": "oauth"})
    assert "WOODPECKER_MCP_RESOURCE_URL is not set" in text
    assert "WOODPECKER_MCP_OAUTH_ISSUERS is not set" in text
    assert "WOODPECKER_MCP_BEARER" not in text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WOODPECKER_MCP_RESOURCE_URL", "http://mcp.example.org/mcp"),
        ("WOODPECKER_MCP_RESOURCE_URL", "https://user:secret-value@mcp.example.org/mcp"),
        ("WOODPECKER_MCP_RESOURCE_URL", "https://mcp.example.org/mcp?secret-value"),
        ("WOODPECKER_MCP_RESOURCE_URL", "secret-value.example.net"),
        ("WOODPECKER_MCP_OAUTH_ISSUERS", "https://sso.example.org/realms/team,ftp://secret-value"),
        ("WOODPECKER_MCP_OAUTH_SCOPE", "two secret-value"),
        ("WOODPECKER_MCP_OAUTH_SCOPE", 'quo"te'),
    ],
)
def test_a_doubtful_value_is_refused_by_name_and_never_echoed(name: str, value: str) -> None:
    text = refusal({**OAUTH, name: value})
    assert name in text
    assert "secret-value" not in text and value not in text


def test_plain_http_is_accepted_for_loopback_only() -> None:
    http = read_http_settings(
        {
            **OAUTH,
            "WOODPECKER_MCP_RESOURCE_URL": "http://127.0.0.1:8000/mcp",
            "WOODPECKER_MCP_OAUTH_ISSUERS": "http://localhost:8080/realms/dev",
        }
    )
    assert http.resource_url == "http://127.0.0.1:8000/mcp"


def test_the_oauth_variables_are_not_required_in_the_other_modes() -> None:
    http = read_http_settings({"WOODPECKER_MCP_AUTH": "per-client"})
    assert http.resource_url is None and http.oauth_issuers == ()


def test_link_keys_are_exactly_32_bytes_and_unset_warns_that_links_stay_in_this_process() -> None:
    import base64

    good = base64.b64encode(b"k" * 32).decode()
    assert (
        read_http_settings({**OAUTH, "WOODPECKER_MCP_LINK_KEYS": f"{good},{good}"}).link_keys
        == (b"k" * 32,) * 2
    )
    text = refusal({**OAUTH, "WOODPECKER_MCP_LINK_KEYS": base64.b64encode(b"s" * 48).decode()})
    assert "WOODPECKER_MCP_LINK_KEYS entry 1 is not exactly 32 bytes" in text
    assert "c3Nz" not in text
    warnings = read_http_settings(OAUTH).warnings
    assert any("WOODPECKER_MCP_LINK_KEYS is not set" in w for w in warnings)
    assert not any(
        "LINK_KEYS" in w for w in read_http_settings({**OAUTH, "WOODPECKER_MCP_LINK_KEYS": good}).warnings
    )


@pytest.mark.anyio
@given(
    scheme=st.sampled_from(["https", "HTTPS", "Https"]),
    host=st.sampled_from(["mcp.example.org", "MCP.example.org", "Mcp.Example.Org"]),
    port=st.sampled_from(["", ":443", ":8443", ":80"]),  # :80 is no default for https
    path=st.sampled_from(["", "/", "/mcp", "/mcp/", "/MCP", "/team/mcp"]),
)
@settings(max_examples=150, deadline=None)
async def test_an_accepted_resource_is_the_one_the_metadata_names_and_the_origin_a_browser_sends(
    scheme: str, host: str, port: str, path: str
) -> None:
    # Tokens must carry exactly WOODPECKER_MCP_RESOURCE_URL as audience, clients ask for the
    # metadata's `resource`, and the linking page compares its origin with the browser's Origin:
    # a value any of them would spell otherwise can only ever refuse everyone.
    raw = f"{scheme}://{host}{port}{path}"
    try:
        http = read_http_settings({**OAUTH, "WOODPECKER_MCP_RESOURCE_URL": raw})
    except StartupError as e:
        assert "WOODPECKER_MCP_RESOURCE_URL" in str(e) and raw not in str(e)
        assert f"{scheme}://{host}" != f"https://{host.lower()}" or port == ":443"
        return
    assert http.resource_url == raw
    gate = oauth_gate(http, EchoApp(), principal_key=b"k" * 32)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=gate), base_url="http://127.0.0.1"
    ) as client:
        document = (await client.get("/.well-known/oauth-protected-resource")).json()
    assert document["resource"] == raw
    origin = "/".join(raw.split("/")[:3])
    assert origin == origin.lower() and not origin.endswith(":443")  # https's default port
