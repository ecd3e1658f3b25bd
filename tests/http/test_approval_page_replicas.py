"""Replicas (issue 39, ADR 0085): a question asked through one server process is answered on the page
another serves, at most once. Real parts: two `woodpecker-ci-mcp --transport http` processes over one
real Redis behind a small path-routing proxy on their one public origin (MCP and the provider's return
to the first, the page to the second), a real OpenID provider (npm oidc-provider) and real Chromium.
Without pages and sign-ins in Redis the second replica knows no such page, and the test fails."""

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import pytest
import redis

from sandbox.server import Sandbox
from tests.fixtures.chromium import Chromium, chromium_binary
from tests.fixtures.http import ServerProcess, free_port, mcp_client, stop_together
from tests.fixtures.oidc_provider import CLIENT_ID, CLIENT_SECRET, openid_provider
from tests.http.test_approval_page_signed_in import DELETE, SECRET, audit_lines, deletes
from tests.http.test_replicas import new_key
from tests.http.test_token_linking import PageFiller, link_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]


def forget_what_the_replicas_stored(url: str) -> None:
    """The replicas write under the server's default prefix, in this worker's database: leave nothing
    there for a later test that reads it back (one test at a time runs per worker)."""
    client = redis.Redis.from_url(url)
    try:
        for key in list(client.scan_iter(match="woodpecker-mcp:*")):
            client.delete(key)
    finally:
        client.close()


class Proxy:
    """The replicas' one public origin: each connection carries one request (`Connection: close` is
    put in its head), sent to the replica `route` names for its path; `served` says who served what."""

    def __init__(self, route: Callable[[str], str], ports: dict[str, int]) -> None:
        self.route = route
        self.ports = ports
        self.served: list[tuple[str, str, str]] = []

    async def handle(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            head = b""
            while b"\r\n\r\n" not in head:
                try:
                    head += await client.receive(65536)
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
            head, _, rest = head.partition(b"\r\n\r\n")
            first, *fields = head.split(b"\r\n")
            method, target, _version = first.decode("latin-1").split(" ", 2)
            path = target.split("?", 1)[0]
            replica = self.route(path)
            self.served.append((method, path, replica))
            kept = [f for f in fields if not f.lower().startswith((b"connection:", b"keep-alive:"))]
            request = b"\r\n".join([first, *kept, b"Connection: close"]) + b"\r\n\r\n" + rest
            async with await anyio.connect_tcp("127.0.0.1", self.ports[replica]) as upstream:
                await upstream.send(request)
                async with anyio.create_task_group() as group:

                    async def up() -> None:
                        try:
                            async for chunk in client:
                                await upstream.send(chunk)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            pass

                    group.start_soon(up)
                    try:
                        async for chunk in upstream:
                            await client.send(chunk)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                    group.cancel_scope.cancel()


@asynccontextmanager
async def proxy(route: Callable[[str], str], ports: dict[str, int], port: int) -> AsyncIterator[Proxy]:
    front = Proxy(route, ports)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, front.handle)
        try:
            yield front
        finally:
            group.cancel_scope.cancel()


class Routes:
    """MCP, the linking page and the provider's return to replica one; the approval page to `page`."""

    def __init__(self) -> None:
        self.page = "two"

    def __call__(self, path: str) -> str:
        if path.startswith("/approve/") and path != "/approve/signed-in":
            return self.page
        return "one"


def approve_across(binary: str, profile: Path, url: str, routes: Routes) -> dict[str, Any]:
    """Sign in as alice, approve on replica two, post the other decision there again, then on replica
    one, and reload there."""
    browser = Chromium(binary, profile)
    try:
        seen: dict[str, Any] = {}
        browser.navigate(url)
        seen["at_provider"] = browser.evaluate("location.href")
        browser.evaluate(
            "document.querySelector('input[name=login]').value = 'alice';"
            "document.querySelector('input[name=password]').value = 'any';"
        )
        browser.send(
            "Runtime.evaluate", session=True, expression="document.querySelector('form').requestSubmit()"
        )
        browser.wait_for("Page.loadEventFired")
        seen["outcome"] = browser.evaluate("document.getElementById('outcome')?.dataset.outcome ?? null")
        seen["text"] = browser.evaluate("document.body.innerText")
        fields = browser.evaluate(
            "({page: document.querySelector('input[name=page]').value,"
            " csrf: document.querySelector('input[name=csrf]').value})"
        )
        browser.send(
            "Runtime.evaluate",
            session=True,
            expression="document.querySelector('button[value=approve]').click()",
        )
        browser.wait_for("Page.loadEventFired")
        seen["after"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        replay = json.dumps({**fields, "decision": "decline"})
        post = (
            "const f = document.createElement('form'); f.method = 'post'; f.action = location.href;"
            f"for (const [k, v] of Object.entries({replay})) {{"
            " const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v;"
            " f.appendChild(i); }"
            "document.body.appendChild(f); f.submit();"
        )
        browser.send("Runtime.evaluate", session=True, expression=post)
        browser.wait_for("Page.loadEventFired")
        seen["replayed_on_two"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        routes.page = "one"
        browser.send("Runtime.evaluate", session=True, expression=post)
        browser.wait_for("Page.loadEventFired")
        seen["replayed_on_one"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        browser.navigate(url)
        seen["reloaded_on_one"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        return seen
    finally:
        browser.close()


class Person:
    def __init__(self, sandbox: Sandbox, tmp_path: Path, routes: Routes) -> None:
        self.linker = PageFiller(sandbox.admin_token)
        self.tmp_path = tmp_path
        self.routes = routes
        self.pages: list[dict[str, Any]] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams) and "/link/" in params.url:
            return await self.linker(context, params)
        if not isinstance(params, types.ElicitRequestURLParams) or self.pages:
            return types.ElicitResult(action="cancel")
        seen = await anyio.to_thread.run_sync(
            approve_across, chromium_binary(), self.tmp_path / "profile", params.url, self.routes
        )
        self.pages.append(seen)
        return types.ElicitResult(action="accept")


async def test_a_question_asked_on_one_replica_is_approved_on_the_page_another_serves_once(
    sandbox: Sandbox, redis_url: str, tmp_path: Path
) -> None:
    front_port = free_port()
    base = f"http://localhost:{front_port}"
    ring, link_keys = f"{new_key()},{new_key()}", new_key()
    async with openid_provider(f"{base}/approve/signed-in", f"{base}/mcp") as idp:

        def environ(name: str) -> dict[str, str]:
            env = link_env(sandbox, idp.issuer, f"{base}/mcp", tmp_path / f"{name}.audit.jsonl")
            env.update(
                {
                    "WOODPECKER_MCP_TOKEN_STORE": redis_url,
                    "WOODPECKER_MCP_SEAL_KEYS": ring,
                    "WOODPECKER_MCP_LINK_KEYS": link_keys,
                    "WOODPECKER_MCP_APPROVAL_CLIENT_ID": CLIENT_ID,
                    "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET": CLIENT_SECRET,
                    "WOODPECKER_MCP_APPROVAL_PAGE": "always",
                    "WOODPECKER_MCP_APPROVAL_WAIT_SECONDS": "5",
                }
            )
            return env

        replicas = {name: ServerProcess(environ(name), tmp_path, name) for name in ("one", "two")}
        try:
            for replica in replicas.values():
                await anyio.to_thread.run_sync(replica.wait_until_live)
            routes = Routes()
            ports = {name: r.port for name, r in replicas.items()}
            async with proxy(routes, ports, front_port) as front:
                person = Person(sandbox, tmp_path, routes)
                access = await idp.access_token("alice")
                with anyio.fail_after(180):
                    async with mcp_client(base, access, elicitation_callback=person) as client:
                        assert not (await client.call_tool("get_current_user", {})).is_error
                        result = await client.call_tool("delete_secret", SECRET)
        finally:
            stop_together(*replicas.values())
            forget_what_the_replicas_stored(redis_url)
    seen = person.pages[0]
    assert seen["at_provider"].startswith(idp.issuer)
    assert "Signed in as alice@example.org" in seen["text"]
    assert (seen["outcome"], seen["after"]) == ("pending", "approved")
    assert (seen["replayed_on_two"], seen["replayed_on_one"], seen["reloaded_on_one"]) == (
        "approved",
        "approved",
        "approved",
    )
    assert not result.is_error, result
    assert deletes(sandbox) == [DELETE]  # exactly one write
    # The page was served by replica two (the decision posted there), the sign-in's return by one,
    # and every MCP request by one: the question crossed replicas.
    served = front.served
    assert ("POST", "/approve/signed-in", "two") not in served
    assert any(m == "POST" and p.startswith("/approve/") and r == "two" for m, p, r in served)
    assert any(p == "/approve/signed-in" and r == "one" for _m, p, r in served)
    assert {r for _m, p, r in served if p.startswith("/mcp")} == {"one"}
    approved = [line for line in audit_lines(tmp_path / "one.audit.jsonl") if line["outcome"] == "approved"]
    assert [(line["path"], line["approver"]["sub"]) for line in approved] == [("page", "alice")]
    assert not any(
        line["outcome"] == "approved"
        for line in (
            audit_lines(tmp_path / "two.audit.jsonl") if (tmp_path / "two.audit.jsonl").exists() else []
        )
    )
