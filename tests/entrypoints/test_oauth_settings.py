"""OAuth mode's variables: required together, strict URLs and scope, values never echoed."""

import pytest

from entrypoints.settings import StartupError, read_http_settings
from ports.woodpecker import Credential

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
