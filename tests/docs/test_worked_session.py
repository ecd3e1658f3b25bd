"""docs/guide.md's worked session, run: each call it shows, from a real MCP client to the server against
the sandbox, answers with every line the page shows for it."""

import json
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client

from domain.tool_filter import ESSENTIAL
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.mcp import harness_for

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def steps() -> list[tuple[str, dict[str, object], list[str]]]:
    """(tool, arguments, the lines shown for its answer) for each `session` block, in page order."""
    text = GUIDE.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"^```session\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        call, *shown = block.strip("\n").splitlines()
        assert call.startswith("> "), call
        tool, arguments = call[2:].split(" ", 1)
        found.append((tool, json.loads(arguments), shown))
    return found


def test_the_page_shows_a_session() -> None:
    # The run below passes on a page with no session at all: make sure it is there.
    shown = steps()
    assert [tool for tool, _, _ in shown] == [
        "resolve",
        "get_pipeline_failure_summary",
        "get_step_logs",
        "search_step_logs",
    ]
    assert all(lines for _, _, lines in shown)


def test_the_session_fits_the_essential_preset() -> None:
    # The page says the four tools are all there under the essential preset.
    essential = {t.name for t in WOODPECKER_TOOLS if t.essential}
    assert {tool for tool, _, _ in steps()} <= essential and ESSENTIAL == "essential"


async def test_each_call_answers_with_the_lines_the_page_shows(sandbox: Sandbox) -> None:
    missing = []
    async with harness_for(sandbox.url, sandbox.admin_token) as harness:
        with anyio.fail_after(120):
            async with Client(harness.server, mode="legacy") as client:
                for tool, arguments, shown in steps():
                    filled = json.loads(json.dumps(arguments).replace("<sandbox>", sandbox.url))
                    result = await client.call_tool(tool, filled)
                    assert not result.is_error, (tool, result.content)
                    text = "\n".join(part.text for part in result.content if getattr(part, "text", None))
                    missing += [(tool, line) for line in shown if line not in text]
    assert missing == [], "docs/guide.md shows lines these calls no longer answer"
