"""The gateway built at its first call: nothing built before one, built once, closed only if built."""

import threading

import pytest

from adapters.first_call_gateway import FirstCallGateway
from ports.woodpecker import Credential, LogSearch, LogSearchRequest, LogWindow, LogWindowRequest, Request
from tests.fakes.woodpecker import FakeWoodpecker

pytestmark = pytest.mark.anyio


class ClosableFake(FakeWoodpecker):
    """The fake with the rest of the port and a count of closes."""

    closed = 0

    async def search_step_log(
        self, path: str, search: LogSearchRequest, credential: Credential | None
    ) -> LogSearch:
        return LogSearch(matches=(), total_matches=0, total_lines=0)

    async def read_step_log(
        self, path: str, window: LogWindowRequest, search: LogSearchRequest, credential: Credential | None
    ) -> tuple[LogWindow, LogSearch]:
        return await self.step_log(path, window, credential), await self.search_step_log(
            path, search, credential
        )

    async def aclose(self) -> None:
        self.closed += 1


async def test_the_first_call_builds_the_gateway_once_and_every_call_reaches_it() -> None:
    built: list[ClosableFake] = []

    def build() -> ClosableFake:
        built.append(ClosableFake({"/api/user": {"login": "ada"}}))
        return built[-1]

    gateway = FirstCallGateway(build)
    assert "not built yet" in repr(gateway) and built == []  # describing it builds nothing
    first = await gateway.send(Request("GET", "/api/user"), None)
    second = await gateway.send(Request("GET", "/api/user"), None)
    window = await gateway.step_log("/api/logs/1", LogWindowRequest(limit=10), None)
    found = await gateway.search_step_log("/api/logs/1", LogSearchRequest("x"), None)
    both = await gateway.read_step_log("/api/logs/1", LogWindowRequest(limit=10), LogSearchRequest("x"), None)
    assert len(built) == 1
    assert first.data == second.data == {"login": "ada"}
    assert (window, found) == both
    assert [c.path for c in built[0].calls] == ["/api/user", "/api/user"]
    await gateway.aclose()
    assert built[0].closed == 1


async def test_closing_before_any_call_builds_nothing_and_later_calls_are_refused() -> None:
    built: list[ClosableFake] = []

    def build() -> ClosableFake:
        built.append(ClosableFake())
        return built[-1]

    gateway = FirstCallGateway(build)
    await gateway.aclose()
    assert built == []
    assert "closed" in repr(gateway)
    with pytest.raises(RuntimeError, match="closed"):
        await gateway.send(Request("GET", "/api/user"), None)
    assert built == []


async def test_warming_runs_once_on_another_thread_and_builds_nothing() -> None:
    built: list[ClosableFake] = []
    warmed: list[str] = []

    def build() -> ClosableFake:
        built.append(ClosableFake({"/api/user": {"login": "ada"}}))
        return built[-1]

    gateway = FirstCallGateway(build, warm=lambda: warmed.append(threading.current_thread().name))
    gateway.start_warming()
    gateway.start_warming()
    await gateway.send(Request("GET", "/api/user"), None)  # waits for the warm-up to end
    assert warmed == ["gateway-warm-up"]
    assert threading.current_thread().name != "gateway-warm-up"
    assert len(built) == 1


async def test_the_first_call_waits_for_a_warm_up_still_running_instead_of_racing_it() -> None:
    order: list[str] = []
    release = threading.Event()

    def warm() -> None:
        release.wait(30)
        order.append("warmed")

    def build() -> ClosableFake:
        order.append("built")
        return ClosableFake({"/api/user": {"login": "ada"}})

    gateway = FirstCallGateway(build, warm=warm)
    gateway.start_warming()
    threading.Timer(0.05, release.set).start()
    await gateway.send(Request("GET", "/api/user"), None)
    assert order == ["warmed", "built"]


async def test_a_failing_warm_up_changes_nothing_and_warming_after_the_first_call_does_nothing() -> None:
    def warm() -> None:
        raise OSError("the CA file cannot be read")

    gateway = FirstCallGateway(lambda: ClosableFake({"/api/user": {"login": "ada"}}), warm=warm)
    gateway.start_warming()
    assert (await gateway.send(Request("GET", "/api/user"), None)).data == {"login": "ada"}

    late: list[int] = []
    later = FirstCallGateway(lambda: ClosableFake({"/api/user": {}}), warm=lambda: late.append(1))
    await later.send(Request("GET", "/api/user"), None)
    later.start_warming()
    await later.aclose()
    closed = FirstCallGateway(lambda: ClosableFake(), warm=lambda: late.append(2))
    await closed.aclose()
    closed.start_warming()
    assert late == [] and not [t for t in threading.enumerate() if t.name == "gateway-warm-up"]
