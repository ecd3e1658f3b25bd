"""Start a real Woodpecker (prebuilt server and agent binaries) against the forge fake, on 127.0.0.1.

Nothing here builds Woodpecker: the binaries come from the archives in ../shared/woodpecker/bin
(tests/real/binaries.py), or WOODPECKER_MCP_REAL_BIN_DIR names one unpacked folder holding `server`
and `agent`. `python -m tests.real.harness up [--version X.Y.Z] [--port P]` starts one, seeds the
scenario, prints one JSON line (url, version, admin_login, user_login, tokens by login, forge_url)
and serves until SIGTERM or SIGINT, then stops all it started.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.real.binaries import BinaryError, unpacked
from tests.real.forge_fake import Forge, ForgeRepo, ForgeServer, wait_for

BIN_DIR_ENV = "WOODPECKER_MCP_REAL_BIN_DIR"
VERSION_ENV = "WOODPECKER_MCP_REAL_VERSION"
ADMIN = "root"
USER = "alice"
OUTSIDER = "mallory"
ORG = "acme"
SECRET = "real-woodpecker-shared-secret"


SHARED_BIN = Path(__file__).resolve().parents[3] / "shared" / "woodpecker" / "bin"


def bin_dir(shared: Path = SHARED_BIN) -> Path | None:
    """WOODPECKER_MCP_REAL_BIN_DIR (one unpacked folder) if set, else the shared archive of
    WOODPECKER_MCP_REAL_VERSION, else the newest present."""
    value = os.environ.get(BIN_DIR_ENV, "")
    if not value:
        try:
            return unpacked(shared, os.environ.get(VERSION_ENV) or None)[1]
        except (BinaryError, OSError):
            return None
    path = Path(value)
    if not (path / "server").is_file() or not (path / "agent").is_file():
        return None
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Real:
    url: str
    forge: Forge
    forge_url: str
    tokens: dict[str, str]
    workdir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    version: str = ""
    start_agent: Callable[[], None] = field(default=lambda: None, repr=False)

    @property
    def cancel_kills_agent(self) -> bool:
        """3.11-3.13's local-backend agent panics when a running pipeline is cancelled, then exits
        (upstream PR #6008, first in 3.14; ../shared/woodpecker/bin/README.md)."""
        return bool(self.version) and version_key(self.version) < (3, 14, 0)

    def revive_agent_after_cancel(self, timeout: float = 30.0) -> None:
        """On a version whose agent dies on a cancel: wait (bounded) for it to exit, start a new one."""
        if not self.cancel_kills_agent:
            return
        agent = self.procs[-1]
        try:
            agent.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return  # it survived this cancel (nothing was running): keep it
        self.start_agent()

    def client(self, login: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[login]}"} if login else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0, follow_redirects=False)

    def db(self) -> Path:
        return self.workdir / "woodpecker.sqlite"


def _login(url: str, login: str) -> str:
    """The browser's OAuth dance without a browser, then a personal token from the session."""
    with httpx.Client(base_url=url, timeout=30.0, follow_redirects=False) as http:
        first = http.get("/authorize")
        location = first.headers.get("location", "")
        state = parse_qs(urlsplit(location).query).get("state", [""])[0]
        assert first.status_code == 303 and state, (first.status_code, location)
        back = http.get("/authorize", params={"code": f"code-{login}", "state": state})
        assert back.status_code == 303, (back.status_code, back.text)
        assert "error" not in back.headers.get("location", ""), back.headers.get("location")
        config = http.get("/web-config.js").text
        csrf = re.search(r'WOODPECKER_CSRF\s*=\s*"([^"]+)"', config)
        assert csrf, config
        token = http.post("/api/user/token", headers={"X-CSRF-TOKEN": csrf.group(1)})
        assert token.status_code == 200, (token.status_code, token.text)
        return token.text.strip()


def _env(extra: dict[str, str]) -> dict[str, str]:
    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TZ") if k in os.environ}
    return {**base, **extra}


def _start(binary: Path, workdir: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """One Woodpecker binary in `workdir`, its output in `<name>.log` there."""
    # Appended to: an agent started again after one died (Real.revive_agent_after_cancel) keeps the
    # dead one's last words.
    with open(workdir / f"{binary.name}.log", "ab") as log:
        return subprocess.Popen([str(binary)], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)


def seed_forge(forge: Forge) -> dict[str, ForgeRepo]:
    """Users, an organisation and repositories with a pipeline config on their default branch."""
    for login in (ADMIN, USER, OUTSIDER):
        forge.add_user(login)
    forge.add_org(ORG, owner=ADMIN, members=(USER,))
    repos = {
        "app": forge.add_repo(ORG, "app", alice=(True, True, False)),
        "lib": forge.add_repo(ADMIN, "lib"),
        "private": forge.add_repo(ADMIN, "secret-sauce", private=True),
        "target": forge.add_repo(ORG, "app-renamed"),
    }
    for repo in repos.values():
        forge.commit(repo, "main", {".woodpecker/build.yaml": PIPELINE_OK})
    forge.commit(repos["app"], "broken", {".woodpecker/build.yaml": PIPELINE_FAIL})
    forge.commit(repos["app"], "two", {".woodpecker/a.yaml": PIPELINE_OK, ".woodpecker/b.yaml": PIPELINE_OK})
    forge.commit(repos["app"], "slow", {".woodpecker/build.yaml": PIPELINE_SLOW})
    return repos


PIPELINE_OK = """skip_clone: true
steps:
  - name: build
    image: sh
    commands:
      - echo building
      - echo done
"""
PIPELINE_FAIL = """skip_clone: true
steps:
  - name: test
    image: sh
    commands:
      - 'echo "FAIL: test_widget (tests/test_widget.py)"'
      - exit 1
"""
PIPELINE_SLOW = """skip_clone: true
steps:
  - name: wait
    image: sh
    commands:
      - sleep 600
"""


def server_version(binaries: Path) -> str:
    """`X.Y.Z` as the server binary itself says (`woodpecker-server version 3.17.0`)."""
    out = subprocess.run([str(binaries / "server"), "--version"], capture_output=True, text=True, timeout=30)
    found = re.search(r"(\d+\.\d+\.\d+)", out.stdout + out.stderr)
    if not found:
        raise RuntimeError(f"{binaries / 'server'} --version printed no version: {out.stdout!r}")
    return found.group(1)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@contextlib.contextmanager
def running(binaries: Path, agent: bool = True, port: int = 0) -> Iterator[Real]:
    workdir = Path(tempfile.mkdtemp(prefix="real-woodpecker-"))
    forge_server = ForgeServer()
    seed_forge(forge_server.forge)
    http_port, grpc_port, health_port = port or _free_port(), _free_port(), _free_port()
    url = f"http://127.0.0.1:{http_port}"
    procs: list[subprocess.Popen[bytes]] = []
    real = Real(url, forge_server.forge, forge_server.url, {}, workdir, procs, server_version(binaries))
    server_env = _env(
        {
            "WOODPECKER_HOST": url,
            "WOODPECKER_SERVER_ADDR": f"127.0.0.1:{http_port}",
            "WOODPECKER_GRPC_ADDR": f"127.0.0.1:{grpc_port}",
            "WOODPECKER_AGENT_SECRET": SECRET,
            "WOODPECKER_GRPC_SECRET": SECRET + "-grpc",
            "WOODPECKER_GITEA": "true",
            "WOODPECKER_GITEA_URL": forge_server.url,
            "WOODPECKER_GITEA_CLIENT": "client",
            "WOODPECKER_GITEA_SECRET": "client-secret",
            "WOODPECKER_ADMIN": ADMIN,
            "WOODPECKER_OPEN": "true",
            "WOODPECKER_DATABASE_DRIVER": "sqlite3",
            # Every transaction takes SQLite's write lock when it begins (go-sqlite3's `_txlock`), so one
            # that meets another writer waits out the busy timeout: a deferred one that reads and then
            # writes is refused at once ("database is locked", HTTP 500), as 3.11 did while an agent's
            # report and a new pipeline were written together. The file stays `db()`.
            "WOODPECKER_DATABASE_DATASOURCE": f"{workdir / 'woodpecker.sqlite'}?_txlock=immediate",
            "WOODPECKER_DEFAULT_CANCEL_PREVIOUS_PIPELINE_EVENTS": "",
            "WOODPECKER_LOG_LEVEL": "info",
        }
    )
    agent_env = _env(
        {
            "WOODPECKER_SERVER": f"127.0.0.1:{grpc_port}",
            "WOODPECKER_AGENT_SECRET": SECRET,
            "WOODPECKER_BACKEND": "local",
            "WOODPECKER_BACKEND_LOCAL_TEMP_DIR": str(workdir / "agent-tmp"),
            "WOODPECKER_AGENT_CONFIG_FILE": str(workdir / "agent.conf"),
            "WOODPECKER_HEALTHCHECK_ADDR": f"127.0.0.1:{health_port}",
            "WOODPECKER_MAX_WORKFLOWS": "4",
            "WOODPECKER_HOSTNAME": "real-agent",
        }
    )

    def start_agent() -> None:
        procs.append(_start(binaries / "agent", workdir, agent_env))

    real.start_agent = start_agent
    try:
        procs.append(_start(binaries / "server", workdir, server_env))

        def healthy() -> bool:
            try:
                return httpx.get(f"{url}/healthz", timeout=2.0).status_code == 204
            except httpx.HTTPError:
                return False

        wait_for(healthy, 60, "the server's /healthz")
        for login in (ADMIN, USER, OUTSIDER):
            real.tokens[login] = _login(url, login)
        if agent:
            (workdir / "agent-tmp").mkdir()
            start_agent()
            with real.client(ADMIN) as admin:
                wait_for(lambda: bool(admin.get("/api/agents").json()), 60, "the agent to register")
        yield real
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        forge_server.close()
        if not os.environ.get("WOODPECKER_MCP_REAL_KEEP"):
            shutil.rmtree(workdir, ignore_errors=True)


def _say(text: str) -> None:
    print(f"real-woodpecker: {text}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    """`up [--version X.Y.Z] [--port P]`: a seeded real Woodpecker, one JSON line, until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m tests.real.harness")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a seeded real Woodpecker and print one JSON line")
    up.add_argument(
        "--version", help="X.Y.Z or vX.Y.Z of an archive in ../shared/woodpecker/bin (default: newest)"
    )
    up.add_argument("--port", type=int, default=0, help="the HTTP port (default 0: a free one)")
    args = parser.parse_args(argv)
    if os.environ.get(BIN_DIR_ENV):
        binaries = bin_dir()
        if binaries is None:
            parser.error(f"{BIN_DIR_ENV} names no folder holding `server` and `agent`")
    else:
        try:
            binaries = unpacked(SHARED_BIN, args.version)[1]
        except (BinaryError, OSError) as exc:
            parser.error(str(exc))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    from tests.real.scenario import seed  # imports this module

    _say(f"starting {binaries.name[:12]}")
    with running(binaries, port=args.port) as real:
        _say(f"Woodpecker {real.version} at {real.url}; seeding the scenario (pipelines really run)")
        seed(real)
        info: dict[str, Any] = {
            "url": real.url,
            "version": real.version,
            "admin_login": ADMIN,
            "user_login": USER,
            "tokens": real.tokens,
            "forge_url": real.forge_url,
        }
        print(json.dumps(info), flush=True)
        _say("ready; SIGTERM or Ctrl-C stops it")
        while not stop.wait(0.5):
            pass
        _say("stopping")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
