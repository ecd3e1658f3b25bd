"""End to end with the official Python client: the real server as a stdio subprocess and on a real loopback socket, against the simulated Woodpecker.

These are the suite's stdio processes, one per protocol revision, and they run the whole guard
matrix; tests about what the server says rather than how it is reached build it from the
container in this process (docs/adr/0025).
"""

from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from adapters.mcp_http import build_http_app
from domain.arguments import input_schema
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import output_schema
from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for, server_command, server_environment, serving
from tests.mcp.guarded_calls import WIDENING, check_guarded_call

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def stdio_server(sandbox: Sandbox, **env: str) -> StdioServerParameters:
    command, args = server_command()
    return StdioServerParameters(
        command=command, args=args, env=server_environment(sandbox.url, sandbox.admin_token, **env)
    )


def assert_tools_match_the_catalogue(tools: list[Any]) -> None:
    assert [t.name for t in tools] == list(WOODPECKER_TOOLS.names)
    for tool in tools:
        spec = WOODPECKER_TOOLS.get(tool.name)
        hints = tool.annotations
        assert hints is not None
        assert (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ) == (
            spec.annotations.read_only,
            spec.annotations.destructive,
            spec.annotations.idempotent,
            spec.annotations.open_world,
        ), tool.name
        assert tool.input_schema == input_schema(spec), tool.name
        assert tool.output_schema == output_schema(spec), tool.name
        assert tool.title == spec.title and tool.description == spec.description


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio_the_tools_match_the_catalogue_and_every_guarded_tool_asks(
    sandbox: Sandbox, mode: str
) -> None:
    # The full matrix (30 tools x 4 answers) against the real server process; test_guard_matrix
    # runs the same matrix over HTTP.
    person = Person()
    with anyio.fail_after(90):
        async with Client(stdio_server(sandbox), mode=mode, elicitation_callback=person) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
            assert_tools_match_the_catalogue((await client.list_tools()).tools)
            for tool in sorted(WIDENING):
                await check_guarded_call(client, person, sandbox, tool)


@pytest.mark.parametrize("mode", MODES)
async def test_with_elicitation_off_the_token_names_the_server(sandbox: Sandbox, mode: str) -> None:
    person = Person()
    async with harness_for(sandbox, sandbox.admin_token, elicitation=False) as harness:
        with anyio.fail_after(60):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                first = await client.call_tool("pause_queue", {})
                assert first.structured_content is not None
                token = first.structured_content["confirm_token"]
                assert sandbox.state_changing_requests() == []
                second = await client.call_tool("pause_queue", {"confirm_token": token})
    assert person.questions == []
    assert "ELICITATION=false" in first.content[0].text  # type: ignore[union-attr]  # text content
    assert not second.is_error
    assert len(sandbox.state_changing_requests()) == 1


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_the_tools_match_the_catalogue(sandbox: Sandbox, mode: str) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(60):
            async with serving(build_http_app(harness.server)) as base:
                async with Client(f"{base}/mcp", mode=mode) as client:
                    assert_tools_match_the_catalogue((await client.list_tools()).tools)
