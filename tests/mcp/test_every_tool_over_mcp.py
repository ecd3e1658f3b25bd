"""Every tool through a real MCP client against the sandbox: a success and a hinted failure each, in process and over HTTP, on both protocol revisions.

The cases are the ToolRunner's (tests/use_cases/test_tools_sandbox.py); here they travel the
whole way: SDK client -> transport -> our server -> httpx -> the simulated Woodpecker. Each
case acts as its seeded login: in process a server from the container per login, its client
on in-memory streams; over HTTP one per-client server on a loopback socket where each client
presents its own Woodpecker token, so every result is also written as JSON on the wire. A
server process over stdio is test_e2e's (one per revision): it runs the same server code, so
spawning one per login and revision here would add only its start-up (docs/adr/0025). The
sandbox is re-seeded before every call; guarded calls are approved by the person at the client.
Per-client HTTP does not list a non-admin the admin-only tools (docs/adr/0029), so there
a non-admin's call to one is an unknown tool rather than Woodpecker's refusal.

Every success must also carry its data in the text content, for clients that read only
`content`: every scalar leaf of `structuredContent` (string, number, boolean) appears in the
text as its JSON member (`"key":value`, or the JSON value for a list item), and every log line
of get_step_logs appears with its number (`[0042] text`). There are no cut values to except:
a value cut to fit the budget is cut in `structuredContent` too, and the text carries the
same cut value. The untrusted markers are not repeated in the data: the warning line, which
must then be the first line, says them.
"""

import json
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from domain import visible
from domain.toolsets import admin_only
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results.envelope import WARNINGS
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import MODES, Person, harness_for
from tests.use_cases.test_tools_sandbox import FAILURES, SUCCESS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Open = Callable[[Sandbox, str, Person, Path, str], Any]
ADMIN_ONLY = admin_only(WOODPECKER_TOOLS)


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
async def in_process(sandbox: Sandbox, login: str, person: Person, _: Path, mode: str) -> AsyncIterator[Any]:
    async with harness_for(sandbox, sandbox.tokens[login]) as harness:
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            yield client


@asynccontextmanager
async def over_http(sandbox: Sandbox, login: str, person: Person, tmp: Path, mode: str) -> AsyncIterator[Any]:
    env = {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp / f"audit-{login}.jsonl"),
    }
    async with team_server(env) as url:
        async with mcp_client(url, sandbox.tokens[login], mode=mode, elicitation_callback=person) as client:
            yield client


def text_of(result: Any) -> str:
    return result.content[0].text if result.content else ""


def _json(value: Any) -> str:
    # Compact JSON as the text writes it: the three line breaks JSON leaves raw are escaped, and
    # so is every invisible character (as JSON's ASCII form writes it: docs/adr/0045).
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    return "".join(json.dumps(c)[1:-1] if visible.is_hidden(c) else c for c in text)


def missing_from_text(structured: dict[str, Any], text: str) -> list[str]:
    """The scalar leaves of `structured` (by path) that its text does not carry; see the module docstring."""
    missing: list[str] = []
    data = dict(structured)
    if data.get("untrusted") is True and data.get("source") in WARNINGS:
        warning = WARNINGS[data["source"]]
        del data["untrusted"], data["source"]
        if not text.startswith(warning + "\n"):
            missing.append("the untrusted warning as the first line")

    def walk(value: Any, path: str, member: str | None) -> None:
        if isinstance(value, dict):
            if path.startswith("lines[") and set(value) == {"line", "text"}:
                for part in value["text"].split("\n"):
                    if f"[{value['line']:04d}] {visible.escape(part)}".rstrip() not in text:
                        missing.append(f"{path} (log line {value['line']})")
                return
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else key, key)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]", None)
        elif isinstance(value, str | int | float | bool):
            form = f"{_json(member)}:{_json(value)}" if member is not None else _json(value)
            if form not in text:
                missing.append(path)

    walk(data, "", None)
    return missing


# Through the guard, the read before the question answers these failures without a question and
# without the write (issue 37); the tool runner alone (tests/use_cases) meets Woodpecker's own answer.
BEFORE_ASKING = {("approve_pipeline", "rejected"): ("not_blocked", "nobody was asked and no change was sent")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", [in_process, over_http], ids=["memory", "http"])
async def test_every_tool_succeeds_and_fails_with_its_hint_through_a_real_client(
    sandbox: Sandbox, transport: Any, mode: str, tmp_path: Path
) -> None:
    successes = by_login(SUCCESS, anonymous_as=sandbox.admin_login)
    failures = by_login(FAILURES, anonymous_as=None)
    called: set[str] = set()
    problems: list[str] = []
    for login in sorted(set(successes) | set(failures)):
        person = Person("accept")
        with anyio.fail_after(180):
            async with transport(sandbox, login, person, tmp_path, mode) as client:
                for tool, _, args, check in successes.get(login, []):
                    sandbox.reset()
                    result = await client.call_tool(tool, args)
                    called.add(tool)
                    if result.is_error or not check(result.structured_content or {}):
                        problems.append(f"{tool} {args} as {login}: {text_of(result)[:200]}")
                        continue
                    missing = missing_from_text(result.structured_content, text_of(result))
                    if missing:
                        problems.append(
                            f"{tool} {args}: the text lacks {missing[:5]} ({len(missing)} in all)"
                        )
                for tool, _, args, kind, phrase in failures.get(login, []):
                    kind, phrase = BEFORE_ASKING.get((tool, kind), (kind, phrase))
                    sandbox.reset()
                    result = await client.call_tool(tool, args)
                    error = (result.structured_content or {}).get("error") or {}
                    if transport is over_http and login != sandbox.admin_login and tool in ADMIN_ONLY:
                        if not (result.is_error and f"Unknown tool: {tool}" in text_of(result)):
                            problems.append(f"{tool} as {login} should be unknown: {text_of(result)[:200]}")
                        continue
                    if not result.is_error or error.get("kind") != kind or phrase not in text_of(result):
                        problems.append(
                            f"{tool} {args} as {login} should fail ({kind}): {text_of(result)[:200]}"
                        )
    assert problems == []
    assert called == set(WOODPECKER_TOOLS.names)
