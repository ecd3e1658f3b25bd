"""WOODPECKER_MCP_POLICY in the settings: the file read once at start, applied to the tools, refused with the
other variables' problems in one start, and its rules printed one a line (ADR 0078)."""

from pathlib import Path

import pytest

from entrypoints.cli.serve import announce
from entrypoints.settings import StartupError, read_settings


def write(tmp_path: Path, content: str | bytes) -> str:
    path = tmp_path / "policy.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def test_the_policy_is_applied_to_the_tools_the_settings_register(tmp_path: Path) -> None:
    path = write(tmp_path, '[tools.delete_repository]\ndeny = true\n[tools.get_repository]\nask = "always"\n')
    settings = read_settings({"WOODPECKER_MCP_POLICY": path, "WOODPECKER_DENY_TOOLS": "delete_secret"})
    assert settings.policy is not None and settings.policy.source == path
    delete_repository = settings.tools.get("delete_repository")
    assert delete_repository.policy is not None and delete_repository.policy.deny
    assert settings.tools.get("get_repository").guard is not None
    assert "delete_secret" not in settings.tools  # the tool settings still narrow the list
    assert not any("WOODPECKER_MCP_POLICY" in w for w in settings.warnings)


def test_a_blank_variable_is_no_policy() -> None:
    settings = read_settings({"WOODPECKER_MCP_POLICY": "  "})
    assert settings.policy is None
    assert all(t.policy is None for t in settings.tools)


def test_a_refused_policy_is_reported_with_every_other_refused_variable(tmp_path: Path) -> None:
    path = write(tmp_path, '[tools.delete_secret]\nask = "never"\n')
    with pytest.raises(StartupError) as raised:
        read_settings({"WOODPECKER_MCP_POLICY": path, "ELICITATION": "yes"})
    assert len(raised.value.lines) == 2
    assert any(f"WOODPECKER_MCP_POLICY: {path}:2: " in line for line in raised.value.lines)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'[tools.delete_secret]\nask = "\xff"\n', ":2: is not UTF-8 text; save the policy as UTF-8"),
        (b"# " + b"x" * 70_000 + b"\n", "is longer than 65536 bytes"),
    ],
)
def test_a_file_that_is_no_policy_is_refused_in_one_line(tmp_path: Path, content: bytes, words: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(StartupError) as raised:
        read_settings({"WOODPECKER_MCP_POLICY": path})
    (line,) = raised.value.lines
    assert line.startswith(f"woodpecker-ci-mcp: WOODPECKER_MCP_POLICY: {path}") and words in line


def test_a_directory_is_refused_as_unreadable(tmp_path: Path) -> None:
    with pytest.raises(StartupError) as raised:
        read_settings({"WOODPECKER_MCP_POLICY": str(tmp_path)})
    (line,) = raised.value.lines
    assert "cannot be read (Is a directory)" in line


def test_the_start_prints_the_effective_policy_one_line_per_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        '[tools.delete_secret]\nask = "always"\nexpires_in = "2m"\n[tools.delete_user]\ndeny = true\n',
    )
    announce(read_settings({"WOODPECKER_MCP_POLICY": path, "WOODPECKER_READ_ONLY": "true"}))
    lines = [line for line in capsys.readouterr().err.splitlines() if " policy " in line]
    assert lines == [
        f"woodpecker-ci-mcp: policy {path}: tools.delete_secret.ask: delete_secret asks a person on every "
        "call (as its guard does already) (not registered: the tool settings leave it out)",
        f"woodpecker-ci-mcp: policy {path}: tools.delete_secret.expires_in: delete_secret's questions, seals, "
        "tickets and tokens live at most 2 minutes (not registered: the tool settings leave it out)",
        f"woodpecker-ci-mcp: policy {path}: tools.delete_user.deny: delete_user is denied: listed, and every "
        "call refused before anything is asked or sent (not registered: the tool settings leave it out)",
    ]
