"""URL-mode elicitation over a real stdio server (ADR 0064), spoken as raw JSON-RPC by a client that
declares only `elicitation: {url: {}}` on 2025-11-25: the server offers the approval page's link in
`elicitation/create` (mode `url`); an accept only means the person agreed to open it, the page's
form decides, and `notifications/elicitation/complete` follows the page's answer. No browser is
available to the server here: the link reaches the person through the client alone."""

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from sandbox.server import Sandbox
from tests.fixtures.mcp import server_environment
from tests.mcp.guarded_calls import WIDENING
from tests.mcp.test_approval_page_stdio import answer, deletes

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class RawClient:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.seen: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self._stdin.send((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())

    async def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await self._stdout.receive_until(b"\n", 1 << 22))
        self.seen.append(message)
        return message

    async def until(self, wanted: Any) -> dict[str, Any]:
        while not wanted(message := await self.receive()):
            pass
        return message


@asynccontextmanager
async def url_mode_client(sandbox: Sandbox) -> AsyncIterator[RawClient]:
    env = server_environment(sandbox.url, sandbox.admin_token)
    async with await anyio.open_process([sys.executable, "-m", "entrypoints"], env=env) as process:
        client = RawClient(process)
        await client.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {"url": {}}},
                    "clientInfo": {"name": "url-mode-only", "version": "1"},
                },
            }
        )
        await client.until(lambda m: m.get("id") == 1)
        await client.send({"method": "notifications/initialized"})
        try:
            yield client
        finally:
            process.terminate()


def is_request(message: dict[str, Any], method: str) -> bool:
    return message.get("method") == method and "id" in message


async def test_the_link_goes_to_the_person_through_the_client_and_only_the_page_decides(
    sandbox: Sandbox,
) -> None:
    with anyio.fail_after(90):
        async with url_mode_client(sandbox) as client:
            await client.send(
                {
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "delete_secret", "arguments": WIDENING["delete_secret"]},
                }
            )
            asked = await client.until(lambda m: is_request(m, "elicitation/create"))
            params = asked["params"]
            nothing_yet = list(deletes(sandbox))
            # The person agrees to open the page: that alone runs nothing.
            await client.send({"id": asked["id"], "result": {"action": "accept"}})
            await anyio.sleep(0.2)
            after_accept = list(deletes(sandbox))
            shown = await answer(params["url"], "approve")
            result = await client.until(lambda m: m.get("id") == 2)
    assert params["mode"] == "url" and params["url"].startswith("http://127.0.0.1:")
    assert "deploy_token" in params["message"] and params["elicitationId"]
    assert nothing_yet == [] and after_accept == []
    assert shown == "approved"
    assert not result["result"].get("isError"), result
    assert len(deletes(sandbox)) == 1
    completes = [m for m in client.seen if m.get("method") == "notifications/elicitation/complete"]
    assert [m["params"]["elicitationId"] for m in completes] == [params["elicitationId"]]
    # The link went to the client in the elicitation only, never into the tool's result.
    assert params["url"].rsplit("/", 1)[1] not in json.dumps(result)


async def test_declining_to_open_the_page_is_a_no(sandbox: Sandbox) -> None:
    with anyio.fail_after(90):
        async with url_mode_client(sandbox) as client:
            await client.send(
                {
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "delete_secret", "arguments": WIDENING["delete_secret"]},
                }
            )
            asked = await client.until(lambda m: is_request(m, "elicitation/create"))
            await client.send({"id": asked["id"], "result": {"action": "decline"}})
            result = await client.until(lambda m: m.get("id") == 2)
    assert result["result"]["structuredContent"]["outcome"] == "declined"
    assert deletes(sandbox) == []
