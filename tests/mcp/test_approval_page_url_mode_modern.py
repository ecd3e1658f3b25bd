"""URL-mode elicitation on 2026-07-28 over a real stdio server (issue 33, item 2): a client that declares
only `elicitation: {url: {}}` gets the approval page's link in an `input_required` result with a
sealed state. The retry's accept means only that the person agreed to open the page: the call goes
ahead only on the page's decision, at most once; a retry before the page has decided waits one window,
then answers `input_required` again with the same link and a fresh seal. No browser is available to
the server here: the link reaches the person through the client alone, never through the model.
"""

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from sandbox.server import Sandbox
from tests.fixtures.mcp import server_environment
from tests.mcp.guarded_calls import WIDENING
from tests.mcp.test_approval_page_stdio import answer, deletes
from tests.mcp.test_approval_page_url_mode import RawClient

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODERN = "2026-07-28"
URL_ONLY = {"elicitation": {"url": {}}}
DELETE_SECRET = WIDENING["delete_secret"]


class ModernClient:
    """Raw JSON-RPC on 2026-07-28: every request names its revision and capabilities in `_meta`."""

    def __init__(self, raw: RawClient, capabilities: dict[str, Any]) -> None:
        self.raw = raw
        self._capabilities = capabilities
        self._id = 10

    async def call(self, name: str, arguments: dict[str, Any], **retry: Any) -> dict[str, Any]:
        self._id += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": self._capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "url-mode-only", "version": "1"},
        }
        params = {"name": name, "arguments": arguments, "_meta": meta, **retry}
        await self.raw.send({"id": self._id, "method": "tools/call", "params": params})
        message = await self.raw.until(lambda m: m.get("id") == self._id)
        assert "result" in message, message
        result: dict[str, Any] = message["result"]
        return result


@asynccontextmanager
async def modern_client(
    sandbox: Sandbox, tmp_path: Path, capabilities: dict[str, Any] = URL_ONLY, **extra: str
) -> AsyncIterator[tuple[ModernClient, Path]]:
    audit = tmp_path / "audit.jsonl"
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_AUDIT_FILE=str(audit), **extra)
    env.pop("BROWSER", None)
    env.pop("DISPLAY", None)
    with (tmp_path / "stderr.txt").open("wb") as errlog:
        async with await anyio.open_process(
            [sys.executable, "-m", "entrypoints"], env=env, stderr=errlog
        ) as process:
            try:
                yield ModernClient(RawClient(process), capabilities), audit
            finally:
                process.terminate()


def url_request(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("resultType") == "input_required", result
    (request,) = result["inputRequests"].values()
    assert request["method"] == "elicitation/create"
    params: dict[str, Any] = request["params"]
    assert params["mode"] == "url" and params["url"].startswith("http://127.0.0.1:"), params
    return params


def accepted(result: dict[str, Any]) -> dict[str, Any]:
    """The retry of `result`'s question: the person agreed to open the page."""
    (key,) = result["inputRequests"]
    return {"inputResponses": {key: {"action": "accept"}}, "requestState": result["requestState"]}


async def test_the_link_comes_in_the_result_and_only_the_page_decides_at_most_once(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with anyio.fail_after(90):
        async with modern_client(sandbox, tmp_path) as (client, audit):
            first = await client.call("delete_secret", DELETE_SECRET)
            asked = url_request(first)
            before = list(deletes(sandbox))
            shown = await answer(asked["url"], "approve")
            after_post = list(deletes(sandbox))
            done = await client.call("delete_secret", DELETE_SECRET, **accepted(first))
            ran = len(deletes(sandbox))
            # The same retry replayed (a gateway's second leg, a loop): the answer was acted on.
            replayed = await client.call("delete_secret", DELETE_SECRET, **accepted(first))
    # 2026-07-28 has no elicitation id: the retry names the request by its key.
    assert "deploy_token" in asked["message"] and "elicitationId" not in asked
    assert before == [] and after_post == [] and shown == "approved"
    assert done.get("resultType") != "input_required" and not done.get("isError"), done
    assert ran == 1 and len(deletes(sandbox)) == 1
    again = url_request(replayed)
    assert again["url"] != asked["url"]  # a new question on a new page, never the decided one
    secret = asked["url"].rsplit("/", 1)[1]
    for result in (done, replayed):
        said = {k: v for k, v in result.items() if k not in ("inputRequests", "requestState")}
        assert secret not in json.dumps(said) and "/approve/" not in json.dumps(said)
    assert secret not in audit.read_text()
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["path"], line.get("reached"), line["outcome"]) for line in lines] == [
        ("page", "url_elicitation", "asked"),
        ("page", "url_elicitation", "approved"),
        ("page", "url_elicitation", "executed"),
        ("page", "url_elicitation", "seal_rejected"),
        ("page", "url_elicitation", "asked"),
    ]


async def test_a_retry_before_the_page_decides_gets_the_same_link_under_a_fresh_seal(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with anyio.fail_after(90):
        async with modern_client(sandbox, tmp_path, WOODPECKER_MCP_APPROVAL_WAIT_SECONDS="1") as (client, _):
            first = await client.call("delete_secret", DELETE_SECRET)
            early = await client.call("delete_secret", DELETE_SECRET, **accepted(first))
            nothing_yet = list(deletes(sandbox))
            shown = await answer(url_request(first)["url"], "approve")
            done = await client.call("delete_secret", DELETE_SECRET, **accepted(early))
    assert url_request(early)["url"] == url_request(first)["url"]
    assert early["requestState"] != first["requestState"]
    assert nothing_yet == [] and shown == "approved"
    assert not done.get("isError") and done.get("resultType") != "input_required", done
    assert len(deletes(sandbox)) == 1


async def test_declining_to_open_or_declining_on_the_page_runs_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with anyio.fail_after(90):
        async with modern_client(sandbox, tmp_path) as (client, _):
            first = await client.call("delete_secret", DELETE_SECRET)
            (key,) = first["inputRequests"]
            refused = await client.call(
                "delete_secret",
                DELETE_SECRET,
                inputResponses={key: {"action": "decline"}},
                requestState=first["requestState"],
            )
            # The page they would not open says so, and a post there decides nothing now.
            late = await answer(url_request(first)["url"], "approve")
            second = await client.call("delete_secret", DELETE_SECRET)
            shown = await answer(url_request(second)["url"], "decline")
            declined = await client.call("delete_secret", DELETE_SECRET, **accepted(second))
    assert refused["structuredContent"]["outcome"] == "declined"
    assert late == "declined"
    assert shown == "declined" and declined["structuredContent"]["outcome"] == "declined"
    assert deletes(sandbox) == []


async def test_a_client_with_a_form_dialog_keeps_it_unless_the_page_is_asked_for(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    both = {"elicitation": {"form": {}, "url": {}}}
    with anyio.fail_after(90):
        async with modern_client(sandbox, tmp_path, both) as (client, _):
            form = await client.call("delete_secret", DELETE_SECRET)
        async with modern_client(sandbox, tmp_path, both, WOODPECKER_MCP_APPROVAL_PAGE="always") as (
            client,
            _,
        ):
            page = await client.call("delete_secret", DELETE_SECRET)
            async with httpx.AsyncClient() as browser:
                shown = await browser.get(url_request(page)["url"])
    (request,) = form["inputRequests"].values()
    assert request["params"].get("mode", "form") == "form"
    assert shown.status_code == 200 and 'data-outcome="pending"' in shown.text
    assert deletes(sandbox) == []
