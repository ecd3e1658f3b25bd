"""Liveness and readiness over a real loopback socket: no auth, honest status, nothing leaked."""

import anyio
import httpx
import pytest

from adapters.http_health import HealthEndpoints
from tests.fixtures.http import EchoApp, serve_asgi

pytestmark = pytest.mark.anyio


class FakeProbe:
    def __init__(self, outcome: str = "up") -> None:
        self.outcome = outcome
        self.calls = 0

    async def __call__(self) -> bool:
        self.calls += 1
        if self.outcome == "raises":
            raise ConnectionError("connect to https://woodpecker.internal:8000/healthz failed")
        if self.outcome == "hangs":
            await anyio.sleep(60)
        return self.outcome == "up"


async def test_liveness_is_200_ok_and_readiness_follows_the_probes() -> None:
    woodpecker, store = FakeProbe("up"), FakeProbe("up")
    inner = EchoApp()
    app = HealthEndpoints(inner, probes={"woodpecker": woodpecker, "token_store": store}, cache_seconds=0)
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        live = await client.get(url + "/healthz")
        ready = await client.get(url + "/readyz")
        woodpecker.outcome = "down"
        down = await client.get(url + "/readyz")
        still_live = await client.get(url + "/healthz")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"woodpecker": "ok", "token_store": "ok"}}
    assert down.status_code == 503
    assert down.json() == {"status": "not_ready", "checks": {"woodpecker": "failing", "token_store": "ok"}}
    assert still_live.status_code == 200
    assert inner.calls == 0


async def test_a_probe_that_raises_or_hangs_is_not_ready_and_its_error_text_is_not_shown() -> None:
    for outcome in ("raises", "hangs"):
        app = HealthEndpoints(EchoApp(), probes={"woodpecker": FakeProbe(outcome)}, probe_timeout_seconds=0.2)
        async with serve_asgi(app) as url, httpx.AsyncClient() as client:
            with anyio.fail_after(10):
                response = await client.get(url + "/readyz")
        assert response.status_code == 503, outcome
        assert "woodpecker.internal" not in response.text
        assert response.json()["checks"] == {"woodpecker": "failing"}


async def test_readiness_reuses_a_recent_answer_instead_of_asking_woodpecker_every_time() -> None:
    probe = FakeProbe("up")
    clock = [0.0]
    app = HealthEndpoints(
        EchoApp(), probes={"woodpecker": probe}, cache_seconds=2, monotonic=lambda: clock[0]
    )
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        for _ in range(5):
            assert (await client.get(url + "/readyz")).status_code == 200
        clock[0] += 3
        assert (await client.get(url + "/readyz")).status_code == 200
    assert probe.calls == 2


async def test_other_paths_pass_through_and_health_paths_take_only_get_and_head() -> None:
    inner = EchoApp()
    app = HealthEndpoints(inner, probes={"woodpecker": FakeProbe("up")})
    async with serve_asgi(app) as url, httpx.AsyncClient() as client:
        posted = await client.post(url + "/healthz", json={})
        head = await client.head(url + "/readyz")
        other = await client.post(url + "/mcp", json={})
    assert posted.status_code == 405
    assert (head.status_code, head.content) == (200, b"")
    assert other.status_code == 200
    assert inner.calls == 1
