"""A 2025-11-25 session answers only the principal that opened it, and an id the owner map does not hold is refused."""

import itertools

import anyio
import httpx
import pytest
from starlette.types import Receive, Scope, Send

from adapters.mcp_http import PRINCIPAL_SCOPE_KEY, SessionOwners

pytestmark = pytest.mark.anyio


class SessionApp:
    """Stands in for the SDK's session manager: opens a session when none is presented, and
    serves any presented id it opened (it never forgets one, so every refusal is the gate's)."""

    def __init__(self) -> None:
        self.numbers = itertools.count(1)
        self.served: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        presented = dict(scope["headers"]).get(b"mcp-session-id")
        if presented is None:
            headers = [(b"mcp-session-id", f"s{next(self.numbers)}".encode())]
        else:
            self.served.append(f"{scope['method']} {presented.decode()}")
            headers = []
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})


class HeldOpenings(SessionApp):
    """Holds every opening of `holder` until `release` is set: initialize requests the SDK is still
    answering (they have no session id yet, only a place in the manager's count)."""

    def __init__(self, holder: str) -> None:
        super().__init__()
        self.holder = holder
        self.release = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        opening = dict(scope["headers"]).get(b"mcp-session-id") is None
        if opening and scope.get(PRINCIPAL_SCOPE_KEY) == self.holder:
            await self.release.wait()
        await super().__call__(scope, receive, send)


class PrincipalFromHeader:
    """What the bearer gate does, reduced to a header for the test."""

    def __init__(self, app: SessionOwners) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        who = dict(scope["headers"]).get(b"x-principal")
        inner = {**scope, PRINCIPAL_SCOPE_KEY: who.decode() if who else None}
        await self.app(inner, receive, send)


async def test_sessions_are_bound_to_their_opener_and_a_forgotten_one_is_refused_not_passed_through() -> None:
    sessions = SessionApp()
    app = PrincipalFromHeader(SessionOwners(sessions, capacity=2))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:

        async def open_as(who: str) -> str:
            response = await client.post("/mcp", headers={"x-principal": who})
            return response.headers["mcp-session-id"]

        async def use(who: str, session: str) -> int:
            headers = {"x-principal": who, "mcp-session-id": session}
            return (await client.post("/mcp", headers=headers)).status_code

        alice, bob = await open_as("alice"), await open_as("bob")
        assert await use("mallory", alice) == 404
        assert await use("alice", alice) == 200  # used last: bob's is now the least recent
        await open_as("carol")  # the manager is full: bob's, used least recently of the tied, is closed
        assert await use("bob", bob) == 404
        assert await use("alice", alice) == 200
        assert await use("alice", "s999") == 404
    assert sessions.served == ["POST s1", "DELETE s2", "POST s1"]


async def test_openings_under_way_count_for_their_opener_and_never_close_another_callers_session() -> None:
    # Openings in flight fill a manager as sessions do but were counted for nobody: a caller with
    # as many initialize requests under way as the manager holds sessions, and none finished, held
    # "the fewest", so its next opening closed another caller's live session (a pushed question
    # waiting on it among them). Its own openings are its share: the one past the limit is refused.
    sessions = HeldOpenings("mallory")
    app = PrincipalFromHeader(SessionOwners(sessions, capacity=2))
    statuses: list[int] = []
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:

        async def use(who: str, session: str) -> int:
            headers = {"x-principal": who, "mcp-session-id": session}
            return (await client.post("/mcp", headers=headers)).status_code

        async def open_as_mallory() -> None:
            statuses.append((await client.post("/mcp", headers={"x-principal": "mallory"})).status_code)

        alice = (await client.post("/mcp", headers={"x-principal": "alice"})).headers["mcp-session-id"]
        async with anyio.create_task_group() as openings:
            openings.start_soon(open_as_mallory)
            await anyio.wait_all_tasks_blocked()
            openings.start_soon(open_as_mallory)  # the manager is full: one session, one opening
            await anyio.wait_all_tasks_blocked()
            alice_meanwhile = await use("alice", alice)
            sessions.release.set()
        assert await use("alice", alice) == 200
    assert alice_meanwhile == 200
    assert f"DELETE {alice}" not in sessions.served
    assert sorted(statuses) == [200, 503]


@pytest.mark.parametrize(
    "repeated",
    [b"mcp-session-id", b"mcp-protocol-version", b"x-mcp-toolsets", b"X-MCP-Toolsets"],
)
async def test_a_repeated_mcp_header_is_refused_before_anything_reads_the_first(repeated: bytes) -> None:
    # The SDK and the toolsets filter read the first of repeated headers: a caller sending two
    # X-MCP-Toolsets could show one narrowing to a proxy and another to the server.
    sessions = SessionApp()
    app = PrincipalFromHeader(SessionOwners(sessions, capacity=2))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        once = await client.post("/mcp", headers=[(b"x-principal", b"alice"), (b"x-mcp-toolsets", b"logs")])
        twice = await client.post(
            "/mcp", headers=[(b"x-principal", b"alice"), (repeated, b"logs"), (repeated, b"crons")]
        )
    assert once.status_code == 200
    assert twice.status_code == 400
    assert twice.json()["error"] == {"code": -32600, "message": "Repeated MCP header"}
    assert sessions.served == []
