"""`python -m tests.real.harness up --version V --port 0`, the stable interface DEVELOPERS.md names: per version
in ../shared/woodpecker/bin, one JSON line on stdout, Woodpecker's own binary on that port, the scenario seeded,
and everything stopped on SIGTERM (docs/adr/0057)."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.real.binaries import versions
from tests.real.harness import ADMIN, SHARED_BIN, USER

pytestmark = [pytest.mark.real_woodpecker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _listening_binary(port: int) -> str:
    """The executable of the process holding a listening socket on 127.0.0.1:`port` (from /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
            if any(f"socket:[{inode}]" in links for inode in inodes):
                return os.readlink(proc / "exe")
        except OSError:
            continue
    return ""


@pytest.mark.parametrize("version", versions(SHARED_BIN) if SHARED_BIN.is_dir() else ["missing"])
def test_up_prints_one_json_line_and_serves_woodpecker_until_sigterm(version: str) -> None:
    if version == "missing":
        pytest.fail(f"no Woodpecker archives in {SHARED_BIN.name}: the real suite cannot run")
    env = {k: v for k, v in os.environ.items() if k != "WOODPECKER_MCP_REAL_BIN_DIR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.real.harness", "up", "--version", f"v{version}", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # bounded by the harness's own waits and pytest's timeout
        assert line, proc.communicate(timeout=30)
        info = json.loads(line)
        assert (info["version"], info["admin_login"], info["user_login"]) == (version, ADMIN, USER)
        assert {ADMIN, USER} <= set(info["tokens"])
        port = int(info["url"].rsplit(":", 1)[1])
        assert Path(_listening_binary(port)).name == "server"
        assert httpx.get(f"{info['url']}/version", timeout=10).json()["version"] == version
        with httpx.Client(
            base_url=info["url"], headers={"Authorization": f"Bearer {info['tokens'][ADMIN]}"}
        ) as http:
            repos = http.get("/api/repos", params={"active": "true"}, timeout=10).json()
            assert {r["name"] for r in repos} >= {"app", "lib"}  # the scenario is seeded
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopping" in err
    assert _listening_binary(port) == ""
