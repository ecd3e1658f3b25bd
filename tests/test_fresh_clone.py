"""A newcomer's path: a fresh clone of the committed tree installs, its README command 1 serves tools to an MCP client, and command 2 expands to the checks CI runs.

How the install stays inside the time budget, honestly: the clone gets a new virtual
environment of its own and `pip install --no-deps -e <clone>`, with this environment's
site-packages made visible to it through a `.pth` line. Only the build backend (setuptools,
in pip's isolated build environment) comes from the registry or pip's cache. So the test
proves that the committed files build, install and run, but not that the dependency list in
pyproject.toml resolves from the registry. Set WOODPECKER_MCP_TEST_FULL_INSTALL=true to do the
README's full `pip install -e '.[test]'` into a plain new environment instead (minutes).
"""

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = "woodpecker-ci-mcp"
FULL_INSTALL = os.environ.get("WOODPECKER_MCP_TEST_FULL_INSTALL") == "true"
# The README's quick start, word for word: if it changes, this test must follow it.
README_COMMAND_1 = "make install && .venv/bin/woodpecker-ci-mcp sandbox"
README_COMMAND_2 = "make test"
NPM_DIRS = ("tests/node", "tests/conformance", "tests/apps_host", "tests/clients", "tests/oidc")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without our settings or git's (a stray GIT_DIR would redirect the clone)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WOODPECKER", "ELICITATION", "GIT_", "PIP_", "VIRTUAL_ENV", "PYTHON"))
    }
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", **extra}


def run(argv: list[str | Path], cwd: Path | None = None, timeout: float = 120) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{argv[:3]} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`git clone` of this checkout's HEAD: only what is committed is in it (one clone per module)."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    clone = tmp_path_factory.mktemp("fresh") / "clone"
    run([git, "clone", "--quiet", ROOT, clone], timeout=60)
    return clone


def install(clone: Path, venv: Path) -> Path:
    """A new environment for the clone with the package installed editable; returns its bin directory."""
    bin_dir = venv / "bin"
    if FULL_INSTALL:
        run([sys.executable, "-m", "venv", venv], timeout=120)
        run([bin_dir / "python", "-m", "pip", "install", "-q", "-e", f"{clone}[test]"], timeout=900)
        return bin_dir
    run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=60)
    new_site = run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    ours = sysconfig.get_paths()
    # A path line, not a site dir: this environment's own .pth files (its editable install of
    # the working tree among them) are not processed, so the clone's install is the only one.
    lines = dict.fromkeys([ours["purelib"], ours["platlib"]])
    (Path(new_site.strip()) / "_reuse_test_environment.pth").write_text("\n".join(lines) + "\n")
    run([bin_dir / "python", "-m", "pip", "install", "-q", "--no-deps", "-e", clone], timeout=180)
    return bin_dir


async def read_until_snippet(process: Process, lines: list[str]) -> dict[str, Any]:
    """Read the command's stdout until the JSON server list a user would paste into a client."""
    assert process.stdout is not None
    buffer = ""
    async for chunk in TextReceiveStream(process.stdout):
        buffer += chunk
        *complete, buffer = buffer.split("\n")
        for line in complete:
            lines.append(line)
            text = line.strip()
            if text.startswith("{") and "mcpServers" in text:
                snippet: dict[str, Any] = json.loads(text)
                return snippet
    raise AssertionError("the command ended without printing a JSON server list:\n" + "\n".join(lines))


def test_the_readme_quick_start_is_the_pair_of_commands_this_file_checks(fresh_clone: Path) -> None:
    readme = (fresh_clone / "README.md").read_text()
    quick_start = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", quick_start, re.S | re.M)
    assert block is not None
    commands = [line.partition(" #")[0].strip() for line in block.group(1).splitlines()]
    assert commands == [README_COMMAND_1, README_COMMAND_2]


@pytest.mark.anyio
async def test_a_fresh_clone_installs_and_its_sandbox_command_serves_every_tool_to_an_mcp_client(
    fresh_clone: Path, tmp_path: Path
) -> None:
    bin_dir = install(fresh_clone, tmp_path / "venv")
    # From a neutral directory: `python -c` puts the working directory first on sys.path.
    where = run(
        [bin_dir / "python", "-c", "import entrypoints.cli; print(entrypoints.cli.__file__)"], tmp_path
    )
    assert Path(where.strip()).resolve().is_relative_to(fresh_clone.resolve()), (
        "the clone's code is not the one installed"
    )

    stderr = (tmp_path / "sandbox.stderr").open("w")
    lines: list[str] = []
    process = await anyio.open_process(
        [str(bin_dir / PROGRAM), "sandbox"], env=clean_env(), cwd=fresh_clone, stderr=stderr
    )
    try:
        with anyio.fail_after(60):
            snippet = await read_until_snippet(process, lines)
        printed = "\n".join(lines)
        (server,) = snippet["mcpServers"].values()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", server["url"])
        assert server["url"] in printed and "Bearer" in server["headers"]["Authorization"]

        # Exactly what a newcomer pastes: the URL and the headers of the printed snippet.
        with anyio.fail_after(60):
            async with create_mcp_http_client(headers=server["headers"]) as http:
                async with Client(streamable_http_client(server["url"], http_client=http)) as client:
                    listed = await client.list_tools()
                    me = await client.call_tool("get_current_user", {})
        assert sorted(t.name for t in listed.tools) == sorted(t.name for t in WOODPECKER_TOOLS)
        assert not me.is_error, me.structured_content

        # "Stop with Ctrl-C": the command ends by itself, cleanly, on SIGINT.
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(20):
            code = await process.wait()
        assert code == 0
    finally:
        if process.returncode is None:
            process.kill()
            with anyio.move_on_after(10):
                await process.wait()
        await process.aclose()
        stderr.close()


def test_make_install_and_make_test_expand_to_the_environment_the_lint_and_the_tests(
    fresh_clone: Path,
) -> None:
    # `make -n` prints the commands without running them: running `make test` here would run
    # the whole suite again, inside itself, and double CI's time. What it runs is checked; that
    # those commands pass is what the rest of CI shows.
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    install_steps = run([make, "-n", "install"], cwd=fresh_clone)
    assert re.search(r"python3 -m venv \.venv", install_steps)
    assert re.search(r"\.venv/bin/pip install .*-e \. ", install_steps)
    # Nothing of the tests: no extras, no npm (docs/adr/0069).
    assert "[test]" not in install_steps and "npm" not in install_steps, install_steps

    dev_steps = run([make, "-n", "install-dev"], cwd=fresh_clone)
    assert re.search(r"\.venv/bin/pip install .*-e '\.\[test\]'", dev_steps)
    for folder in NPM_DIRS:
        assert f"cd {folder} && npm ci" in dev_steps, folder

    test_steps = run([make, "-n", "test"], cwd=fresh_clone).splitlines()
    assert any("-e '.[test]'" in step for step in test_steps), "make test installs the test tools first"
    expected = [
        r"\.venv/bin/ruff check \.",
        r"\.venv/bin/ruff format --check \.",
        r"\.venv/bin/mypy",
        r"\.venv/bin/lint-imports",
        r"\.venv/bin/pytest\b",
    ]
    positions = [next((i for i, s in enumerate(test_steps) if re.match(p, s.strip())), -1) for p in expected]
    assert -1 not in positions, f"missing from `make -n test`: {test_steps}"
    assert positions == sorted(positions), "the static checks run before pytest, in this order"

    # What CI runs (.ci/run): the same checks, with pytest under coverage and its floor.
    assert "make coverage" in (fresh_clone / ".ci" / "run").read_text()
    coverage_steps = run([make, "-n", "coverage"], cwd=fresh_clone).splitlines()
    positions = [
        next((i for i, s in enumerate(coverage_steps) if re.match(p, s.strip())), -1) for p in expected
    ]
    assert -1 not in positions, f"missing from `make -n coverage`: {coverage_steps}"
    assert positions == sorted(positions), "the static checks run before pytest, in this order"
    assert "--cov" in coverage_steps[positions[-1]].split()


def test_a_second_make_install_does_nothing_until_pyproject_changes(
    fresh_clone: Path, tmp_path: Path
) -> None:
    make, git = shutil.which("make"), shutil.which("git")
    if make is None or git is None:
        pytest.skip("needs make and git")
    clone = tmp_path / "clone"
    run([git, "clone", "--quiet", fresh_clone, clone], timeout=60)
    pyproject = clone / "pyproject.toml"
    # What a finished `make install` leaves: its stamp, newer than pyproject.toml.
    (clone / ".venv").mkdir()
    (clone / ".venv" / ".installed").touch()
    then = pyproject.stat().st_mtime
    os.utime(clone / ".venv" / ".installed", (then + 10, then + 10))
    assert "venv" not in run([make, "-n", "install"], cwd=clone)

    os.utime(pyproject, (then + 20, then + 20))
    assert re.search(r"python3 -m venv \.venv", run([make, "-n", "install"], cwd=clone))


def test_help_names_every_environment_variable_the_code_reads(capsys: pytest.CaptureFixture[str]) -> None:
    names = set()
    for package in ("domain", "ports", "adapters", "entrypoints"):
        for source in (ROOT / package).rglob("*.py"):
            names |= set(
                re.findall(r"[\"'](WOODPECKER_[A-Z0-9_]*[A-Z0-9]|ELICITATION)[\"']", source.read_text())
            )
    assert {"WOODPECKER_URL", "WOODPECKER_TOKEN", "ELICITATION"} <= names  # the scan itself works
    # In this process: `--help` is argparse's text, the same in a child (ADR 0025, test time).
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert sorted(n for n in names if n not in shown) == []


# One bad value per checked variable: each must stop the server with exit code 1 and lines that
# name the variable and what to do about it; a variable that may hold a secret (a token, a key,
# a URL with a password) must not have its value (the canary) echoed.
def case(variable: str, value: str, *argv: str, name: str = "") -> Any:
    return pytest.param({variable: value}, list(argv), variable, id=name or variable)


STARTUP_ERRORS = [
    case("WOODPECKER_URL", "ftp://canary.example"),
    case("WOODPECKER_TOKEN", "can ary"),
    case("WOODPECKER_MCP_SEAL_KEYS", "canary"),
    case("WOODPECKER_MCP_AUDIT_FILE", "/canary-missing-dir/audit.jsonl"),
    case("WOODPECKER_MCP_TOKEN_STORE", "canary://x"),
    case("WOODPECKER_ALLOW_TOOLS", "*canary", name="WOODPECKER_ALLOW_TOOLS-star-not-at-end"),
    case("WOODPECKER_DENY_TOOLS", "essential"),
    case("WOODPECKER_MCP_PORT", "99999", "--transport", "http"),
    case("WOODPECKER_MCP_AUTH", "canary", "--transport", "http"),
    case("WOODPECKER_MCP_BEARER", "canary", "--transport", "http"),
    case("WOODPECKER_MCP_MAX_BODY_BYTES", "canary", "--transport", "http"),
    case("WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS", "canary", "--transport", "http"),
    case("WOODPECKER_MCP_MAX_CONNECTIONS", "canary", "--transport", "http"),
    case("WOODPECKER_MCP_HOST", "can ary", "--transport", "http"),
    # Flags name the accepted values, which is the fix; whether they may repeat a value that is
    # not a secret is settled in tests/entrypoints.
    case("WOODPECKER_READ_ONLY", "yes"),
    case("ELICITATION", "off"),
    # A near miss of a variable that restricts the server stops it (docs/adr/0112).
    case("WOODPECKER_READONLY", "canary", name="WOODPECKER_READONLY-near-miss"),
    case("WOODPECKER_ALLOW_TOOLS", "canary_tool", name="WOODPECKER_ALLOW_TOOLS-unknown-name"),
]
SECRET_BEARING = frozenset(
    {
        "WOODPECKER_URL",
        "WOODPECKER_TOKEN",
        "WOODPECKER_MCP_SEAL_KEYS",
        "WOODPECKER_MCP_BEARER",
        "WOODPECKER_MCP_TOKEN_STORE",
    }
)
# Words that tell the reader what to do, or which values would do.
FIX = re.compile(
    r"\b(?:set|unset|use|paste|generate|point|remove|choose|must|for example|see|between|only)\b|e\.g\."
)


@pytest.mark.parametrize(("environment", "argv", "variable"), STARTUP_ERRORS)
def test_a_startup_error_names_the_variable_and_what_to_do(
    environment: dict[str, str],
    argv: list[str],
    variable: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The command's `main` in this process, in an environment with only the case's variable: a
    # child interpreter would cost half a CPU-second per case to say the same lines.
    # `tests/entrypoints/test_cli.py` keeps the console script's own exit code 1 across a process.
    for name in list(os.environ):
        if name.startswith(("WOODPECKER", "ELICITATION")):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    # Were the settings wrongly accepted, a stdio server would read end-of-input and return 0.
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO()))
    code = main(argv)
    stderr = capsys.readouterr().err
    lines = stderr.strip().splitlines()
    assert code == 1, stderr
    assert lines and all(line.startswith(f"{PROGRAM}: ") for line in lines), lines
    (line,) = [line for line in lines if variable in line]
    assert FIX.search(line.split(variable, 1)[1]), f"no fix in: {line}"
    if variable in SECRET_BEARING:
        assert "canary" not in stderr, "the value was echoed"
