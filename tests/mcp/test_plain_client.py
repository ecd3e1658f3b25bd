"""What a plain MCP client's model reads: only the text content, and it must be able to act on it.

The every-tool test (test_every_tool_over_mcp.py) checks that the text carries every field of
every success; test_text_carries_the_data.py that a content-only reader finds why a pipeline
failed. Here the model acts on the words alone where a result leaves something out or goes
wrong: a log window that is not the whole log must name the call that reads the lines around
it, and an error must send the model to the fix it names, not to a check that cannot help (the
connection, a repository's activation, the same setup words twice). The server is the real
one from the container, driven by the SDK client against the sandbox (docs/adr/0025).
"""

import json
import re
from typing import Any

import anyio
import anyio.streams.text
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from entrypoints.container import build_container, opened, resolved
from entrypoints.settings import read_settings
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.clock import FakeClock
from tests.fixtures.mcp import (
    MODES,
    build_harness_on,
    gateway_to,
    harness_for,
    initialize_request,
    server_command,
    server_environment,
)
from tests.mcp.guarded_calls import WIDENING

pytestmark = pytest.mark.anyio

BIG = {"repo_id": 6, "number": 1, "step_id": 60103}  # a 10,000-line log of the sandbox
LOG_LINE = re.compile(r"^\[(\d{4,})\] ", re.MULTILINE)
CONNECTION = "get_server_info to check the connection"


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def numbers(text: str) -> list[int]:
    return [int(n) for n in LOG_LINE.findall(text)]


def hinted_call(text: str, bound: str) -> dict[str, int]:
    """The get_step_logs arguments the text names for `bound` (from_line or to_line), as a model reads them."""
    found = re.search(rf"get_step_logs with {bound}=(\d+)", text)
    assert found, f"the text names no get_step_logs call with {bound}: {text.splitlines()[1]}"
    return {bound: int(found.group(1))}


@pytest.mark.parametrize("mode", MODES)
async def test_a_log_window_names_the_calls_that_read_the_lines_before_and_after_it(
    sandbox: Sandbox, mode: str
) -> None:
    with anyio.fail_after(60):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode) as client:

                async def read(**args: Any) -> str:
                    result = await client.call_tool("get_step_logs", {**BIG, **args})
                    assert not result.is_error, text_of(result)
                    return text_of(result)

                tail = await read()
                assert numbers(tail) == list(range(9800, 10000))
                assert "from_line=" not in tail.splitlines()[1]  # nothing follows the end
                before = await read(**hinted_call(tail, "to_line"))
                assert numbers(before) == list(range(9600, 9800))

                head = await read(**{"from": "head", "limit": 50})
                assert numbers(head) == list(range(50))
                assert "to_line=" not in head.splitlines()[1]  # nothing comes before line 0
                after = await read(**hinted_call(head, "from_line"), limit=50)
                assert numbers(after) == list(range(50, 100))
                # A window in the middle names both ways on.
                assert set(hinted_call(after, "to_line").items()) == {("to_line", 49)}
                assert set(hinted_call(after, "from_line").items()) == {("from_line", 100)}

                whole = await client.call_tool("get_step_logs", {"repo_id": 1, "number": 2, "step_id": 10202})
                assert "get_step_logs with" not in text_of(whole)  # the whole log: no call reads more


async def test_a_pattern_error_names_the_pattern_not_the_connection(sandbox: Sandbox) -> None:
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="2026-07-28") as client:
                result = await client.call_tool(
                    "search_step_logs", {"repo_id": 1, "number": 2, "step_id": 10202, "pattern": "(("}
                )
    text = text_of(result)
    assert result.is_error and "RE2 syntax" in text
    assert CONNECTION not in text


async def test_a_step_of_another_pipeline_is_not_blamed_on_the_repository(sandbox: Sandbox) -> None:
    # The pipeline was just read, so the repository exists and is active: only the step id is wrong.
    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="legacy") as client:
                result = await client.call_tool("get_step_logs", {"repo_id": 1, "number": 2, "step_id": 99})
    text = text_of(result)
    assert result.is_error and "Call get_pipeline and use a step's id" in text
    assert "activated" not in text and "include_inactive" not in text


async def test_an_unconfigured_server_says_its_setup_once() -> None:
    container = build_container(read_settings({}))
    async with opened(container):
        server = await resolved(container.mcp_server())
        with anyio.fail_after(30):
            async with Client(server, mode="legacy") as client:
                result = await client.call_tool("get_server_info", {})
    text = text_of(result)
    assert result.is_error and "WOODPECKER_URL" in text
    assert text.count("WOODPECKER_TOKEN") == 1, text


async def test_a_dialog_the_client_failed_to_show_is_not_reported_as_the_persons_no(sandbox: Sandbox) -> None:
    # A 2025-11-25 client that declares elicitation but answers the question with an error (its
    # UI could not draw it): nothing runs, and the model must not tell the person they said no.
    async def broken(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=-32603, message="the dialog could not be shown")

    with anyio.fail_after(30):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode="legacy", elicitation_callback=broken) as client:
                result = await client.call_tool("approve_pipeline", {"repo_id": 1, "number": 11})
    text = text_of(result)
    assert sandbox.state_changing_requests() == []
    assert "nothing was done" in text and "this tool was not run" in text
    assert "did not approve" not in text and "Declined" not in text
    assert "No answer came back" in text and "answered the question with an error" in text
    assert result.structured_content is not None and result.structured_content["done"] is False
    assert result.structured_content["outcome"] == "no_answer"


class SlowWoodpecker:
    """The real gateway to the sandbox, where every request (`send`) or every step log takes
    `seconds` of the harness's clock: a slow Woodpecker, without a test that waits for it."""

    def __init__(self, gateway: Any, clock: FakeClock, *, send: float = 0.0, log: float = 0.0) -> None:
        self._gateway, self._clock, self._send, self._log = gateway, clock, send, log
        self.log_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)

    async def send(self, *args: Any) -> Any:
        self._clock.advance(self._send)
        return await self._gateway.send(*args)

    async def read_step_log(self, *args: Any) -> Any:
        self.log_reads += 1
        self._clock.advance(self._log)
        return await self._gateway.read_step_log(*args)


async def call_slowly(
    sandbox: Sandbox, tool: str, args: dict[str, Any], **slow: float
) -> tuple[Any, SlowWoodpecker, float]:
    """One call of `tool` through a real client to a server whose Woodpecker is `slow` (see
    SlowWoodpecker); the result, the gateway, and how long the call took on the harness's clock."""
    clock = FakeClock()
    credential = Credential(sandbox.admin_token)
    gateway = SlowWoodpecker(gateway_to(sandbox, credential), clock, **slow)
    harness = build_harness_on(gateway, credential, clock=clock, web_root=sandbox.url)
    try:
        with anyio.fail_after(60):
            async with Client(harness.server, mode="2026-07-28") as client:
                start = clock.now()
                result = await client.call_tool(tool, args)
                return result, gateway, clock.now() - start
    finally:
        await gateway.aclose()


async def test_a_failure_summary_starts_no_log_read_after_its_time_is_spent(sandbox: Sandbox) -> None:
    # A client gives up after a minute: a pipeline whose failed steps' logs come slowly must not
    # keep the call reading one log after another; the steps it did not read name the call that does.
    result, slow, _ = await call_slowly(
        sandbox, "get_pipeline_failure_summary", {"repo_id": 6, "number": 2}, log=45
    )
    text = text_of(result)
    assert not result.is_error, text
    assert slow.log_reads == 1
    assert "step_id 60203 (pid 3) failure, exit code 1, 1 error-looking of 200000 lines;" in text
    assert "step_id 60205 (pid 5) failure, exit code 2, 0 error-looking of 0 lines, log not read" in text
    assert "search_step_logs or get_step_logs with step_id 60205" in text


async def test_a_wait_on_a_slow_woodpecker_answers_within_its_window(sandbox: Sandbox) -> None:
    # Each look at the pipeline takes 20 s: the wait must end early enough that its last look ends
    # within the 45 s it waits by default, not start a look at 42 s that answers at 62 s, after the
    # client gave up. (Pipeline 4 of repository 6 runs for an hour.)
    result, _, took = await call_slowly(sandbox, "wait_for_pipeline", {"repo_id": 6, "number": 4}, send=20)
    assert not result.is_error, text_of(result)
    assert took <= 45, took
    assert "Call wait_for_pipeline again to keep waiting." in text_of(result)


TOKEN = re.compile(r'confirm_token: "([0-9a-f]{32})"')


@pytest.mark.parametrize("mode", MODES)
async def test_a_model_without_a_dialog_completes_every_guarded_tool_from_the_text_alone(
    sandbox: Sandbox, mode: str
) -> None:
    # A client that declares no elicitation: each first call names, in its text, the token and
    # the second call; the model makes exactly that call and the write happens once.
    problems: list[str] = []
    with anyio.fail_after(120):
        async with harness_for(sandbox, sandbox.admin_token) as harness:
            async with Client(harness.server, mode=mode) as client:
                for tool, args in sorted(WIDENING.items()):
                    sandbox.reset()
                    first = text_of(await client.call_tool(tool, dict(args)))
                    tokens = TOKEN.findall(first)
                    if (
                        len(tokens) != 1
                        or "call this same tool again with exactly the same arguments" not in first
                    ):
                        problems.append(f"{tool}: no token and call in {first[:200]!r}")
                        continue
                    second = await client.call_tool(tool, {**args, "confirm_token": tokens[0]})
                    if second.is_error or not sandbox.state_changing_requests():
                        problems.append(f"{tool}: the second call did not act: {text_of(second)[:200]!r}")
    assert problems == []


async def raw_stdio(sandbox: Sandbox, messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Each JSON-RPC message sent as written to a server process on stdio; its answers by id."""
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.admin_token)
    answers: dict[Any, dict[str, Any]] = {}
    wanted = {m["id"] for m in messages if "id" in m}
    async with await anyio.open_process([command, *args], env=env) as process:
        assert process.stdin is not None and process.stdout is not None
        lines = anyio.streams.text.TextReceiveStream(process.stdout)
        await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        buffered = ""
        async for chunk in lines:
            buffered += chunk
            *complete, buffered = buffered.split("\n")
            for line in complete:
                answer = json.loads(line)
                answers[answer.get("id")] = answer
            if wanted <= set(answers):
                break
        await process.stdin.aclose()
    return answers


async def test_arguments_that_are_no_object_are_refused_with_words_that_say_so(sandbox: Sandbox) -> None:
    # Some clients pass the model's arguments on as a string holding JSON. The SDK alone refused
    # such a request as "Invalid request parameters" and nothing more; the model could not tell why.
    def call(id_: int, arguments: Any) -> dict[str, Any]:
        params = {"name": "get_pipeline", "arguments": arguments}
        return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}

    messages = [
        initialize_request(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(2, '{"repo_id": 1, "number": 2}'),
        call(3, [1, 2]),
        call(4, {"repo_id": 1, "number": 2}),
    ]
    with anyio.fail_after(60):
        answers = await raw_stdio(sandbox, messages)
    for id_, kind in ((2, "a string"), (3, "an array")):
        result = answers[id_].get("result")
        assert result is not None, answers[id_]
        text = result["content"][0]["text"]
        assert result["isError"] is True
        assert f"the arguments must be a JSON object with one member per argument, got {kind}" in text
    assert "send the object itself" in answers[2]["result"]["content"][0]["text"]
    assert answers[4]["result"]["isError"] is False  # the same connection goes on serving
