"""Our server as a user installs it: the checkout built and installed, without the test extras, into a virtual environment of its own.

The peer runs from a clean environment (`bench/.peer-venv`) while the development
environment carries the test extras, and some of them change what the server imports: with
click, pygments and rich present (import-linter pulls them in), httpx's `__init__` imports its
command line, `httpx._main`, and with it all three (about 50 ms of a cold start). So the figures
set against the peer run our server from `bench/.ours-venv` (ignored by git): `pip install` of
the checkout (a wheel built from it, with the dependencies `pyproject.toml` declares and nothing
else), rebuilt whenever the sources or `pyproject.toml` change, and kept otherwise.
"""

import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(__file__).resolve().parent / ".ours-venv"
STAMP = VENV / "source-fingerprint"
PACKAGES = ("domain", "ports", "adapters", "entrypoints", "sandbox")
SCRIPT = "woodpecker-ci-mcp"


def sources() -> list[Path]:
    """Everything the installed package is built from: pyproject.toml, the README and licence, the packages' files."""
    files = [ROOT / "pyproject.toml", ROOT / "README.md", *sorted(ROOT.glob("LICENSE*"))]
    for package in PACKAGES:
        files += sorted(
            p for p in (ROOT / package).rglob("*") if p.is_file() and "__pycache__" not in p.parts
        )
    return files


def fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sources():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def ensure(log: Callable[[str], None]) -> list[str] | str:
    """The console script's argv in the clean environment, built or rebuilt on demand; or a sentence saying why not."""
    script = VENV / "bin" / SCRIPT
    wanted = fingerprint()
    if script.exists() and STAMP.exists() and STAMP.read_text().strip() == wanted:
        return [str(script)]
    log(
        f"installing this checkout into {VENV.parent.name}/{VENV.name} (its sources changed or it is new) ..."
    )
    python = VENV / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="bench-ours-") as tree:
        # A copy of the sources, so the build leaves no build/ or egg-info behind in the checkout
        # and no stale file of an earlier build can reach the wheel.
        for path in sources():
            target = Path(tree) / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(VENV)],
            # A non-editable install: pip builds a wheel of the copy and installs that.
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", tree],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, cwd=tree)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
                return f"this checkout could not be installed cleanly ({tail[0][:200]})"
    if not script.exists():
        return f"{SCRIPT} is missing from the clean environment"
    STAMP.write_text(wanted + "\n")
    return [str(script)]
