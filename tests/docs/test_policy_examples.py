"""docs/policy.md's examples, run as written: each `toml` example saved under the name its comment gives,
each `$ woodpecker-ci-mcp policy check ...` line of a console block run by the installed command, and
its output (stdout and stderr) compared with the lines the docs show under it."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POLICY_DOC = ROOT / "docs" / "policy.md"
_EXAMPLE = re.compile(r"<!-- policy-example: (\S+) -->\n```toml\n(.*?)```", re.S)
_CONSOLE = re.compile(r"```console\n(.*?)```", re.S)
SCRIPT = Path(sys.executable).with_name("woodpecker-ci-mcp")


def examples() -> dict[str, str]:
    return dict(_EXAMPLE.findall(POLICY_DOC.read_text(encoding="utf-8")))


def commands() -> list[tuple[str, list[str]]]:
    """Each `$ ` line of the console blocks, with the lines shown under it."""
    found: list[tuple[str, list[str]]] = []
    for block in _CONSOLE.findall(POLICY_DOC.read_text(encoding="utf-8")):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            else:
                found[-1][1].append(line)
    return found


def test_the_docs_show_policies_that_start_and_policies_that_stop_the_server() -> None:
    assert len(examples()) >= 4
    outputs = [shown for _, shown in commands()]
    assert len(outputs) == len(examples())
    assert any("WOODPECKER_MCP_POLICY:" in " ".join(o) for o in outputs)
    assert any("WOODPECKER_MCP_POLICY:" not in " ".join(o) for o in outputs)


@pytest.mark.slow
@pytest.mark.parametrize(("command", "shown"), commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_example_of_the_docs_gives_the_output_shown(
    tmp_path: Path, command: str, shown: list[str]
) -> None:
    for name, text in examples().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    words = shlex.split(command)
    assert words[:3] == ["woodpecker-ci-mcp", "policy", "check"], command
    program = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "entrypoints"]
    done = subprocess.run(
        [*program, *words[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "", "PYTHONPATH": str(ROOT)},
    )
    refused = any(": WOODPECKER_MCP_POLICY: " in line for line in shown)
    assert done.returncode == (1 if refused else 0), done.stderr
    assert (done.stderr if refused else done.stdout).splitlines() == shown
    assert (done.stdout if refused else done.stderr) == ""
