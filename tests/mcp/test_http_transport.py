"""Streamable HTTP on a real loopback socket: both eras, per-request capabilities, Host checks, sessions bound to their principal."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.middleware import Middleware

from adapters.mcp_http import build_http_app
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from tests.fakes.woodpecker import HELD_PIPELINE, FakeWoodpecker
from tests.fixtures.mcp import (
    MODES,
    Person,
    PrincipalFromHeader,
    build_harness_on,
    initialize_request,
    serving,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODERN_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}


def _envelope(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    }


def _last_result(response: httpx.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json())
    datas = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(datas[-1]))


@pytest.mark.parametrize("mode", MODES)
async def test_a_dialog_reaches_the_person_over_http_in_both_eras(mode: str) -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    person = Person("accept")
    with anyio.fail_after(20):
        async with serving(build_http_app(harness.server)) as base:
            async with Client(f"{base}/mcp", mode=mode, elicitation_callback=person) as client:
                listed = await client.list_tools()
                result = await client.call_tool("approve_pipeline", {"repo_id": 5, "number": 12})
    assert len(listed.tools) == len(WOODPECKER_TOOLS)
    assert not result.is_error and len(person.questions) == 1
    assert [(c.method, c.path) for c in woodpecker.writes] == [("POST", "/api/repos/5/pipelines/12/approve")]


async def test_capabilities_are_read_from_each_modern_request_never_remembered() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    call = {"name": "delete_repository", "arguments": {"repo_id": 5}}
    with anyio.fail_after(20):
        async with serving(build_http_app(harness.server)) as base:
            async with httpx.AsyncClient(base_url=base, trust_env=False) as http:

                async def post(request_id: int, capabilities: dict[str, Any]) -> dict[str, Any]:
                    body = {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "tools/call",
                        "params": {**call, "_meta": _envelope(capabilities)},
                    }
                    headers = {**MODERN_HEADERS, "mcp-name": "delete_repository"}
                    return _last_result(await http.post("/mcp", json=body, headers=headers))

                asked = await post(1, {"elicitation": {"form": {}}})
                without = await post(2, {})
                again = await post(3, {"elicitation": {}})
    assert asked["result"]["resultType"] == "input_required"
    assert without["result"]["resultType"] == "complete"
    assert without["result"]["structuredContent"]["outcome"] == "confirmation_required"
    assert (
        "or a gateway between it and the person, did not declare the elicitation capability"
        in without["result"]["content"][0]["text"]
    )
    assert again["result"]["resultType"] == "input_required"
    assert woodpecker.writes == []


async def test_a_foreign_host_header_is_refused_before_anything_runs() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    with anyio.fail_after(20):
        async with serving(build_http_app(harness.server)) as base:
            async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "pause_queue", "arguments": {}, "_meta": _envelope({})},
                }
                headers = {**MODERN_HEADERS, "mcp-name": "pause_queue", "host": "evil.example:80"}
                response = await http.post("/mcp", json=body, headers=headers)
    assert response.status_code == 421
    assert woodpecker.calls == []


async def test_a_legacy_session_answers_only_the_principal_that_opened_it() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    app = build_http_app(harness.server, middleware=[Middleware(PrincipalFromHeader)])
    with anyio.fail_after(20):
        async with serving(app) as base, httpx2.AsyncClient(headers={"x-test-principal": "alice"}) as alice:
            async with Client(
                streamable_http_client(f"{base}/mcp", http_client=alice), mode="legacy"
            ) as client:
                first = await client.call_tool("delete_repository", {"repo_id": 5})
                assert first.structured_content is not None
                # The same session, presented by somebody else, is a session that does not exist.
                async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
                    opened = await http.post(
                        "/mcp",
                        json=initialize_request("alice"),
                        headers={
                            "accept": "application/json, text/event-stream",
                            "content-type": "application/json",
                            "x-test-principal": "alice",
                        },
                    )
                    sid = opened.headers["mcp-session-id"]
                    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                    common = {
                        "accept": "application/json, text/event-stream",
                        "content-type": "application/json",
                        "mcp-session-id": sid,
                        "mcp-protocol-version": "2025-11-25",
                    }
                    stolen = await http.post(
                        "/mcp", json=ping, headers={**common, "x-test-principal": "mallory"}
                    )
                    anonymous = await http.post("/mcp", json=ping, headers=common)
                    own = await http.post("/mcp", json=ping, headers={**common, "x-test-principal": "alice"})
    assert stolen.status_code == 404 and anonymous.status_code == 404
    assert own.status_code == 200
    assert isinstance(first, types.CallToolResult)


async def test_over_http_the_principal_from_the_asgi_scope_binds_the_question() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    app = build_http_app(harness.server, middleware=[Middleware(PrincipalFromHeader)])
    args = {"repo_id": 5, "number": 12}
    yes = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}

    @asynccontextmanager
    async def client_for(base: str, who: str) -> AsyncIterator[Client]:
        # The SDK leaves a client it is handed open: this test closes its own.
        async with httpx2.AsyncClient(headers={"x-test-principal": who}) as http:
            async with Client(
                streamable_http_client(f"{base}/mcp", http_client=http),
                mode="2026-07-28",
                elicitation_callback=Person(),
            ) as client:
                yield client

    with anyio.fail_after(20):
        async with serving(app) as base:
            async with client_for(base, "alice") as alice, client_for(base, "mallory") as mallory:
                asked = await alice.session.call_tool("approve_pipeline", args, allow_input_required=True)
                assert isinstance(asked, types.InputRequiredResult)
                stolen = await mallory.session.call_tool(
                    "approve_pipeline",
                    args,
                    allow_input_required=True,
                    input_responses=yes,
                    request_state=asked.request_state,
                )
                assert isinstance(stolen, types.InputRequiredResult)
                assert woodpecker.writes == []
                own = await alice.session.call_tool(
                    "approve_pipeline",
                    args,
                    allow_input_required=True,
                    input_responses=yes,
                    request_state=asked.request_state,
                )
    assert isinstance(own, types.CallToolResult) and not own.is_error
    assert len(woodpecker.writes) == 1
    principals = {e["principal"] for e in harness.audit.events}
    assert principals == {"alice", "mallory"}


LEGACY_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _kinds_of_answer(app: Any, capabilities: dict[str, Any]) -> tuple[str, str, str]:
    """The content types of: a 2025-11-25 initialize with `capabilities`, a tools/call in that session, and a 2026-07-28 tools/call."""
    opening = initialize_request()
    opening["params"]["capabilities"] = capabilities
    call = {"name": "get_repository", "arguments": {"repo_id": 5}}
    async with serving(app) as base:
        async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
            opened = await http.post("/mcp", json=opening, headers=LEGACY_HEADERS)
            session = {**LEGACY_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = "2025-11-25"
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await http.post("/mcp", json=initialized, headers=session)).status_code == 202
            legacy = await http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
                headers=session,
            )
            modern = await http.post(
                "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {**call, "_meta": _envelope({})},
                },
                headers={**MODERN_HEADERS, "mcp-name": "get_repository"},
            )
    for response in (opened, legacy, modern):
        assert response.status_code == 200
        assert "result" in _last_result(response)
    kind = [r.headers["content-type"].split(";")[0] for r in (opened, legacy, modern)]
    return kind[0], kind[1], kind[2]


async def test_only_a_session_that_may_be_asked_gets_an_event_stream_everything_else_plain_json() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    with anyio.fail_after(30):
        asked = await _kinds_of_answer(build_http_app(harness.server), {"elicitation": {"form": {}}})
        not_asked = await _kinds_of_answer(build_http_app(harness.server), {})
        # A server that never asks (elicitation off) answers every request with one JSON body.
        never = await _kinds_of_answer(build_http_app(harness.server, asks=None), {"elicitation": {}})
    sse, plain = "text/event-stream", "application/json"
    assert asked == (sse, sse, plain)
    assert not_asked == (plain, plain, plain)
    assert never == (plain, plain, plain)


async def test_a_session_opened_without_elicitation_falls_back_to_the_token_not_a_dialog() -> None:
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    with anyio.fail_after(20):
        async with serving(build_http_app(harness.server)) as base:
            async with Client(f"{base}/mcp", mode="legacy") as client:
                first = await client.call_tool("approve_pipeline", {"repo_id": 5, "number": 12})
    assert first.structured_content is not None
    assert first.structured_content["outcome"] == "confirmation_required"
    assert "did not declare the elicitation capability" in str(first.content[0])
    assert woodpecker.writes == []


async def _open_legacy_session(http: httpx.AsyncClient, who: str) -> dict[str, str]:
    """A 2025-11-25 session that may be pushed a question, opened by `who`: the headers that use it."""
    opening = initialize_request(who)
    opening["params"]["capabilities"] = {"elicitation": {"form": {}}}
    sent = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    opened = await http.post("/mcp", json=opening, headers={**sent, "x-test-principal": who})
    session = {
        **sent,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
        "x-test-principal": who,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post("/mcp", json=initialized, headers=session)).status_code == 202
    return session


async def test_a_second_session_header_does_not_let_another_principal_answer_a_pushed_question() -> None:
    # The gate and the SDK must read the same session id: the SDK takes the first of two headers.
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    app = build_http_app(harness.server, middleware=[Middleware(PrincipalFromHeader)])
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    call["params"] = {"name": "delete_repository", "arguments": {"repo_id": 5}}
    with anyio.fail_after(30):
        async with serving(app) as base, httpx.AsyncClient(base_url=base, trust_env=False) as http:
            alice = await _open_legacy_session(http, "alice")
            mallory = await _open_legacy_session(http, "mallory")
            async with http.stream("POST", "/mcp", json=call, headers=alice) as stream:
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("data:") and "elicitation/create" in line:
                        asked = json.loads(line[5:])
                        break
                yes = {"action": "accept", "content": {"confirm": True}}
                answer = {"jsonrpc": "2.0", "id": asked["id"], "result": yes}
                both = [
                    *((k, v) for k, v in mallory.items() if k != "mcp-session-id"),
                    ("mcp-session-id", alice["mcp-session-id"]),
                    ("mcp-session-id", mallory["mcp-session-id"]),
                ]
                forged = await http.post("/mcp", json=answer, headers=both)
                no = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
                own = await http.post("/mcp", json=no, headers=alice)
                async for line in lines:
                    if line.startswith("data:") and '"id":7' in line:
                        result = json.loads(line[5:])["result"]
                        break
    assert woodpecker.writes == []
    assert forged.status_code == 400
    assert own.status_code == 202
    assert result["structuredContent"]["outcome"] == "declined"


async def test_requests_that_open_no_session_do_not_push_a_live_session_out_of_the_owner_map() -> None:
    # The SDK names a session in every answer to a request without one, then drops it when the
    # answer is an error; the gate must not remember those, or anyone could evict live sessions.
    harness = build_harness_on(FakeWoodpecker(HELD_PIPELINE), Credential("t"))
    app = build_http_app(harness.server, max_sessions=1, middleware=[Middleware(PrincipalFromHeader)])
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with anyio.fail_after(30):
        async with serving(app) as base, httpx.AsyncClient(base_url=base, trust_env=False) as http:
            alice = await _open_legacy_session(http, "alice")
            refused = [
                await http.request(method, "/mcp", headers={"x-test-principal": "mallory"})
                for method in ("GET", "DELETE", "PUT", "OPTIONS")
            ]
            still = await http.post("/mcp", json=ping, headers=alice)
    assert [r.status_code for r in refused] == [400, 400, 405, 405]
    assert still.status_code == 200


@pytest.mark.parametrize(
    "reply", [{"action": "maybe"}, {"roots": []}, {"action": "accept", "content": "yes"}], ids=str
)
async def test_a_pushed_question_answered_with_no_elicitation_result_is_no_answer_not_a_decline(
    reply: dict[str, Any],
) -> None:
    # What a client or gateway that mangles the reply sends back on the wire (the SDK's own client
    # would refuse to): no answer, cause "malformed", in the result and the audit; nothing runs.
    woodpecker = FakeWoodpecker(HELD_PIPELINE)
    harness = build_harness_on(woodpecker, Credential("t"))
    app = build_http_app(harness.server, middleware=[Middleware(PrincipalFromHeader)])
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    call["params"] = {"name": "delete_repository", "arguments": {"repo_id": 5}}
    with anyio.fail_after(30):
        async with serving(app) as base, httpx.AsyncClient(base_url=base, trust_env=False) as http:
            alice = await _open_legacy_session(http, "alice")
            async with http.stream("POST", "/mcp", json=call, headers=alice) as stream:
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("data:") and "elicitation/create" in line:
                        asked = json.loads(line[5:])
                        break
                answer = {"jsonrpc": "2.0", "id": asked["id"], "result": reply}
                await http.post("/mcp", json=answer, headers=alice)
                async for line in lines:
                    if line.startswith("data:") and '"id":7' in line:
                        result = json.loads(line[5:])["result"]
                        break
    assert woodpecker.writes == []
    assert result["structuredContent"]["outcome"] == "no_answer", result
    assert result["structuredContent"]["cause"] == "malformed"
    assert harness.audit.outcomes() == ["asked", "no_answer"]
