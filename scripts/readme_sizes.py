#!/usr/bin/env python3
"""Hold the README's install sizes to what the two set-ups put on disk (issue 36).

    python3 scripts/readme_sizes.py lean   # after `make install` on a fresh checkout
    python3 scripts/readme_sizes.py dev    # after `make install-dev`

The figures are read from the README's quick start ("puts about 110 MB in `.venv`", "installs
about 1.7 GB more"), never copied here. `lean` measures `.venv` and records it; `dev` measures
`.venv` and the npm folders the tests use, less what `lean` recorded. Each must be within a third
of what the README says, or the script exits 1 saying which figure to correct and to what.
"""

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
LEAN_RECORD = VENV / ".lean-bytes"
NPM_FOLDERS = ("tests/node", "tests/conformance", "tests/apps_host", "tests/clients", "tests/oidc")
LEAN = re.compile(r"puts about (\d+(?:\.\d+)?) (MB|GB) in `\.venv`")
DEV = re.compile(r"installs\s+about (\d+(?:\.\d+)?) (MB|GB) more")
TOLERANCE = 1 / 3
UNITS = {"MB": 1_000_000, "GB": 1_000_000_000}


def said(pattern: re.Pattern[str], readme: str) -> int:
    """The size the README states, in bytes."""
    found = pattern.search(readme)
    if found is None:
        raise SystemExit(
            f"README.md: no figure matching {pattern.pattern!r}; this script reads it from there"
        )
    return round(float(found.group(1)) * UNITS[found.group(2)])


def size_of(path: Path) -> int:
    """Bytes on disk under `path`, links not followed (a link counts as itself)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def shown(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def check(what: str, measured: int, stated: int) -> bool:
    ok = abs(measured - stated) <= stated * TOLERANCE
    verdict = "ok" if ok else f"differs by more than a third: correct the README to about {shown(measured)}"
    print(f"README {what}: says about {shown(stated)}, measured {shown(measured)}: {verdict}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=("lean", "dev"))
    args = parser.parse_args(argv)
    readme = (ROOT / "README.md").read_text()
    if not VENV.is_dir():
        print(".venv is missing: run `make install` first", file=sys.stderr)
        return 1
    if args.phase == "lean":
        measured = size_of(VENV)
        LEAN_RECORD.write_text(str(measured))
        return 0 if check("`make install`", measured, said(LEAN, readme)) else 1
    if not LEAN_RECORD.is_file():
        print(
            "no lean size recorded: run this script with `lean` right after `make install`", file=sys.stderr
        )
        return 1
    lean = int(LEAN_RECORD.read_text())
    total = size_of(VENV) + sum(size_of(ROOT / folder / "node_modules") for folder in NPM_FOLDERS)
    return 0 if check("`make install-dev`", total - lean, said(DEV, readme)) else 1


if __name__ == "__main__":
    sys.exit(main())
