"""The distribution a user installs: its name, its one version, and the README's install lines that CI runs.

Building and installing the wheel takes a minute or more, so it is not a pytest test: CI runs
`make dist-check` after `make test` (see .ci/run). These tests keep the pieces that step
relies on in agreement with each other.
"""

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from entrypoints.settings import DISTRIBUTION, PROGRAM

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def project_version() -> str:
    found: str = PYPROJECT["project"]["version"]
    return found


def test_the_distribution_name_and_the_command_are_the_ones_the_code_uses() -> None:
    assert PYPROJECT["project"]["name"] == DISTRIBUTION
    # The command, and the same command under the package's name for `uvx NAME` / `pipx run NAME`.
    assert PYPROJECT["project"]["scripts"] == {
        PROGRAM: "entrypoints.cli:main",
        DISTRIBUTION: "entrypoints.cli:main",
    }


def test_the_version_is_written_once() -> None:
    assert "version" not in PYPROJECT["project"].get("dynamic", [])
    # The installed metadata (what --version and the MCP serverInfo show) is pyproject's.
    assert version(DISTRIBUTION) == project_version()
    for source in ("entrypoints", "adapters", "domain", "ports"):
        for path in (ROOT / source).rglob("*.py"):
            assert not re.search(r"__version__\s*=", path.read_text(encoding="utf-8")), path


def test_the_readme_install_lines_are_the_ones_make_dist_check_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for line in (
        f"uvx {DISTRIBUTION}",
        f"pipx run {DISTRIBUTION}",
        f"make dist && uvx --from dist/*.whl {PROGRAM}",
        f"make dist && pipx run --spec dist/*.whl {PROGRAM}",
    ):
        assert line in readme, line
    dist_check = makefile.split("\ndist-check:", 1)[1].split("\n\n", 1)[0]
    assert re.search(rf"uvx --from .*dist/\*\.whl\)? {PROGRAM}", dist_check)
    assert re.search(rf"pipx run --spec .*dist/\*\.whl\)? {PROGRAM}", dist_check)
    assert "scripts/list_tools.py" in dist_check
