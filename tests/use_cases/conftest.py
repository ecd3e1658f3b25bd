"""A ToolRunner wired to the sandbox through the real httpx gateway, into the sandbox app in this process (ADR 0025)."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import jsonschema
import pytest

from adapters.ruamel_workflow_syntax import RuamelWorkflowSyntax
from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import output_schema
from ports.use_cases.tools import ToolResult, ToolRunner
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fakes.clock import FakeClock
from tests.fixtures.sandbox import in_process

SCHEMAS = {t.name: jsonschema.Draft202012Validator(output_schema(t)) for t in WOODPECKER_TOOLS}

Call = Callable[..., Awaitable[ToolResult]]


async def _gateway(sandbox: Sandbox) -> HttpxWoodpeckerGateway:
    # No retries: an injected fault must surface at once, and no test waits on a backoff.
    return HttpxWoodpeckerGateway(
        sandbox.url, trust_env=False, retries=0, timeout=10.0, transport=in_process(sandbox)
    )


@pytest.fixture
async def gateway(sandbox: Sandbox) -> AsyncIterator[HttpxWoodpeckerGateway]:
    gw = await _gateway(sandbox)
    yield gw
    await gw.aclose()


@pytest.fixture
def runner(gateway: HttpxWoodpeckerGateway, sandbox: Sandbox) -> ToolRunner:
    # token_configured: let credential-less calls through, to see Woodpecker's anonymous answers.
    return ToolRunner(
        WOODPECKER_TOOLS,
        gateway,
        token_configured=True,
        web_root=sandbox.url,
        clock=FakeClock(),
        workflow_syntax=RuamelWorkflowSyntax(),
    )


def check_result(sandbox: Sandbox, tool: str, result: ToolResult) -> None:
    """What holds for every result: JSON, no credential anywhere, and a success fits the tool's schema."""
    text = json.dumps(result.structured) + result.text
    for token in sandbox.tokens.values():
        assert token not in text
    if not result.is_error:
        SCHEMAS[tool].validate(result.structured)
    else:
        assert "error" in result.structured


@pytest.fixture
def call(runner: ToolRunner, sandbox: Sandbox) -> Call:
    """call(tool, who="ada", **args): run a tool as a seeded login (None: no credential)."""

    async def run(tool: str, who: str | None = "ada", /, **args: Any) -> ToolResult:
        credential = Credential(sandbox.tokens[who]) if who else None
        result = await runner.run(tool, args, credential)
        check_result(sandbox, tool, result)
        return result

    return run
