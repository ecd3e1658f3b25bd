"""Without WOODPECKER_URL or WOODPECKER_TOKEN the real wiring lists every tool and answers every call but get_server_info with setup instructions."""

import re
from typing import Any

import anyio
import pytest
from dependency_injector import providers
from mcp import Client

from domain.tools import Param, ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import SETUP, SETUP_WITHOUT_LOGIN
from entrypoints.container import build_container, opened, resolved
from entrypoints.settings import read_settings
from ports.use_cases.tools import ToolRunner
from tests.fakes.woodpecker import FakeWoodpecker
from tests.fixtures.mcp import Person
from tests.mcp.guarded_calls import WIDENING

pytestmark = pytest.mark.anyio

UNCONFIGURED = [
    pytest.param({}, SETUP, id="no-url"),
    pytest.param({"WOODPECKER_URL": "https://ci.example.com"}, SETUP_WITHOUT_LOGIN, id="url-without-token"),
]
# get_server_info says the setup itself; validate_pipeline_config sends nothing, so needs none.
UNGUARDED = [
    t
    for t in WOODPECKER_TOOLS
    if t.guard is None and t.name not in ("get_server_info", "validate_pipeline_config")
]
GUARDED = [t for t in WOODPECKER_TOOLS if t.guard is not None]
_VALIDATOR = ToolRunner(WOODPECKER_TOOLS, FakeWoodpecker())


def _value(param: Param) -> Any:
    c = param.constraints
    if param.choices:
        return param.choices[0]
    if param.type == "integer":
        return max(1, c.get("minimum", 1))
    if param.type == "boolean":
        return False
    if param.type == "array":
        return [c["items"]["enum"][0]] if "enum" in c["items"] else ["a"]
    if param.type == "object":
        return {}
    pattern = c.get("pattern")
    return next(
        s for s in ("a", "acme/api", "https://ci.example.com") if pattern is None or re.search(pattern, s)
    )


def valid_arguments(tool: ToolSpec) -> dict[str, Any]:
    """Valid arguments for `tool` (the widening call for a guarded one): required ones first,
    then optional ones one at a time until the tool accepts them (an update needs a change)."""
    if tool.name in WIDENING:
        return dict(WIDENING[tool.name])
    args: dict[str, Any] = {}
    for p in tool.params:
        when = p.required_when
        if p.required or (when is not None and when.holds(args)):
            args[p.name] = _value(p)
    optional = [p for p in tool.params if p.name not in args and not p.required]
    for p in [None, *optional]:
        if p is not None and p.required_when is None and p.only_when is None:
            args[p.name] = _value(p)
        try:
            _VALIDATOR.validate(tool.name, args)
            return args
        except ValueError:
            continue
    raise AssertionError(f"no valid arguments found for {tool.name}")


async def call_every(
    environ: dict[str, str], tools: list[ToolSpec], person: Person | None
) -> tuple[list[tuple[str, Any]], FakeWoodpecker, int]:
    container = build_container(read_settings(dict(environ)))
    woodpecker = FakeWoodpecker()
    container.gateway.override(providers.Object(woodpecker))
    results = []
    async with opened(container):
        server = await resolved(container.mcp_server())
        with anyio.fail_after(30):
            async with Client(server, mode="legacy", elicitation_callback=person) as client:
                listed = len((await client.list_tools()).tools)
                for tool in tools:
                    results.append((tool.name, await client.call_tool(tool.name, valid_arguments(tool))))
    return results, woodpecker, listed


def test_the_helper_builds_arguments_every_tool_accepts() -> None:
    for tool in WOODPECKER_TOOLS:
        _VALIDATOR.validate(tool.name, valid_arguments(tool))


@pytest.mark.parametrize(("environ", "setup"), UNCONFIGURED)
async def test_every_unguarded_tool_answers_with_setup_instructions_and_sends_nothing(
    environ: dict[str, str], setup: str
) -> None:
    results, woodpecker, listed = await call_every(environ, UNGUARDED, Person())
    assert listed == len(WOODPECKER_TOOLS)
    for name, result in results:
        assert result.is_error, name
        assert setup in result.content[0].text, name
    assert woodpecker.calls == []


@pytest.mark.parametrize("channel", ["dialog", "token"])
@pytest.mark.parametrize(("environ", "setup"), UNCONFIGURED)
async def test_every_guarded_tool_answers_with_setup_instructions_without_asking_anybody(
    environ: dict[str, str], setup: str, channel: str
) -> None:
    person = Person() if channel == "dialog" else None
    results, woodpecker, _ = await call_every(environ, GUARDED, person)
    for name, result in results:
        assert result.is_error, name
        assert setup in result.content[0].text, name
        assert "confirm_token" not in (result.structured_content or {}), name
    assert person is None or person.questions == []
    assert woodpecker.calls == []
