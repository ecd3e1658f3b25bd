"""What was shown is what is sent: every string argument that reaches a path, through the real gateway into the sandbox's request log, is refused with nothing sent or arrives as exactly the segments given, under /api/."""

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.tools import Catalogue, Param, ToolSpec
from domain.woodpecker import requests
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.tools import ToolResult, ToolRunner
from ports.woodpecker import Credential, Request, RequestNotAsPlanned
from sandbox.server import Sandbox
from tests.domain.test_arguments_fuzz import valid_arguments
from tests.fixtures.gateway import CANARY, GatewayFactory, ScriptedServer

# Every (tool, argument) whose value becomes part of a request path.
PATH_ARGUMENTS = tuple((t, name) for t in WOODPECKER_TOOLS for name in requests.path_params(t))
# Arguments whose slashes travel as path separators (Woodpecker routes them as wildcards).
WILDCARDS = {("lookup_repository", "full_name"), ("lookup_organization", "name")}
REFUSED_KINDS = {"invalid_arguments", "request_not_as_planned"}

HOSTILE = (
    ".",
    "..",
    "%2e%2e",
    "%2E%2e",
    ".%2e",
    "%252e%252e",
    "%2F",
    "a%2F..",
    "\\",
    "..\\..",
    ";",
    "..;",
    "?",
    "#",
    "a?b=c",
    "a#b",
    "\u2025",
    "\uff0e\uff0e",
    "\u2024",
    "a/../b",
    "../../agents/1",
    "../../../../other-app/collect",
    "a//b",
    "/a",
    "a/",
    "x" * 5000,
    "é/ü",
    "\x00",
    " ",
    "a b",
)
VALUES = (
    st.sampled_from(HOSTILE)
    | st.text(max_size=30)
    | st.builds(
        "".join,
        st.lists(
            st.sampled_from([".", "..", "/", "\\", "%2e", "%2F", "a", "?", "#", ";", "\u2025"]), max_size=6
        ),
    )
)


def _without_patterns(tool: ToolSpec) -> ToolSpec:
    """The tool as if its catalogue patterns and lengths were wrong: what stops a bad value then."""

    def loose(param: Param) -> Param:
        if param.type != "string":
            return param
        kept = {k: v for k, v in param.constraints.items() if k not in ("pattern", "maxLength", "minLength")}
        return replace(param, constraints=kept)

    return replace(tool, params=tuple(loose(p) for p in tool.params))


LOOSE = Catalogue(tuple(_without_patterns(t) for t in WOODPECKER_TOOLS))


def _expected_segments(template: str, args: Mapping[str, Any], tool: str) -> list[str] | None:
    """The decoded segments a request made from `template` must have, or None when a name is missing."""
    out: list[str] = []
    for part in template.split("/")[1:]:
        m = re.fullmatch(r"\{(\w+)\}", part)
        if m is None:
            out.append(part)
            continue
        if m.group(1) not in args:
            return None
        value = str(args[m.group(1)])
        out.extend(value.split("/") if (tool, m.group(1)) in WILDCARDS else [value])
    return out


def assert_sent_exactly_or_nothing(
    sandbox: Sandbox, tool: ToolSpec, args: Mapping[str, Any], result: ToolResult
) -> None:
    sent = list(sandbox.requests)
    kind = (result.structured.get("error") or {}).get("kind") if result.is_error else None
    if kind in REFUSED_KINDS:
        assert sent == [], (tool.name, args, [(r.method, r.path) for r in sent])
        return
    templates = [_expected_segments(e.path, args, tool.name) for e in tool.endpoints]
    for request in sent:
        assert request.path.startswith("/api/"), (tool.name, args, request.path)
        decoded = [unquote(part) for part in request.path.split("/")[1:]]
        assert decoded in templates, (tool.name, args, request.method, request.path)


async def _run(sandbox: Sandbox, catalogue: Catalogue, tool: ToolSpec, args: Mapping[str, Any]) -> ToolResult:
    sandbox.clear_requests()
    credential = Credential(sandbox.admin_token)
    gateway = HttpxWoodpeckerGateway(sandbox.url, token=credential, retries=0, trust_env=False)
    try:
        return await ToolRunner(catalogue, gateway, default_credential=credential).run(tool.name, args, None)
    finally:
        await gateway.aclose()


PROPERTY = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.slow
@pytest.mark.parametrize("loose", [False, True], ids=["catalogue", "without-patterns"])
@PROPERTY
@given(data=st.data())
def test_a_path_value_is_refused_with_nothing_sent_or_arrives_as_exactly_its_segments(
    sandbox_session: Sandbox, loose: bool, data: st.DataObject
) -> None:
    # Synchronous on purpose: everything is drawn first, then one event loop runs the call.
    catalogue = LOOSE if loose else WOODPECKER_TOOLS
    tool, name = data.draw(st.sampled_from(PATH_ARGUMENTS), label="argument")
    args = data.draw(valid_arguments(tool), label="valid")
    args[name] = data.draw(VALUES, label="value")
    result = anyio.run(_run, sandbox_session, catalogue, catalogue.get(tool.name), args)
    assert_sent_exactly_or_nothing(sandbox_session, tool, args, result)
    if requests.is_path_step(args[name]):
        assert result.is_error and result.structured["error"]["kind"] == "invalid_arguments", result
        assert name in result.text


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "name"), PATH_ARGUMENTS, ids=[f"{t.name}.{n}" for t, n in PATH_ARGUMENTS])
async def test_every_hostile_value_of_every_path_argument(
    sandbox: Sandbox, tool: ToolSpec, name: str
) -> None:
    base = {p.name: _plain(p) for p in tool.params if p.required}
    if "scope" in {p.name for p in tool.params}:
        base |= {"scope": "repository", "repo_id": 1}
    for catalogue in (WOODPECKER_TOOLS, LOOSE):
        for value in HOSTILE:
            args = {**base, name: value}
            result = await _run(sandbox, catalogue, catalogue.get(tool.name), args)
            assert_sent_exactly_or_nothing(sandbox, tool, args, result)
            if requests.is_path_step(value):
                assert result.structured["error"]["kind"] == "invalid_arguments", (value, result)
                assert name in result.text


def _plain(param: Param) -> Any:
    if param.type == "integer":
        return 1
    if param.type == "boolean":
        return False
    if param.choices:
        return param.choices[0]
    return "a/b" if param.name == "full_name" else "plain"


# ------------------------------------------------------------------ the gateway alone, as the last line

DOT_PATHS = (
    "/api/repos/1/secrets/..",
    "/api/repos/1/secrets/.",
    "/api/repos/1/secrets/%2e%2e",
    "/api/repos/1/secrets/.%2E",
    "/api/repos/1/secrets/",
    "/api/repos//1",
    "/api/orgs/lookup/../../../../other-app/collect",
)


@pytest.mark.anyio
@pytest.mark.parametrize("prefix", ["", "/woodpecker"])
@pytest.mark.parametrize("path", DOT_PATHS)
async def test_the_gateway_sends_nothing_when_the_request_would_not_be_the_planned_one(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, prefix: str, path: str
) -> None:
    # However the domain planned it, a path the HTTP library (or any proxy) would fold is never sent,
    # and the token never leaves for a route outside the configured root's /api/.
    gateway = make_gateway(scripted_server.url + prefix)
    with pytest.raises(RequestNotAsPlanned) as refused:
        await gateway.send(Request("DELETE", path), None)
    assert "Nothing was sent" in str(refused.value) and CANARY not in str(refused.value)
    assert scripted_server.requests == []


@pytest.mark.anyio
@pytest.mark.parametrize("prefix", ["", "/woodpecker"])
async def test_the_planned_request_goes_out_byte_for_byte_with_its_query(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, prefix: str
) -> None:
    gateway = make_gateway(scripted_server.url + prefix)
    path = "/api/repos/1/secrets/a%3Fb%23c%3B%5C%252e%252e"
    await gateway.send(
        Request("GET", path, {"branch": "feat/x?y#z&w=1", "before": "2026-08-01T00:00:00+02:00"}), None
    )
    await gateway.send(Request("GET", "/version"), None)
    first, second = scripted_server.requests
    assert first.path == prefix + path
    assert (
        first.target.split("?", 1)[1]
        == "branch=feat%2Fx%3Fy%23z%26w%3D1&before=2026-08-01T00%3A00%3A00%2B02%3A00"
    )
    assert first.headers["authorization"] == f"Bearer {CANARY}"
    assert second.path == prefix + "/version" and "authorization" not in second.headers
