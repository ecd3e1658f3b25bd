"""Liveness and readiness for a load balancer: no authentication, and nothing about the configuration.

`/healthz` answers 200 while the process serves requests. `/readyz` answers 200 only when every
injected probe (Woodpecker's `/healthz`, the token store, ...) says yes within its timeout; the
body names each check and "ok" or "failing", never a URL, host, error text or version.
"""

import json
import time
from collections.abc import Awaitable, Callable, Mapping

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

Probe = Callable[[], Awaitable[bool]]


class HealthEndpoints:
    """Answers the two health paths itself and passes every other request to `app` untouched."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        probes: Mapping[str, Probe],
        liveness_path: str = "/healthz",
        readiness_path: str = "/readyz",
        probe_timeout_seconds: float = 5.0,
        cache_seconds: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.probes = dict(probes)
        self.liveness_path = liveness_path
        self.readiness_path = readiness_path
        self.probe_timeout_seconds = probe_timeout_seconds
        self.cache_seconds = cache_seconds
        self._monotonic = monotonic
        # One probe round at a time, and its answer reused briefly, so that many balancers
        # polling many replicas do not become load on Woodpecker.
        self._lock = anyio.Lock()
        self._cached: tuple[float, dict[str, bool]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path not in (self.liveness_path, self.readiness_path):
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _send(send, scope, 405, {"status": "method_not_allowed"}, [(b"allow", b"GET, HEAD")])
            return
        if path == self.liveness_path:
            await _send(send, scope, 200, {"status": "ok"})
            return
        checks = await self._checks()
        ready = all(checks.values())
        body = {
            "status": "ready" if ready else "not_ready",
            "checks": {name: "ok" if ok else "failing" for name, ok in checks.items()},
        }
        await _send(send, scope, 200 if ready else 503, body)

    async def _checks(self) -> dict[str, bool]:
        async with self._lock:
            now = self._monotonic()
            if self._cached is not None and now - self._cached[0] < self.cache_seconds:
                return self._cached[1]
            results: dict[str, bool] = {}

            async def run(name: str, probe: Probe) -> None:
                results[name] = await self._one(probe)

            async with anyio.create_task_group() as group:
                for name, probe in self.probes.items():
                    group.start_soon(run, name, probe)
            ordered = {name: results[name] for name in self.probes}
            self._cached = (self._monotonic(), ordered)
            return ordered

    async def _one(self, probe: Probe) -> bool:
        with anyio.move_on_after(self.probe_timeout_seconds):
            try:
                return bool(await probe())
            except Exception:
                # Any failure of a probe is "not ready"; its text may name hosts, so it is dropped.
                return False
        return False


async def _send(
    send: Send, scope: Scope, status: int, body: object, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"cache-control", b"no-store"),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else payload})
