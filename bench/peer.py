"""The peer server the benchmark compares against: `woodpecker-ci-mcp` 0.5.2 from the package index (fastmcp, Python 3.13).

It is installed into a virtual environment of its own, `bench/.peer-venv` (ignored by git),
created on the first run that wants it; the project's own environment is never touched.
Where no Python 3.13 is found the peer is skipped and the reason is printed instead.

Its settings: WOODPECKER_SERVER, WOODPECKER_TOKEN, WOODPECKER_MCP_TRANSPORT=stdio|http,
HOST and PORT (HTTP at /mcp, stateless, forwarding the caller's bearer to Woodpecker).
"""

import glob
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "woodpecker-ci-mcp"
VERSION = "0.5.2"
VENV = Path(__file__).resolve().parent / ".peer-venv"
# The peer's names for the tools the benchmark calls (ours -> theirs), and their argument names.
READ_TOOL = "get_repo"
LOG_TOOL = "get_step_logs"


@dataclass(frozen=True)
class Peer:
    argv: list[str]
    python: str
    version: str

    def env(self, base: dict[str, str], url: str, token: str, **extra: str) -> dict[str, str]:
        return {
            **base,
            "WOODPECKER_SERVER": url,
            "WOODPECKER_TOKEN": token,
            "WOODPECKER_MCP_TRANSPORT": "stdio",
            **extra,
        }


def find_python313() -> str | None:
    """A Python 3.13 interpreter that runs: one pyenv installed, or `python3.13` on PATH (a pyenv shim
    on PATH fails where 3.13 is not the selected version, so each candidate is tried)."""
    candidates: list[str] = []
    for root in filter(None, (os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv"))):
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.13*", "bin", "python3.13")))
    on_path = shutil.which("python3.13")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        try:
            done = subprocess.run([candidate, "-I", "-c", "pass"], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return candidate
    return None


def _installed_version(python: Path) -> str | None:
    done = subprocess.run(
        # -I: the working directory (this project, with its own egg-info of the same name) stays off sys.path.
        [str(python), "-I", "-c", f"from importlib.metadata import version; print(version({PACKAGE!r}))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def ensure(log: Callable[[str], None]) -> Peer | str:
    """The peer, installed on demand; or a sentence saying why it cannot run here."""
    python = VENV / "bin" / "python"
    script = VENV / "bin" / PACKAGE
    if not (python.exists() and _installed_version(python) == VERSION):
        base = find_python313()
        if base is None:
            return "no Python 3.13 found (python3.13 on PATH or under pyenv): the peer is skipped"
        log(f"installing the peer {PACKAGE}=={VERSION} into {VENV.parent.name}/{VENV.name} ...")
        steps = [
            [base, "-m", "venv", "--clear", str(VENV)],
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"{PACKAGE}=={VERSION}",
            ],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
                return f"the peer could not be installed ({tail[0][:200]}): the peer is skipped"
    if not script.exists():
        return f"{script.name} is missing from the peer's environment: the peer is skipped"
    found = _installed_version(python) or "?"
    return Peer(argv=[str(script)], python=str(python), version=found)
