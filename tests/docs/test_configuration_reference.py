"""docs/configuration.md documents exactly the variables the server reads, with the defaults it uses."""

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "configuration.md"
SETTINGS_PACKAGE = ROOT / "entrypoints" / "settings"
_ROW = re.compile(r"^\| `(WOODPECKER_[A-Z_]+|ELICITATION)` \| ([^|]*) \|", re.M)


@pytest.fixture(scope="module")
def settings() -> ModuleType:
    return importlib.import_module("entrypoints.settings")


def documented() -> dict[str, str]:
    """Variable -> its default cell, from the reference table."""
    rows = {name: default.strip() for name, default in _ROW.findall(REFERENCE.read_text(encoding="utf-8"))}
    assert rows, "no variable table found in docs/configuration.md"
    return rows


def test_every_variable_the_server_reads_is_documented_and_nothing_else(settings: ModuleType) -> None:
    assert set(documented()) == set(settings.KNOWN_VARIABLES)


def test_every_documented_variable_is_named_in_the_settings_module() -> None:
    # The table of variables aside: a variable is read where a field or the reader names it.
    source = "".join(
        p.read_text(encoding="utf-8")
        for p in sorted(SETTINGS_PACKAGE.glob("*.py"))
        if p.name != "variables.py"
    )
    source += Path(ROOT / "domain" / "tool_filter.py").read_text(encoding="utf-8")
    source += Path(ROOT / "domain" / "toolsets.py").read_text(encoding="utf-8")
    missing = [name for name in documented() if f'"{name}"' not in source]
    assert not missing, f"documented but never read by entrypoints/settings/: {missing}"


def test_every_documented_default_is_the_default_the_server_uses(settings: ModuleType) -> None:
    defaults = {name: default for name, default, _ in settings.VARIABLES}
    rows = documented()
    wrong = {
        name: (rows[name], defaults[name])
        for name in rows
        if name in defaults and defaults[name].lower() not in rows[name].lower().replace("`", "")
    }
    assert not wrong, f"documented default vs settings.VARIABLES: {wrong}"


@pytest.mark.slow
def test_every_documented_variable_appears_in_the_help_output(settings: ModuleType) -> None:
    # The installed console script when there is one; `python -m entrypoints` runs the same main().
    script = Path(sys.executable).with_name("woodpecker-ci-mcp")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "entrypoints"]
    result = subprocess.run(
        [*command, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    missing = [name for name in documented() if name not in result.stdout]
    assert not missing, f"documented but absent from --help: {missing}"
