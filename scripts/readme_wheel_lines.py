#!/usr/bin/env python3
"""Run the README's wheel lines as they are written there, and check that what each installs or starts lists its tools.

    python scripts/readme_wheel_lines.py --expect 77

The lines are read from the README's "Install it as an application" section, never copied
here: its first shell block, whose first line is `make dist` and whose other lines each
install or start the built wheel. `make dist` runs first, in the checkout, once. Each other
line then runs with `bash -c` in the checkout, exactly as written, with a new, empty home
folder of its own (so `~/...` and pipx's folders land there, and nothing of an earlier line
is found) and a PATH that also holds this environment's `pipx`, `uv` and `uvx` (the test
extras install them; a user brings their own). A line whose last word is the command starts
the server itself: `scripts/list_tools.py` runs the line as the server command. Any other
line installs it: the line must exit 0, its comment must name the installed command as a
`~/...` path, and that command, started from outside the checkout, must list the tools.
Exit 1 on the first line that fails, after saying which.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = "woodpecker-ci-mcp"
SECTION = "## Install it as an application"
TOOLS = ("pipx", "uv", "uvx")
HOME_PATH = re.compile(r"~/\S*/" + re.escape(PROGRAM) + r"\b")


def wheel_lines(readme: str) -> list[tuple[str, str]]:
    """The (command, comment) pairs of the section's first shell block, in order."""
    section = readme.split("\n" + SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", section, re.S | re.M)
    if block is None:
        raise SystemExit(f"README.md: no ```sh block under {SECTION!r}")
    pairs = []
    for line in block.group(1).splitlines():
        command, _, comment = line.partition(" #")
        if command.strip():
            pairs.append((command.strip(), comment.strip()))
    return pairs


def starts_the_server(command: str) -> bool:
    return command.split()[-1] == PROGRAM


def installed_command(comment: str, home: Path) -> Path:
    """The `~/...` path the comment names for the command the line installs, under `home`."""
    found = HOME_PATH.search(comment)
    if found is None:
        raise ValueError(f"the comment does not name the installed command as a ~/... path: {comment!r}")
    return home / found.group(0).removeprefix("~/")


def line_environment(home: Path, tools: Path) -> dict[str, str]:
    """This environment with a new home, the tools' folder first on PATH, and no pip, pipx, uv or virtualenv settings that would point elsewhere."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIPX_", "UV_", "VIRTUAL_ENV", "PYTHONHOME", "WOODPECKER", "ELICITATION"))
    }
    # Keep the download caches where they are: a new home would only make every line fetch
    # the dependencies again, and what is checked is the lines, not the network.
    env.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    env["HOME"] = str(home)
    env["PATH"] = f"{tools}{os.pathsep}{env.get('PATH', '')}"
    return env


def list_tools(argv: list[str], expect: int, env: dict[str, str], cwd: Path) -> bool:
    checker = [sys.executable, str(ROOT / "scripts" / "list_tools.py"), "--expect", str(expect)]
    return subprocess.run([*checker, "--cwd", str(cwd), "--", *argv], env=env).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", type=int, required=True, help="the number of tools each must list")
    options = parser.parse_args()
    lines = wheel_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    if not lines or lines[0][0] != "make dist":
        print(f"README.md: the block under {SECTION!r} must start with `make dist`", file=sys.stderr)
        return 1
    print(f"README.md, {SECTION[3:]}: {len(lines)} lines", flush=True)
    if subprocess.run(["bash", "-c", lines[0][0]], cwd=ROOT).returncode != 0:
        print(f"failed: {lines[0][0]}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="readme-wheel-lines-") as scratch:
        tools = Path(scratch) / "tools"
        tools.mkdir()
        bin_dir = Path(sys.executable).parent
        for tool in TOOLS:
            if (bin_dir / tool).exists():
                (tools / tool).symlink_to(bin_dir / tool)
        for number, (command, comment) in enumerate(lines[1:], start=1):
            home = Path(scratch) / f"home-{number}"
            home.mkdir()
            env = line_environment(home, tools)
            print(f"\n$ {command}", flush=True)
            if starts_the_server(command):
                ok = list_tools(["bash", "-c", command], options.expect, env, ROOT)
            else:
                done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env)
                try:
                    program = installed_command(comment, home)
                except ValueError as error:
                    print(error, file=sys.stderr)
                    return 1
                ok = done.returncode == 0 and list_tools([str(program)], options.expect, env, home)
            if not ok:
                print(f"failed: {command}", file=sys.stderr)
                return 1
            shutil.rmtree(home)
    return 0


if __name__ == "__main__":
    sys.exit(main())
