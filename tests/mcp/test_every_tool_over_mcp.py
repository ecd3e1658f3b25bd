"""All 73 tools through a real MCP client against the sandbox: a success and a hinted failure each, over stdio and HTTP.

The cases are the ToolRunner's (tests/use_cases/test_tools_sandbox.py); here they travel the
whole way: SDK client -> transport -> our server -> httpx -> the simulated Woodpecker. Each
case acts as its seeded login: over stdio a server process per login, over HTTP one
per-client server where each client presents its own Woodpecker token. The sandbox is
re-seeded before every call; guarded calls are approved by the person at the client.
"""

from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import Person, server_command, server_environment
from tests.use_cases.test_tools_sandbox import FAILURES, SUCCESS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Open = Callable[[Sandbox, str, Person], Any]


def by_login(cases: list[tuple[Any, ...]], *, anonymous_as: str | None) -> dict[str, list[tuple[Any, ...]]]:
    # An MCP server configured with a token cannot call with no credential at all: a success
    # that needs none also holds with one (`anonymous_as`), while a failure that is about having
    # none is left to the runner tests.
    grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for case in cases:
        login = case[1] if case[1] is not None else anonymous_as
        if login is not None:
            grouped[login].append(case)
    return grouped


@asynccontextmanager
async def over_stdio(sandbox: Sandbox, login: str, person: Person, _: Path) -> AsyncIterator[Any]:
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.tokens[login])
    async with Client(
        StdioServerParameters(command=command, args=args, env=env), mode="legacy", elicitation_callback=person
    ) as client:
        yield client


@asynccontextmanager
async def over_http(sandbox: Sandbox, login: str, person: Person, tmp: Path) -> AsyncIterator[Any]:
    env = {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp / f"audit-{login}.jsonl"),
    }
    async with team_server(env) as url:
        async with mcp_client(
            url, sandbox.tokens[login], mode="legacy", elicitation_callback=person
        ) as client:
            yield client


def text_of(result: Any) -> str:
    return result.content[0].text if result.content else ""


@pytest.mark.parametrize("transport", [over_stdio, over_http], ids=["stdio", "http"])
async def test_every_tool_succeeds_and_fails_with_its_hint_through_a_real_client(
    sandbox: Sandbox, transport: Any, tmp_path: Path
) -> None:
    successes = by_login(SUCCESS, anonymous_as=sandbox.admin_login)
    failures = by_login(FAILURES, anonymous_as=None)
    called: set[str] = set()
    problems: list[str] = []
    for login in sorted(set(successes) | set(failures)):
        person = Person("accept")
        with anyio.fail_after(180):
            async with transport(sandbox, login, person, tmp_path) as client:
                for tool, _, args, check in successes.get(login, []):
                    sandbox.reset()
                    result = await client.call_tool(tool, args)
                    called.add(tool)
                    if result.is_error or not check(result.structured_content or {}):
                        problems.append(f"{tool} {args} as {login}: {text_of(result)[:200]}")
                for tool, _, args, kind, phrase in failures.get(login, []):
                    sandbox.reset()
                    result = await client.call_tool(tool, args)
                    error = (result.structured_content or {}).get("error") or {}
                    if not result.is_error or error.get("kind") != kind or phrase not in text_of(result):
                        problems.append(
                            f"{tool} {args} as {login} should fail ({kind}): {text_of(result)[:200]}"
                        )
    assert problems == []
    assert called == set(WOODPECKER_TOOLS.names)
