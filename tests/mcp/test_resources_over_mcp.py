"""Resources over real MCP clients against the sandbox: three templates, reads through the tools' own checks and budgets, links from cut results, completion of what the caller can see.

The client talks to the server built by the product's container in this process (ADR 0025),
with the settings a server process would read from its environment (WOODPECKER_DENY_TOOLS).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from domain.woodpecker.resources import PIPELINE, REPOSITORY, STEP_LOG, log_uri
from domain.woodpecker.results import UNTRUSTED_WARNING
from sandbox.seed import BIG_LOG_STEPS, FORGED_WARNING
from sandbox.server import Sandbox
from tests.fixtures.mcp import harness_for

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO, NUMBER, STEP = BIG_LOG_STEPS[10_000]  # a 10,000-line log: more than one page


@asynccontextmanager
async def client(sandbox: Sandbox, token: str | None = None, **env: str) -> AsyncIterator[Client]:
    async with harness_for(sandbox, token or sandbox.admin_token, environ=env) as harness:
        with anyio.fail_after(120):
            async with Client(harness.server, mode="legacy") as connected:
                yield connected


def lines_of(text: str) -> list[int]:
    """The numbers of a log's `[n] text` lines in a result's text."""
    return [int(line[1 : line.index("]")]) for line in text.splitlines() if line.startswith("[")]


async def test_the_three_templates_are_listed_and_read_through_their_tools(sandbox: Sandbox) -> None:
    async with client(sandbox) as c:
        templates = (await c.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            REPOSITORY.uri_template,
            PIPELINE.uri_template,
            STEP_LOG.uri_template,
        ]
        repo = (await c.read_resource("woodpecker://repos/1")).contents[0]
        pipeline = (await c.read_resource("woodpecker://repos/3/pipelines/2")).contents[0]
    assert isinstance(repo, types.TextResourceContents) and repo.uri == "woodpecker://repos/1"
    # Each reads as its tool answers: the repository's summary line, then its data.
    assert repo.text.splitlines()[0] == "Repository 1." and '"full_name":"acme/web"' in repo.text
    # A pipeline is marked untrusted, and a commit message that imitates the framing stays inside
    # the data, as in the tool's text.
    assert isinstance(pipeline, types.TextResourceContents)
    assert pipeline.text.splitlines()[0] == UNTRUSTED_WARNING
    assert FORGED_WARNING not in pipeline.text.splitlines()[1:]


async def test_a_log_reads_page_by_page_and_each_page_names_the_next(sandbox: Sandbox) -> None:
    async with client(sandbox) as c:
        first = (await c.read_resource(log_uri(REPO, NUMBER, STEP))).contents[0]
        assert isinstance(first, types.TextResourceContents)
        shown = lines_of(first.text)
        assert shown[0] == 0 and len(shown) > 100
        following = (first.meta or {})["next_page"]
        assert following == log_uri(REPO, NUMBER, STEP, shown[-1] + 1)
        second = (await c.read_resource(following)).contents[0]
    assert isinstance(second, types.TextResourceContents)
    assert lines_of(second.text)[0] == shown[-1] + 1


async def test_a_cut_log_result_links_to_the_whole_log_and_its_next_page(sandbox: Sandbox) -> None:
    where = {"repo_id": REPO, "number": NUMBER, "step_id": STEP}
    async with client(sandbox) as c:
        tail = await c.call_tool("get_step_logs", where)
        head = await c.call_tool("get_step_logs", {**where, "from_line": 0, "limit": 10})
        links = [b for b in head.content if isinstance(b, types.ResourceLink)]
        read = (await c.read_resource(links[1].uri)).contents[0]
        whole = await c.call_tool("get_step_logs", {"repo_id": 1, "number": 2, "step_id": 10204})
    assert [b.uri for b in tail.content if isinstance(b, types.ResourceLink)] == [log_uri(REPO, NUMBER, STEP)]
    assert [link.uri for link in links] == [log_uri(REPO, NUMBER, STEP), log_uri(REPO, NUMBER, STEP, 10)]
    assert isinstance(read, types.TextResourceContents) and lines_of(read.text)[0] == 10
    # A log shown whole links nowhere.
    assert [b for b in whole.content if isinstance(b, types.ResourceLink)] == []


async def test_a_failure_summary_links_each_failed_steps_log(sandbox: Sandbox) -> None:
    async with client(sandbox) as c:
        summary = await c.call_tool("get_pipeline_failure_summary", {"repo_id": REPO, "number": 2})
    uris = [b.uri for b in summary.content if isinstance(b, types.ResourceLink)]
    steps = [s["step_id"] for s in (summary.structured_content or {})["failed_steps"] if s.get("left_out")]
    assert uris == [log_uri(REPO, 2, step) for step in steps] and uris


async def test_a_denied_tool_takes_its_resource_and_its_links_with_it(sandbox: Sandbox) -> None:
    async with client(sandbox, WOODPECKER_DENY_TOOLS="get_step_logs") as c:
        templates = (await c.list_resource_templates()).resource_templates
        summary = await c.call_tool("get_pipeline_failure_summary", {"repo_id": REPO, "number": 2})
        with pytest.raises(MCPError):
            await c.read_resource(log_uri(REPO, NUMBER, STEP))
    assert [t.name for t in templates] == ["repository", "pipeline"]
    assert [b for b in summary.content if isinstance(b, types.ResourceLink)] == []


async def test_an_unknown_uri_or_a_missing_object_is_an_error_that_says_so(sandbox: Sandbox) -> None:
    async with client(sandbox) as c:
        with pytest.raises(MCPError, match="resources are"):
            await c.read_resource("woodpecker://repos/1/../2")
        with pytest.raises(MCPError, match="404"):
            await c.read_resource("woodpecker://repos/1/pipelines/999")


async def test_completion_offers_what_the_caller_can_see(sandbox: Sandbox) -> None:
    ref = types.ResourceTemplateReference(uri=STEP_LOG.uri_template)
    async with client(sandbox, sandbox.user_token) as c:
        repos = (await c.complete(ref, {"name": "repo_id", "value": ""})).completion
        by_name = (await c.complete(ref, {"name": "repo_id", "value": "WEB"})).completion
        numbers = (await c.complete(ref, {"name": "number", "value": "1"}, {"repo_id": "1"})).completion
        steps = (
            await c.complete(ref, {"name": "step_id", "value": ""}, {"repo_id": "1", "number": "2"})
        ).completion
        unknown = (await c.complete(ref, {"name": "number", "value": ""})).completion
    # bob sees acme/web, acme/api and his dotfiles; never umbrella/infra (3).
    assert "3" not in repos.values and {"1", "2"} <= set(repos.values)
    assert by_name.values == ["1"]
    assert numbers.values and all(v.startswith("1") for v in numbers.values)
    assert "10204" in steps.values
    assert unknown.values == []  # no repository chosen yet
