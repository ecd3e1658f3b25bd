"""Running the sandbox: uvicorn on a loopback socket, in a daemon thread for tests or in the foreground for the CLI."""

import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import uvicorn

from sandbox.app import CONTROL_PREFIX, Echo, Fault, RecordedRequest, SandboxApp, SandboxState
from sandbox.seed import ADMIN_LOGIN, BIG_LOG_STEPS, OUTSIDER_LOGIN, USER_LOGIN
from sandbox.world import VERSIONS, World

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


def new_tokens() -> dict[str, str]:
    """One random session token per seeded login, fresh for every start."""
    return {login: secrets.token_hex(32) for login in (ADMIN_LOGIN, USER_LOGIN, OUTSIDER_LOGIN)}


def bind_loopback(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0 = any free port), bound before the server starts."""
    # proto must say TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto is
    # IPPROTO_TCP, and without it every keep-alive request waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def make_server(app: SandboxApp) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    return uvicorn.Server(config)


@dataclass
class Sandbox:
    """A running simulated Woodpecker. `url` is the server root (no /api, no trailing slash)."""

    url: str
    state: SandboxState

    @property
    def version(self) -> str:
        return VERSIONS[self.state.version]

    @property
    def tokens(self) -> dict[str, str]:
        """login -> token for the admin, the ordinary user and the user with no access."""
        return dict(self.state.tokens)

    admin_login = ADMIN_LOGIN
    user_login = USER_LOGIN
    outsider_login = OUTSIDER_LOGIN
    big_log_steps = BIG_LOG_STEPS

    @property
    def admin_token(self) -> str:
        return self.state.tokens[ADMIN_LOGIN]

    @property
    def user_token(self) -> str:
        return self.state.tokens[USER_LOGIN]

    @property
    def outsider_token(self) -> str:
        return self.state.tokens[OUTSIDER_LOGIN]

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def repository_secret(self) -> tuple[int, str]:
        """(repository id, name) of the seeded repository secret with the lowest id: one to show a
        newcomer, named from the data it is in."""
        with self.state.lock:
            first = min((s for s in self.state.world.secrets.values() if s.repo_id), key=lambda s: s.id)
        return first.repo_id, first.name

    @property
    def requests(self) -> list[RecordedRequest]:
        """The live request log (control routes under /_sandbox/ are not recorded)."""
        return self.state.requests

    @property
    def world(self) -> World:
        """The current state, for assertions a test cannot make over HTTP. Hold `state.lock` to mutate."""
        return self.state.world

    def reset(self) -> None:
        """Re-seed all data, clear the request log, injected faults and echoes; tokens stay valid."""
        self.state.reset()

    def clear_requests(self) -> None:
        with self.state.lock:
            self.state.requests.clear()

    def state_changing_requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return [r for r in self.state.requests if r.state_changing]

    def inject_fault(
        self, method: str, path: str, status: int, body: str = "", times: int = 1, delay: float = 0.0
    ) -> None:
        """Make the next `times` requests to exactly `method` + raw `path` answer `status` (after `delay` s)."""
        if path.startswith(CONTROL_PREFIX):
            raise ValueError("control routes cannot fail")
        with self.state.lock:
            self.state.faults.append(Fault(method.upper(), path, status, body, times, delay))

    def inject_echo(
        self, method: str, path: str, into: Literal["answer", "log"] = "answer", times: int = 1
    ) -> None:
        """Put an echoing upstream in front of the next `times` 2xx JSON answers to `method` + raw
        `path`: they carry the request's Authorization header (see `Echo`)."""
        if path.startswith(CONTROL_PREFIX):
            raise ValueError("control routes do not echo")
        with self.state.lock:
            self.state.echoes.append(Echo(method.upper(), path, into, times))

    def info(self) -> dict[str, Any]:
        """What the command line prints: url, version, tokens and where the big logs are."""
        return {
            "url": self.url,
            "api_url": self.api_url,
            "version": self.version,
            "admin_login": ADMIN_LOGIN,
            "user_login": USER_LOGIN,
            "tokens": self.tokens,
            "big_logs": [
                {"lines": lines, "repo_id": repo_id, "number": number, "step_id": step_id}
                for lines, (repo_id, number, step_id) in BIG_LOG_STEPS.items()
            ],
        }


@contextmanager
def running_sandbox(
    version: str = "3.17", clock: Callable[[], float] = time.time, history: int = 0
) -> Iterator[Sandbox]:
    """Serve a fresh sandbox on 127.0.0.1 (a free port) in a daemon thread; stop it on exit.

    `clock` is the sandbox's time (seconds since the epoch): running pipelines finish by it, so a
    test that passes its own clock decides when they do.
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown Woodpecker version {version!r}; choose one of {sorted(VERSIONS)}")
    state = SandboxState(version=version, tokens=new_tokens(), clock=clock, history=history)
    server = make_server(SandboxApp(state))
    sock = bind_loopback(0)
    port = sock.getsockname()[1]
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="woodpecker-sandbox", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the sandbox server did not start")
            time.sleep(0.002)
        yield Sandbox(url=f"http://127.0.0.1:{port}", state=state)
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_TIMEOUT)
        sock.close()
