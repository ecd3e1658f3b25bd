"""The environment, parsed in-process: each refusal is one line naming the variable, never its value."""

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from domain.arguments import ArgumentError, input_schema
from domain.arguments import validate as validate_arguments
from domain.config import ELICITATION_OFF_LINE
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.settings import (
    KNOWN_VARIABLES,
    StartupError,
    read_http_settings,
    read_settings,
)
from entrypoints.settings.http import auto_connections, open_file_limit
from ports.woodpecker import Credential
from tests.fixtures.gateway import private_ca

CANARY = "canary-7f3a9c"


def refusal(environ: dict[str, str]) -> str:
    with pytest.raises(StartupError) as caught:
        read_settings(environ)
    assert len(caught.value.lines) == 1, caught.value.lines
    (text,) = caught.value.lines
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "url",
    [
        f"ftp://{CANARY}.example.com",
        f"{CANARY}.example.com",
        f"https://admin:{CANARY}@ci.example.com",
        f"https://{CANARY}@ci.example.com",
        f"https://[{CANARY}",
        f"https://ci.example.com:99{CANARY}",
        f"https:///{CANARY}",
        f"https://ci.example.com/{CANARY} x",
        f"https://ci.example.com/?{CANARY}",
        f"https://ci exa{CANARY}mple.com",
    ],
)
def test_a_woodpecker_url_that_is_not_a_plain_http_root_is_refused_without_echoing_it(url: str) -> None:
    text = refusal({"WOODPECKER_URL": url})
    assert "WOODPECKER_URL" in text
    assert CANARY not in text


def test_a_user_and_password_in_the_url_points_at_woodpecker_token_instead() -> None:
    text = refusal({"WOODPECKER_URL": f"https://me:{CANARY}@ci.example.com"})
    assert "WOODPECKER_TOKEN" in text


@pytest.mark.parametrize(
    ("raw", "root"),
    [
        ("https://ci.example.com", "https://ci.example.com"),
        ("https://ci.example.com/", "https://ci.example.com"),
        ("https://ci.example.com/api", "https://ci.example.com"),
        ("https://ci.example.com/api/", "https://ci.example.com"),
        ("https://ci.example.com//api//", "https://ci.example.com"),
        ("  https://ci.example.com:8443/woodpecker/api  ", "https://ci.example.com:8443/woodpecker"),
        ("HTTPS://CI.example.com/apis", "https://ci.example.com/apis"),
        ("http://[::1]:8000/api", "http://[::1]:8000"),
    ],
)
def test_a_trailing_api_and_trailing_slashes_are_trimmed(raw: str, root: str) -> None:
    assert read_settings({"WOODPECKER_URL": raw}).woodpecker_url == root


@pytest.mark.parametrize(
    ("url", "warns"),
    [
        ("http://ci.example.com", True),
        ("http://10.0.0.5:8000", True),
        ("https://ci.example.com", False),
        ("http://localhost:8000", False),
        ("http://127.0.0.1:8000", False),
        ("http://[::1]:8000", False),
    ],
)
def test_plain_http_warns_only_when_the_host_is_not_loopback(url: str, warns: bool) -> None:
    warnings = read_settings({"WOODPECKER_URL": url}).warnings
    assert any("plain http" in w and "WOODPECKER_URL" in w for w in warnings) is warns


def test_without_url_or_token_the_settings_load_unconfigured_with_every_tool() -> None:
    settings = read_settings({})
    assert not settings.configured
    assert len(settings.tools) == len(WOODPECKER_TOOLS)
    assert settings.elicitation is True


def test_the_token_is_removed_from_the_mapping_it_was_read_from() -> None:
    environ = {"WOODPECKER_URL": "https://ci.example.com", "WOODPECKER_TOKEN": f"  {CANARY}\n"}
    settings = read_settings(environ)
    assert "WOODPECKER_TOKEN" not in environ
    assert settings.token == Credential(CANARY)
    assert settings.configured
    assert CANARY not in repr(settings)


def test_the_token_is_gone_from_the_process_environment_that_children_inherit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # /proc/<pid>/environ shows a process's environment as it was at exec, so the honest check
    # is a child started afterwards: it inherits the live C environ, which os.environ.pop unset.
    monkeypatch.setenv("WOODPECKER_TOKEN", CANARY)
    read_settings(os.environ)
    assert "WOODPECKER_TOKEN" not in os.environ
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('WOODPECKER_TOKEN', 'absent'))"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert child.stdout.strip() == "absent"


def test_a_token_with_inner_whitespace_is_refused_without_echoing_it() -> None:
    environ = {"WOODPECKER_TOKEN": f"abc {CANARY}"}
    text = refusal(environ)
    assert "WOODPECKER_TOKEN" in text and CANARY not in text
    assert "WOODPECKER_TOKEN" not in environ


def test_read_only_registers_the_read_tools() -> None:
    tools = read_settings({"WOODPECKER_READ_ONLY": "true"}).tools
    assert len(tools) == sum(t.is_read for t in WOODPECKER_TOOLS)
    assert all(t.is_read for t in tools)


def test_essential_allows_the_twelve_essential_tools() -> None:
    tools = read_settings({"WOODPECKER_ALLOW_TOOLS": "essential"}).tools
    assert len(tools) == 12
    assert all(t.essential for t in tools)


def test_an_allow_list_of_prefixes_and_names_selects_exactly_those() -> None:
    tools = read_settings({"WOODPECKER_ALLOW_TOOLS": "list_*, get_pipeline"}).tools
    assert "get_pipeline" in tools
    assert set(tools.names) - {"get_pipeline"} == {n for n in tools.names if n.startswith("list_")}
    assert any(n.startswith("list_") for n in tools.names)


def test_deny_is_subtracted_from_allow() -> None:
    tools = read_settings({"WOODPECKER_ALLOW_TOOLS": "list_*", "WOODPECKER_DENY_TOOLS": "list_users"}).tools
    assert "list_users" not in tools
    assert "list_repositories" in tools


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"WOODPECKER_ALLOW_TOOLS": "list_repositories,no_such_tool"}, "no_such_tool"),
        ({"WOODPECKER_DENY_TOOLS": "no_such_*"}, "no_such_*"),
        ({"WOODPECKER_ALLOW_TOOLS": "*_pipeline"}, "*_pipeline"),
        (
            {"WOODPECKER_READ_ONLY": "true", "WOODPECKER_ALLOW_TOOLS": "delete_repository"},
            "delete_repository",
        ),
    ],
)
def test_a_tool_filter_entry_that_cannot_apply_stops_the_server_naming_it(
    environ: dict[str, str], named: str
) -> None:
    assert named in refusal(environ)


@pytest.mark.parametrize("variable", ["WOODPECKER_ALLOW_TOOLS", "WOODPECKER_DENY_TOOLS"])
def test_a_filter_entry_that_looks_like_a_token_is_described_not_echoed(variable: str) -> None:
    pasted = "wp_7Hq2xT9LmZ4cV8bN1kR6"
    text = refusal(
        {variable: f"list_*,{pasted}"} if variable.startswith("WOODPECKER_ALLOW") else {variable: pasted}
    )
    assert variable in text and "looks like a token" in text
    assert pasted not in text and pasted.lower() not in text


def test_under_read_only_a_pattern_that_only_hits_write_tools_warns_and_starts() -> None:
    settings = read_settings({"WOODPECKER_READ_ONLY": "true", "WOODPECKER_ALLOW_TOOLS": "delete_*,list_*"})
    assert settings.tools.names and all(name.startswith("list_") for name in settings.tools.names)
    (warning,) = [w for w in settings.warnings if "WOODPECKER_ALLOW_TOOLS" in w]
    assert warning.startswith("woodpecker-ci-mcp: ") and "delete_*" in warning and "write tools" in warning


@pytest.mark.parametrize("raw", ["1", "off", "yes", "False!", "no"])
def test_an_elicitation_value_other_than_true_or_false_is_refused_naming_both(raw: str) -> None:
    text = refusal({"ELICITATION": raw})
    assert "ELICITATION" in text and "true" in text and "false" in text


@pytest.mark.parametrize(("raw", "on"), [("", True), ("true", True), (" TRUE ", True), ("false", False)])
def test_elicitation_is_on_unless_it_is_false(raw: str, on: bool) -> None:
    assert read_settings({"ELICITATION": raw}).elicitation is on


def test_the_elicitation_off_line_is_the_one_the_seed_gives() -> None:
    assert ELICITATION_OFF_LINE == (
        "woodpecker-ci-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
    )


@pytest.mark.parametrize("name", ["WOODPECKER_READ_ONLY", "WOODPECKER_INSECURE_TLS"])
def test_a_boolean_is_true_only_as_the_exact_string_true(name: str) -> None:
    assert getattr(read_settings({name: "true"}), name.removeprefix("WOODPECKER_").lower()) is True
    assert getattr(read_settings({}), name.removeprefix("WOODPECKER_").lower()) is False


def test_several_bad_variables_give_one_line_each() -> None:
    with pytest.raises(StartupError) as caught:
        read_settings({"WOODPECKER_URL": "ftp://x", "ELICITATION": "maybe", "WOODPECKER_MCP_SEAL_KEYS": "!!"})
    assert len(caught.value.lines) == 3
    assert all(line.startswith("woodpecker-ci-mcp: ") for line in caught.value.lines)


def _key(n: int) -> str:
    return base64.b64encode(bytes(range(n))).decode()


def test_seal_keys_are_decoded_in_order_from_either_base64_alphabet() -> None:
    first = base64.urlsafe_b64encode(b"\xfb" * 40).decode().rstrip("=")
    settings = read_settings({"WOODPECKER_MCP_SEAL_KEYS": f"{first}, {_key(32)},"})
    assert settings.seal_keys == (b"\xfb" * 40, bytes(range(32)))
    assert "\\xfb" not in repr(settings)


def test_no_seal_keys_means_none_configured() -> None:
    assert read_settings({}).seal_keys == ()


@pytest.mark.parametrize("raw", [_key(31), f"{CANARY}!!", f"{_key(32)},{_key(16)}"])
def test_a_short_or_malformed_seal_key_is_refused_by_position_not_by_value(raw: str) -> None:
    text = refusal({"WOODPECKER_MCP_SEAL_KEYS": raw})
    assert "WOODPECKER_MCP_SEAL_KEYS" in text
    assert CANARY not in text and _key(16) not in text


@pytest.mark.parametrize(
    ("raw", "store"),
    [
        (None, "memory"),
        ("Memory", "memory"),
        (f"redis://:{CANARY}@redis.internal:6379/0", f"redis://:{CANARY}@redis.internal:6379/0"),
        ("rediss://redis.internal", "rediss://redis.internal"),
        ("unix:///run/redis.sock", "unix:///run/redis.sock"),
    ],
)
def test_the_token_store_is_memory_or_a_redis_url(raw: str | None, store: str) -> None:
    environ = {} if raw is None else {"WOODPECKER_MCP_TOKEN_STORE": raw}
    settings = read_settings(environ)
    assert settings.token_store == store
    assert CANARY not in repr(settings)


@pytest.mark.parametrize("raw", [f"postgres://u:{CANARY}@db", f"redis://u:{CANARY}@h:port", "disk"])
def test_a_token_store_that_is_not_memory_or_redis_is_refused_without_echoing_it(raw: str) -> None:
    text = refusal({"WOODPECKER_MCP_TOKEN_STORE": raw})
    assert "WOODPECKER_MCP_TOKEN_STORE" in text and CANARY not in text


def test_an_unknown_woodpecker_mcp_variable_warns_as_a_likely_typo() -> None:
    warnings = read_settings({"WOODPECKER_MCP_BAERER": "x", "WOODPECKER_SERVER": "y"}).warnings
    assert [w for w in warnings if "WOODPECKER_MCP_BAERER" in w]
    assert not [w for w in warnings if "WOODPECKER_SERVER" in w]


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("WOODPECKER_READONLY", "WOODPECKER_READ_ONLY"),
        ("WOODPECKER_TOOLSET", "WOODPECKER_TOOLSETS"),
        ("WOODPECKER_ALLOWED_TOOLS", "WOODPECKER_ALLOW_TOOLS"),
        ("WOODPECKER_DENY_TOOL", "WOODPECKER_DENY_TOOLS"),
        ("WOODPECKER_MCP_AUDITFILE", "WOODPECKER_MCP_AUDIT_FILE"),
        ("WOODPECKER_MCP_POLICYY", "WOODPECKER_MCP_POLICY"),
        ("WOODPECKER_MCP_APPROVALPAGE", "WOODPECKER_MCP_APPROVAL_PAGE"),
    ],
)
def test_a_near_miss_of_a_variable_that_restricts_the_server_stops_it_naming_the_one_meant(
    typo: str, meant: str
) -> None:
    # WOODPECKER_READONLY=true served every write tool while the client said "Connected"; the only
    # sign was a warning in a log folder the person never opened (issue 36).
    with pytest.raises(StartupError) as caught:
        read_settings({typo: "true"})
    (refused,) = caught.value.lines
    assert typo in refused and f"did you mean {meant}?" in refused and f"rename it to {meant}" in refused


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("WOODPECKER_INSECURE_TSL", "WOODPECKER_INSECURE_TLS"), ("WOODPECKER_MCP_TEXTT", "WOODPECKER_MCP_TEXT")],
)
def test_a_near_miss_of_a_woodpecker_variable_warns_and_names_the_one_meant(typo: str, meant: str) -> None:
    # One that restricts nothing only warns: without it the server does no more than it was set to.
    warnings = read_settings({typo: "true"}).warnings
    assert [w for w in warnings if typo in w and f"did you mean {meant}?" in w], warnings


def test_woodpeckers_own_variables_beside_this_server_do_not_warn() -> None:
    # The server, agent and CLI of Woodpecker read WOODPECKER_* too; an environment may hold them.
    own = (
        "WOODPECKER_SERVER",
        "WOODPECKER_HOST",
        "WOODPECKER_OPEN",
        "WOODPECKER_AGENT_SECRET",
        "WOODPECKER_ADMIN",
    )
    warnings = read_settings(dict.fromkeys(own, "x")).warnings
    assert not [w for w in warnings if any(name in w for name in own)], warnings


def test_every_variable_of_the_behaviour_table_is_known() -> None:
    assert {
        "WOODPECKER_URL",
        "WOODPECKER_TOKEN",
        "WOODPECKER_READ_ONLY",
        "WOODPECKER_ALLOW_TOOLS",
        "WOODPECKER_DENY_TOOLS",
        "WOODPECKER_INSECURE_TLS",
        "ELICITATION",
    } <= KNOWN_VARIABLES


BEARER = "b" * 40


def test_http_defaults_to_loopback_port_8000_in_shared_mode() -> None:
    http = read_http_settings({"WOODPECKER_MCP_BEARER": BEARER})
    assert (http.host, http.port, http.auth, http.bearer) == ("127.0.0.1", 8000, "shared", BEARER)
    assert http.warnings == ()
    assert BEARER not in repr(http)


def test_command_line_host_and_port_win_over_the_environment() -> None:
    environ = {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_HOST": "::1", "WOODPECKER_MCP_PORT": "9"}
    assert read_http_settings(environ).port == 9
    http = read_http_settings(environ, host="127.0.0.2", port=0)
    assert (http.host, http.port) == ("127.0.0.2", 0)


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"WOODPECKER_MCP_BEARER": "short" + CANARY},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_AUTH": "anonymous"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_PORT": "80000"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_MAX_BODY_BYTES": "lots"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS": "0"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS": "61"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS": "2.5"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_MAX_CONNECTIONS": "0"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_MAX_CONNECTIONS": "many"},
        {"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_MAX_CONNECTIONS": str(10**9)},
    ],
)
def test_http_refuses_a_missing_weak_or_malformed_setting_in_one_line(environ: dict[str, str]) -> None:
    with pytest.raises(StartupError) as caught:
        read_http_settings(environ)
    assert len(caught.value.lines) == 1
    assert "WOODPECKER_MCP_" in caught.value.lines[0]
    assert CANARY not in caught.value.lines[0]


def test_the_connection_limits_default_to_30_seconds_and_room_below_the_open_file_limit() -> None:
    http = read_http_settings({"WOODPECKER_MCP_BEARER": BEARER})
    open_files = open_file_limit()
    assert http.header_timeout_seconds == 30
    assert http.max_connections == auto_connections(open_files)
    assert 1 <= http.max_connections <= open_files - 64


@pytest.mark.parametrize(
    ("open_files", "cap"), [(1024, 768), (256, 192), (100, 36), (4096, 3072), (1 << 20, 4096), (50, 1)]
)
def test_the_automatic_cap_leaves_a_quarter_of_the_descriptors_and_at_least_64(
    open_files: int, cap: int
) -> None:
    assert auto_connections(open_files) == cap


def test_a_cap_above_what_the_open_file_limit_leaves_names_the_limit_and_the_fix() -> None:
    with pytest.raises(StartupError) as caught:
        read_http_settings({"WOODPECKER_MCP_BEARER": BEARER, "WOODPECKER_MCP_MAX_CONNECTIONS": str(10**9)})
    assert f"open-file limit ({open_file_limit()})" in caught.value.lines[0]
    assert "ulimit -n" in caught.value.lines[0]


def test_the_shared_bearer_must_not_be_the_woodpecker_token() -> None:
    token = "t" * 40
    with pytest.raises(StartupError) as caught:
        read_http_settings({"WOODPECKER_MCP_BEARER": token}, server_token=Credential(token))
    assert token not in caught.value.lines[0]


def test_per_client_mode_needs_no_bearer_and_ignores_the_servers_token() -> None:
    http = read_http_settings({"WOODPECKER_MCP_AUTH": "per-client"}, server_token=Credential("t" * 40))
    assert http.auth == "per-client" and http.bearer is None
    assert any("WOODPECKER_TOKEN is ignored" in w for w in http.warnings)


def test_allowed_hosts_and_origins_are_comma_lists() -> None:
    http = read_http_settings(
        {
            "WOODPECKER_MCP_BEARER": BEARER,
            "WOODPECKER_MCP_ALLOWED_HOSTS": "mcp.example.com, mcp.example.com:443,",
            "WOODPECKER_MCP_ALLOWED_ORIGINS": "https://app.example.com",
            "WOODPECKER_MCP_MAX_BODY_BYTES": "65536",
        }
    )
    assert http.allowed_hosts == ("mcp.example.com", "mcp.example.com:443")
    assert http.allowed_origins == ("https://app.example.com",)
    assert http.max_body_bytes == 65536


@pytest.mark.parametrize("name", ["WOODPECKER_READ_ONLY", "WOODPECKER_INSECURE_TLS"])
@pytest.mark.parametrize("value", [" true", "true ", "True"])
def test_a_flag_is_on_only_for_the_exact_string_true(name: str, value: str) -> None:
    with pytest.raises(StartupError) as caught:
        read_settings({name: value})
    assert name in str(caught.value)


def test_a_ca_file_that_loads_is_kept_and_verification_stays_on(tmp_path: Path) -> None:
    ca = private_ca(tmp_path)
    settings = read_settings({"WOODPECKER_CA_FILE": str(ca.ca_file)})
    assert settings.ca_file == str(ca.ca_file) and settings.insecure_tls is False


@pytest.mark.parametrize("content", [None, b"", b"not a certificate\n"])
def test_a_ca_file_that_does_not_load_stops_the_server_naming_the_variable(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "ca.pem"
    if content is not None:
        path.write_bytes(content)
    text = refusal({"WOODPECKER_CA_FILE": str(path)})
    assert "WOODPECKER_CA_FILE" in text and "PEM" in text


def test_a_ca_file_and_insecure_tls_together_are_refused(tmp_path: Path) -> None:
    ca = private_ca(tmp_path)
    text = refusal({"WOODPECKER_CA_FILE": str(ca.ca_file), "WOODPECKER_INSECURE_TLS": "true"})
    assert "WOODPECKER_CA_FILE" in text and "WOODPECKER_INSECURE_TLS" in text


@pytest.mark.parametrize(
    ("raw", "mode"), [(None, "full"), ("", "full"), ("full", "full"), ("summary", "summary")]
)
def test_the_text_content_is_full_unless_summary_is_asked_for(raw: str | None, mode: str) -> None:
    environ = {} if raw is None else {"WOODPECKER_MCP_TEXT": raw}
    assert read_settings(environ).text == mode


@pytest.mark.parametrize("raw", ["Summary", "FULL", "short", "none", "json", f"x{CANARY}"])
def test_a_text_mode_other_than_full_or_summary_is_refused_naming_both(raw: str) -> None:
    text = refusal({"WOODPECKER_MCP_TEXT": raw})
    assert "WOODPECKER_MCP_TEXT" in text and "full" in text and "summary" in text
    assert CANARY not in text


# --------------------------------------------------------------------- wait_for_pipeline's window


def wait_schema(environ: dict[str, str]) -> dict[str, object]:
    tool = read_settings(environ).tools.get("wait_for_pipeline")
    return input_schema(tool)["properties"]["timeout_seconds"]


def test_the_wait_window_defaults_to_45_seconds_at_most_55_and_leaves_the_catalogue_alone() -> None:
    assert read_settings({}).tools == WOODPECKER_TOOLS
    assert (wait_schema({})["default"], wait_schema({})["maximum"]) == (45, 55)


@pytest.mark.parametrize(
    ("environ", "default", "ceiling"),
    [
        ({"WOODPECKER_MCP_WAIT_SECONDS": "30"}, 30, 55),
        ({"WOODPECKER_MCP_WAIT_SECONDS": " 120 "}, 120, 120),  # alone above 55: the ceiling follows
        ({"WOODPECKER_MCP_WAIT_MAX_SECONDS": "25"}, 25, 25),  # alone below 45: the default follows
        ({"WOODPECKER_MCP_WAIT_MAX_SECONDS": "240"}, 45, 240),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "90", "WOODPECKER_MCP_WAIT_MAX_SECONDS": "240"}, 90, 240),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "", "WOODPECKER_MCP_WAIT_MAX_SECONDS": ""}, 45, 55),
    ],
)
def test_the_wait_window_moves_the_listed_schema_and_what_validation_accepts(
    environ: dict[str, str], default: int, ceiling: int
) -> None:
    schema = wait_schema(environ)
    assert (schema["default"], schema["maximum"]) == (default, ceiling)
    tool = read_settings(environ).tools.get("wait_for_pipeline")
    assert validate_arguments(tool, {"repo_id": 1, "number": 2})["timeout_seconds"] == default
    assert validate_arguments(tool, {"repo_id": 1, "number": 2, "timeout_seconds": ceiling})
    with pytest.raises(ArgumentError):
        validate_arguments(tool, {"repo_id": 1, "number": 2, "timeout_seconds": ceiling + 1})
    assert str(ceiling) in tool.params[-1].description
    # Every other tool is the catalogue's own.
    others = [t for t in read_settings(environ).tools if t.name != "wait_for_pipeline"]
    assert others == [t for t in WOODPECKER_TOOLS if t.name != "wait_for_pipeline"]


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"WOODPECKER_MCP_WAIT_SECONDS": "45s"}, "WOODPECKER_MCP_WAIT_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "0"}, "WOODPECKER_MCP_WAIT_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "-5"}, "WOODPECKER_MCP_WAIT_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "4.5"}, "WOODPECKER_MCP_WAIT_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "601"}, "WOODPECKER_MCP_WAIT_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_SECONDS": "٤٥"}, "WOODPECKER_MCP_WAIT_SECONDS"),  # digits, but not ASCII
        ({"WOODPECKER_MCP_WAIT_MAX_SECONDS": "601"}, "WOODPECKER_MCP_WAIT_MAX_SECONDS"),
        ({"WOODPECKER_MCP_WAIT_MAX_SECONDS": f"1{CANARY}"}, "WOODPECKER_MCP_WAIT_MAX_SECONDS"),
    ],
)
def test_the_wait_window_must_be_whole_seconds_in_range(environ: dict[str, str], named: str) -> None:
    text = refusal(environ)
    assert named in text and "whole number of seconds" in text
    assert CANARY not in text


def test_the_wait_window_may_not_exceed_a_ceiling_that_is_set_too() -> None:
    text = refusal({"WOODPECKER_MCP_WAIT_SECONDS": "90", "WOODPECKER_MCP_WAIT_MAX_SECONDS": "60"})
    assert "WOODPECKER_MCP_WAIT_SECONDS" in text and "WOODPECKER_MCP_WAIT_MAX_SECONDS" in text
    assert "lower the first or raise the second" in text
