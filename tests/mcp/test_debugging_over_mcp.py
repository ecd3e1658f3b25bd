"""Debugging a failed pipeline over a real MCP client against the sandbox: search a huge log, summarise every failure.

The sandbox's pipeline 2 of the bench repository failed in two workflows; its test step printed
200,000 lines with the failing test 50,000 lines before the end, far outside the default
last-200-lines window of get_step_logs.

The client talks to the server built by the product's container in this process; its gateway
reaches the sandbox over a real socket, so the huge log streams as it does in production
(ADR 0025). Starting the server as a process is what tests/mcp/test_e2e.py is about.
"""

from typing import Any

import anyio
import pytest
from mcp import Client

from sandbox.seed import (
    BENCH_REPO_ID,
    FAILED_TWICE_LINE,
    FAILED_TWICE_LOG_STEP,
    FAILED_TWICE_NUMBER,
    FAILED_TWICE_TEST,
)
from sandbox.server import Sandbox
from tests.fixtures.mcp import harness_for

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def call(sandbox: Sandbox, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call from a real MCP client to the server, acting as the admin."""
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(120):
            async with Client(harness.server, mode="legacy") as client:
                return await client.call_tool(tool, arguments)


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


async def test_a_failure_50000_lines_before_the_end_of_a_200000_line_log_is_found_by_search(
    sandbox: Sandbox,
) -> None:
    where = {"repo_id": BENCH_REPO_ID, "number": FAILED_TWICE_NUMBER, "step_id": FAILED_TWICE_LOG_STEP}
    result = await call(sandbox, "search_step_logs", {**where, "pattern": "--- FAIL:", "context": 2})
    assert not result.is_error, text_of(result)
    found = result.structured_content or {}
    assert (found["total_lines"], found["total_matches"]) == (200_000, 1)
    [match] = found["matches"]
    assert (match["line"], match["text"]) == (FAILED_TWICE_LINE, FAILED_TWICE_TEST)
    assert [x["line"] for x in match["before"]] == [FAILED_TWICE_LINE - 2, FAILED_TWICE_LINE - 1]
    assert match["after"][0]["text"] == "    checkout_test.go:88: charged 2 times, want 1"
    assert str(FAILED_TWICE_LINE) in text_of(result)


async def test_one_summary_names_both_failed_steps_of_two_workflows_and_the_deep_failure(
    sandbox: Sandbox,
) -> None:
    result = await call(
        sandbox, "get_pipeline_failure_summary", {"repo_id": BENCH_REPO_ID, "number": FAILED_TWICE_NUMBER}
    )
    assert not result.is_error, text_of(result)
    summary = result.structured_content or {}
    steps = {(s["workflow"], s["name"]): s for s in summary["failed_steps"]}
    assert set(steps) == {("linux", "test"), ("windows", "build")}
    test, build = steps[("linux", "test")], steps[("windows", "build")]
    assert (test["exit_code"], build["exit_code"]) == (1, 2)
    (failing,) = [e for e in test["error_lines"] if e["line"] == FAILED_TWICE_LINE]
    assert failing["text"] == FAILED_TWICE_TEST
    # The line that explains it follows it, 50,000 lines before the end (issue 37).
    assert failing["after"][0] == {
        "line": FAILED_TWICE_LINE + 1,
        "text": "    checkout_test.go:88: charged 2 times, want 1",
    }
    assert test["last_lines"][-1]["line"] == 199_999 and test["total_lines"] == 200_000
    assert any("error: undefined: chargeAgain" in e["text"] for e in build["error_lines"])
    assert "search_step_logs" in test["read_more"]
    text = text_of(result)
    assert FAILED_TWICE_TEST in text and "chargeAgain" in text and "not shown" in text
    assert "checkout_test.go:88: charged 2 times, want 1" in text


async def test_why_did_it_fail_is_answered_in_two_calls_from_a_pasted_web_link(sandbox: Sandbox) -> None:
    """The question a person brings, with the link from the forge's status: resolve, then the summary."""
    pasted = f"  {sandbox.url}/repos/{BENCH_REPO_ID}/pipeline/{FAILED_TWICE_NUMBER}?tab=log  "
    calls = 0
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(120):
            async with Client(harness.server, mode="legacy") as client:
                resolved = await client.call_tool("resolve", {"reference": pasted})
                calls += 1
                assert not resolved.is_error, text_of(resolved)
                ids = resolved.structured_content or {}
                assert "get_pipeline_failure_summary" in ids["next"]
                summary = await client.call_tool(
                    "get_pipeline_failure_summary", {"repo_id": ids["repo_id"], "number": ids["number"]}
                )
                calls += 1
    assert calls <= 2 and not summary.is_error, text_of(summary)
    assert (ids["repo_id"], ids["number"]) == (BENCH_REPO_ID, FAILED_TWICE_NUMBER)
    text = text_of(summary)
    assert "TestCheckout/charges_once" in text and FAILED_TWICE_TEST in text
