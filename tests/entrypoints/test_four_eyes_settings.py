"""Four eyes and the approval page's sign-in settings: refused at start unless a second person can sign in to answer."""

from pathlib import Path

import pytest

from domain.guard.policy_file import parse_policy
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.cli.serve import serve
from entrypoints.settings import StartupError, read_http_settings, read_settings

OAUTH = {
    "WOODPECKER_MCP_AUTH": "oauth",
    "WOODPECKER_MCP_RESOURCE_URL": "https://mcp.example.org/mcp",
    "WOODPECKER_MCP_OAUTH_ISSUERS": "https://sso.example.org/realms/team",
}
CLIENT = {
    "WOODPECKER_MCP_APPROVAL_CLIENT_ID": "mcp-approvals",
    "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET": "x" * 40,
}


def start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], transport: str, **env: str
) -> str:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serve(transport, "127.0.0.1", 0) == 1
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("transport", "env", "second"),
    [
        ("stdio", {}, "WOODPECKER_MCP_AUTH"),
        ("http", {**OAUTH}, "WOODPECKER_MCP_APPROVAL_CLIENT_ID"),
        ("http", {**OAUTH, **CLIENT}, "WOODPECKER_MCP_APPROVERS"),
        # Found by a review: a caller from the second issuer is someone else at the first, where the
        # approver signs in, so they could approve their own four-eyes call.
        (
            "http",
            {
                **OAUTH,
                **CLIENT,
                "WOODPECKER_MCP_APPROVERS": "group:ops",
                "WOODPECKER_MCP_OAUTH_ISSUERS": "https://sso.example.org/realms/team,https://other.example.org",
            },
            "WOODPECKER_MCP_OAUTH_ISSUERS",
        ),
    ],
)
def test_four_eyes_without_a_second_person_stops_the_server_naming_both_settings(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    transport: str,
    env: dict[str, str],
    second: str,
) -> None:
    said = start(monkeypatch, capsys, transport, WOODPECKER_MCP_FOUR_EYES="chown_repository", **env)
    assert "WOODPECKER_MCP_FOUR_EYES" in said and second in said, said


def test_four_eyes_names_guarded_tools_only() -> None:
    with pytest.raises(StartupError) as caught:
        read_settings({"WOODPECKER_MCP_FOUR_EYES": "list_repositories"})
    assert "WOODPECKER_MCP_FOUR_EYES" in str(caught.value) and "list_repositories" in str(caught.value)


def test_the_approval_client_needs_its_secret_and_oauth_mode_and_never_shows_it() -> None:
    with pytest.raises(StartupError) as caught:
        read_http_settings({**OAUTH, "WOODPECKER_MCP_APPROVAL_CLIENT_ID": "mcp-approvals"})
    assert "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET" in str(caught.value)
    with pytest.raises(StartupError) as caught:
        read_http_settings({"WOODPECKER_MCP_AUTH": "per-client", **CLIENT})
    assert "outside OAuth mode" in str(caught.value) and "x" * 40 not in str(caught.value)
    http = read_http_settings(
        {**OAUTH, **CLIENT, "WOODPECKER_MCP_APPROVERS": "group:ci, email:Bob@Example.org"}
    )
    assert http.approval_client_id == "mcp-approvals" and "x" * 40 not in repr(http)
    assert http.approvers.groups == {"ci"} and http.approvers.emails == {"bob@example.org"}


def test_an_approvers_entry_of_no_known_kind_is_refused_by_its_number() -> None:
    with pytest.raises(StartupError) as caught:
        read_http_settings({**OAUTH, **CLIENT, "WOODPECKER_MCP_APPROVERS": "sub:alice, bob"})
    assert "WOODPECKER_MCP_APPROVERS entry 2" in str(caught.value)


@pytest.mark.parametrize(
    ("transport", "env", "second"),
    [
        ("stdio", {}, "WOODPECKER_MCP_AUTH"),
        ("http", {**OAUTH}, "WOODPECKER_MCP_APPROVAL_CLIENT_ID"),
        ("http", {**OAUTH, **CLIENT}, "WOODPECKER_MCP_APPROVERS"),
    ],
)
def test_four_eyes_in_the_policy_without_a_second_person_stops_the_server_naming_both_settings(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    transport: str,
    env: dict[str, str],
    second: str,
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[tools.chown_repository]\nfour_eyes = true\n")
    said = start(monkeypatch, capsys, transport, WOODPECKER_MCP_POLICY=str(policy), **env)
    assert "four_eyes in WOODPECKER_MCP_POLICY" in said and second in said, said
    assert "WOODPECKER_MCP_FOUR_EYES " not in said


def test_the_policys_four_eyes_tools_join_the_variables() -> None:
    settings = read_settings({"WOODPECKER_MCP_FOUR_EYES": "update_forge"})
    assert settings.four_eyes_tools == {"update_forge"}
    policy_settings = settings.model_copy(
        update={
            "policy": parse_policy("[tools.chown_repository]\nfour_eyes = true\n", "p.toml", WOODPECKER_TOOLS)
        }
    )
    assert policy_settings.four_eyes_tools == {"update_forge", "chown_repository"}
