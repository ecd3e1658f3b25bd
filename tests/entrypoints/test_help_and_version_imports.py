"""`--help` and `--version` answer without importing pydantic, the catalogue, the SDK or httpx: a
gateway that starts a process per request pays whatever they import on every call (ADR 0052)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from entrypoints.cli.parser import build_parser

REPO_ROOT = Path(__file__).resolve().parents[2]

# Runs the command as `python -m entrypoints ARG` does, then reports every module it loaded.
PROBE = """
import json, runpy, sys
try:
    runpy.run_module("entrypoints", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
else:
    code = None
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

HEAVY = (
    "pydantic",
    "pydantic_core",
    "mcp",
    "mcp_types",
    "httpx",
    "httpcore",
    "anyio",
    "dependency_injector",
    "domain.woodpecker.catalogue",
    "entrypoints.settings.model",
    "entrypoints.settings.environment",
)


def run(option: str) -> tuple[str, dict[str, object]]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, option],
        capture_output=True,
        text=True,
        env=environ,
        cwd=REPO_ROOT,
        timeout=120,
    )
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return done.stdout, report


def heavy(modules: object) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in modules if any(m == root or m.startswith(root + ".") for root in HEAVY)]


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_and_version_import_nothing_heavy(option: str) -> None:
    out, report = run(option)
    assert report["code"] == 0
    assert out.strip(), f"{option} printed nothing"
    assert "entrypoints.cli.parser" in report["modules"]  # the probe did run the command
    assert heavy(report["modules"]) == []


def test_help_run_cheaply_is_the_same_text_as_help_built_in_a_full_process() -> None:
    # The same parser, whatever else this process (the test run) has imported.
    out, _ = run("--help")
    assert out == build_parser().format_help()
