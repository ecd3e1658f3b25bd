"""The distribution a user installs: its name, its one version, and the README's install lines that CI runs.

Building and installing the wheel takes a minute or more, so it is not a pytest test: CI runs
`make dist-check` after `make test` (see .ci/run), which runs the README's wheel lines as written
(scripts/readme_wheel_lines.py). These tests keep the pieces that step relies on in agreement.
"""

import importlib.util
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import pytest

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


def wheel_lines_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "readme_wheel_lines", ROOT / "scripts" / "readme_wheel_lines.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shell_commands(document: Path) -> list[str]:
    """Every line of the document's ```sh blocks, its comment left off."""
    blocks = re.findall(r"^```sh\n(.*?)^```", document.read_text(encoding="utf-8"), re.S | re.M)
    return [line.partition(" #")[0].strip() for block in blocks for line in block.splitlines()]


def test_the_readme_wheel_lines_are_the_ones_make_dist_check_runs() -> None:
    script = wheel_lines_script()
    lines = script.wheel_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    commands = [command for command, _ in lines]
    assert commands[0] == "make dist"
    for line in (
        "pipx install dist/*.whl",
        f"uvx --from dist/*.whl {PROGRAM}",
        f"pipx run --no-cache --spec dist/*.whl {PROGRAM}",
    ):
        assert line in commands, line
    # pipx run keeps the venv it made for a spec for 14 days, and a rebuilt wheel has the same
    # file name: without --no-cache it starts the old build (CI's warm machine listed 77 tools
    # of 78, the one added since missing). uvx keys a local wheel by its modification time.
    assert all("--no-cache" in c for c in commands if c.startswith("pipx run "))
    # One line needs neither pipx nor uv: a plain venv with the wheel in it.
    (plain,) = [c for c in commands if c.startswith("python3 -m venv ")]
    assert plain.endswith("/bin/pip install dist/*.whl") and "pipx" not in plain and "uv" not in plain
    # Each line that installs names where its command lands, which is what the script starts.
    installing = [(c, comment) for c, comment in lines[1:] if not script.starts_the_server(c)]
    assert len(installing) == 2
    for _, comment in installing:
        assert script.installed_command(comment, Path("/home/someone")).name == PROGRAM
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    dist_check = makefile.split("\ndist-check:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/readme_wheel_lines.py" in dist_check
    assert "make dist-check" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_an_install_line_whose_comment_names_no_command_is_refused() -> None:
    script = wheel_lines_script()
    with pytest.raises(ValueError, match="does not name the installed command"):
        script.installed_command("with pipx: on your PATH", Path("/home/someone"))


# The distribution is not on the package index yet (issue 36): a command that installs or starts
# it from there by its name fails with "No matching distribution".
FROM_THE_INDEX = re.compile(
    rf"\b(?:pip install|pipx install|pipx run|uv tool install|uvx)\s+(?:--?\S+\s+)*{re.escape(DISTRIBUTION)}\b"
)


def test_no_documented_command_installs_from_the_package_index_it_is_not_on_yet() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    documents = [d for d in documents if "adr" not in d.relative_to(ROOT).parts]
    offenders = [
        f"{d.relative_to(ROOT)}: {c}"
        for d in documents
        for c in shell_commands(d)
        if FROM_THE_INDEX.search(c)
    ]
    assert offenders == []
    # The pattern itself matches what it is for.
    assert FROM_THE_INDEX.search(f"pipx install {DISTRIBUTION}")
    assert FROM_THE_INDEX.search(f"uvx --refresh {DISTRIBUTION}")
    assert not FROM_THE_INDEX.search("pipx install dist/*.whl")
    # The names it will be started by once published (the MCP Registry's entry starts it with
    # `uvx NAME`) are still said, in prose that says they are not possible yet.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    later = readme.split("Not yet possible:", 1)[1].split("\n\n", 1)[0]
    assert f"`uvx {DISTRIBUTION}`" in later and f"`pipx run {DISTRIBUTION}`" in later
