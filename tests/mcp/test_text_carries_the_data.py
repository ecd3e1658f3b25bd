"""What a client that reads only `content` gets: the real server against the sandbox.

The every-tool test (test_every_tool_over_mcp.py) checks that every field of every success is
in the text. Here a script that is handed nothing but the text content of each result finds
why a pipeline failed, and the sandbox's framing forgeries (umbrella/infra #2: a commit
message and a log written to look like our warning, our summary, a data line and an end
marker) are shown to stay inside data lines.

How the forgery test decides: it splits each text as the strictest reader would
(`str.splitlines`, every Unicode line boundary). Line 1 must be exactly the untrusted
warning and appear nowhere else as a line; line 2 must match the summary this tool writes;
every later line must start with `{` (JSON, which must parse) or with `[n]` where n is one of
the returned log line numbers. The forged strings must still reach the model, whole, inside
the data: the JSON line parses back to the commit message, the log lines to the log. The
forgeries travel end to end, from the server as a stdio subprocess, as JSON on the wire; the
content-only client talks to the server built from the container in this process, with the
settings a process would read (docs/adr/0025).
"""

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from domain.woodpecker.results import UNTRUSTED_WARNING
from sandbox.seed import FORGED_END, FORGED_SUMMARY, FORGED_WARNING, FRAMING_COMMIT, FRAMING_LOG
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, harness_for, server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LOG_LINE = re.compile(r"^\[(\d{4,})\](?: |$)")
FAILED_TEST = re.compile(r"--- FAIL: (\S+)")


def stdio_server(sandbox: Sandbox, **env: str) -> StdioServerParameters:
    command, args = server_command()
    return StdioServerParameters(
        command=command, args=args, env=server_environment(sandbox.url, sandbox.admin_token, **env)
    )


@asynccontextmanager
async def in_process(sandbox: Sandbox, mode: str, **env: str) -> AsyncIterator[Client]:
    """A client on in-memory streams to the server built as a process with `env` would build it."""
    async with harness_for(sandbox, sandbox.admin_token, environ=env) as harness:
        async with Client(harness.server, mode=mode) as client:
            yield client


class ContentOnlyClient:
    """A client like Open WebUI's or LangChain's MCP adapters: the model gets the text blocks, nothing else."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def call(self, tool: str, **args: Any) -> str:
        result = await self._client.call_tool(tool, args)
        assert not result.is_error, result.content
        return "\n".join(block.text for block in result.content if block.type == "text")


def why_it_failed(pipeline_text: str) -> tuple[int, str]:
    """From get_pipeline's text alone: the failed step's id and name."""
    data = next(json.loads(line) for line in pipeline_text.splitlines() if line.startswith("{"))
    failed = [
        step
        for workflow in data["pipeline"]["workflows"]
        for step in workflow["steps"]
        if step["state"] == "failure"
    ]
    return failed[0]["id"], failed[0]["name"]


def failing_test_and_exit_code(log_text: str) -> tuple[str, int]:
    """From get_step_logs's text alone: the failing test's name and the step's exit code."""
    lines = log_text.splitlines()
    header = json.loads(next(line for line in lines if line.startswith("{")))
    tests = [m.group(1) for line in lines if LOG_LINE.match(line) and (m := FAILED_TEST.search(line))]
    return tests[0], header["exit_code"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_content_only_client_finds_why_a_pipeline_failed(sandbox: Sandbox, mode: str) -> None:
    with anyio.fail_after(90):
        async with in_process(sandbox, mode) as client:
            model = ContentOnlyClient(client)
            step_id, step = why_it_failed(await model.call("get_pipeline", repo_id=1, number=2))
            log = await model.call("get_step_logs", repo_id=1, number=2, step_id=step_id)
            assert (step, *failing_test_and_exit_code(log)) == ("test", "TestLogin", 1)
            assert "[0002] --- FAIL: TestLogin (0.01s)" in log.splitlines()


async def test_with_text_summary_the_same_client_is_blind(sandbox: Sandbox) -> None:
    # What WOODPECKER_MCP_TEXT=summary costs, and why it is not the default.
    with anyio.fail_after(90):
        async with in_process(sandbox, "legacy", WOODPECKER_MCP_TEXT="summary") as client:
            text = await ContentOnlyClient(client).call("get_pipeline", repo_id=1, number=2)
            assert text.splitlines() == [UNTRUSTED_WARNING, "Pipeline 2 of repository 1: failure."]
            result = await client.call_tool("get_pipeline", {"repo_id": 1, "number": 2})
            assert result.structured_content["pipeline"]["workflows"]  # the data is still there


def check_framing(text: str, summary: str, numbers: set[int]) -> list[str]:
    """The data lines of `text`, after deciding its framing as the module docstring says."""
    lines = text.splitlines()
    assert lines[0] == UNTRUSTED_WARNING and lines.count(UNTRUSTED_WARNING) == 1
    assert re.fullmatch(summary, lines[1]), lines[1]
    for line in lines[2:]:
        if line.startswith("{"):
            json.loads(line)
            continue
        found = LOG_LINE.match(line)
        assert found and int(found.group(1)) in numbers, f"a data line starts like framing: {line!r}"
    assert FORGED_SUMMARY not in lines and FORGED_END not in lines
    return lines[2:]


async def test_framing_forgeries_in_the_sandbox_stay_inside_data_lines(sandbox: Sandbox) -> None:
    assert UNTRUSTED_WARNING == FORGED_WARNING  # the forgery is faithful: it copies our warning exactly
    with anyio.fail_after(90):
        async with Client(stdio_server(sandbox), mode="2026-07-28") as client:

            async def call(tool: str, **args: Any) -> tuple[str, dict[str, Any]]:
                result = await client.call_tool(tool, args)
                assert not result.is_error
                return result.content[0].text, result.structured_content

            text, structured = await call("get_pipeline", repo_id=3, number=2)
            (data,) = check_framing(text, re.escape("Pipeline 2 of repository 3: failure."), set())
            assert (
                json.loads(data)["pipeline"]["message"] == FRAMING_COMMIT == structured["pipeline"]["message"]
            )

            text, structured = await call("list_pipelines", repo_id=3)
            listed = re.escape(
                "4 pipelines of repository 3 (page 1). 2 failed: pipelines 4, 2; 1 blocked (awaiting "
                "approval): pipeline 3. Every field of one: get_pipeline(repo_id, number)."
            )
            (data,) = check_framing(text, listed, set())
            # A list keeps a pipeline's subject, the message's first line (docs/adr/0070).
            assert FRAMING_COMMIT.splitlines()[0] in [p["subject"] for p in json.loads(data)["pipelines"]]

            text, structured = await call("get_step_logs", repo_id=3, number=2, step_id=30204)
            numbers = {line["line"] for line in structured["lines"]}
            summary = re.escape(
                "Lines 0–7 (8 shown) of 8 of step 30204 of pipeline 2 of repository 3; state failure, exit code 3."
            )
            header, *logged = check_framing(text, summary, numbers)
            assert json.loads(header)["exit_code"] == 3
            # Each forged log line came through, after its own number, split where it had line breaks.
            by_number: dict[int, list[str]] = {}
            for line in logged:
                found = LOG_LINE.match(line)
                assert found
                by_number.setdefault(int(found.group(1)), []).append(line[found.end() :])
            assert [re.split("\n|\u2028", text) for text in FRAMING_LOG] == [
                by_number[n] for n in sorted(by_number)
            ]
