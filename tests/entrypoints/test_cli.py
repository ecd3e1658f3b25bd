"""The woodpecker-ci-mcp command: help, refusals with exit code 1, stdio and HTTP serving, and the sandbox commands."""

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from domain.arguments import validate
from domain.config import ELICITATION_OFF_LINE
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.cli import connection_details, main
from entrypoints.cli.sandbox import try_hint
from entrypoints.settings import KNOWN_VARIABLES, VARIABLES
from sandbox.server import Sandbox

pytestmark = pytest.mark.anyio

CANARY = "canary-5d1e"
SCRIPT = Path(sys.executable).with_name("woodpecker-ci-mcp")
BEHAVIOUR_VARIABLES = (
    "WOODPECKER_URL",
    "WOODPECKER_TOKEN",
    "WOODPECKER_READ_ONLY",
    "WOODPECKER_ALLOW_TOOLS",
    "WOODPECKER_DENY_TOOLS",
    "WOODPECKER_INSECURE_TLS",
    "ELICITATION",
)


def script() -> str:
    if not SCRIPT.exists():
        pytest.skip("the woodpecker-ci-mcp console script is not installed in this environment")
    return str(SCRIPT)


def environment(**variables: str) -> dict[str, str]:
    """Only what a process needs, so no variable of the test runner leaks in."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"), **variables}


# ----------------------------------------------------------------------------------- in-process


def test_help_names_every_environment_variable_and_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for name in (*BEHAVIOUR_VARIABLES, *(name for name, _, _ in VARIABLES)):
        assert name in text
    assert any(name.startswith("WOODPECKER_MCP_") for name, _, _ in VARIABLES)
    for flag in ("--transport", "--host", "--port", "--version", "sandbox"):
        assert flag in text


def test_sandbox_help_names_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sandbox", "--help"])
    text = capsys.readouterr().out
    for flag in ("--api-only", "--port", "--woodpecker-version", "--history", "--stdio"):
        assert flag in text


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("woodpecker-ci-mcp ")


@pytest.mark.parametrize(
    "argv",
    [["--port", "3"], ["--transport", "carrier-pigeon"], ["--transport", "http", "--port", "70000"]],
)
def test_a_flag_that_cannot_apply_is_a_usage_error(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def test_a_refused_setting_returns_1_with_one_line_and_no_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WOODPECKER_URL", f"https://me:{CANARY}@ci.example.com")
    monkeypatch.setenv("WOODPECKER_TOKEN", CANARY)
    assert main([]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert "WOODPECKER_URL" in captured.err and CANARY not in captured.err
    assert "WOODPECKER_TOKEN" not in os.environ


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """This process's environment without any variable the server reads."""
    for name in KNOWN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"WOODPECKER_ALLOW_TOOLS": "list_*,no_such_tool"}, "no_such_tool"),
        ({"WOODPECKER_ALLOW_TOOLS": "*_pipeline"}, "*_pipeline"),
        ({"WOODPECKER_DENY_TOOLS": "frobnicate_*"}, "frobnicate_*"),
        (
            {"WOODPECKER_READ_ONLY": "true", "WOODPECKER_ALLOW_TOOLS": "delete_repository"},
            "delete_repository",
        ),
    ],
)
def test_a_tool_filter_entry_that_cannot_apply_returns_1_with_one_line_naming_it(
    clean_environ: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    named: str,
) -> None:
    for name, value in variables.items():
        clean_environ.setenv(name, value)
    assert main([]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    assert named in captured.err


def test_one_http_start_reports_every_bad_variable_not_only_the_first_readers(
    clean_environ: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_environ.setenv("WOODPECKER_URL", f"ftp://{CANARY}.example.com")
    clean_environ.setenv("WOODPECKER_MCP_PORT", "port-eighty")
    assert main(["--transport", "http"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3, lines
    assert [
        name
        for name in ("WOODPECKER_URL", "WOODPECKER_MCP_PORT", "WOODPECKER_MCP_BEARER")
        if any(name in line for line in lines)
    ] == ["WOODPECKER_URL", "WOODPECKER_MCP_PORT", "WOODPECKER_MCP_BEARER"]
    assert all(CANARY not in line for line in lines)


@pytest.mark.parametrize("argv", [["--port", "5", "sandbox"], ["sandbox", "--stdio", "--port", "5"]])
def test_a_sandbox_port_that_would_be_ignored_is_a_usage_error(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def test_the_sandbox_details_carry_a_claude_code_line_and_a_json_snippet() -> None:
    text = connection_details("Simulated Woodpecker", "http://127.0.0.1:5/mcp", "b" * 43, "Try: this.")
    assert text.endswith("\nTry: this.")
    lines = text.splitlines()
    claude = next(line for line in lines if "claude mcp add" in line)
    assert "--transport http" in claude and "http://127.0.0.1:5/mcp" in claude and "b" * 43 in claude
    snippet = json.loads(next(line.strip() for line in lines if line.strip().startswith("{")))
    server = snippet["mcpServers"]["woodpecker-sandbox"]
    assert server["url"] == "http://127.0.0.1:5/mcp"
    assert server["headers"] == {"Authorization": "Bearer " + "b" * 43}


def test_every_name_the_sandbox_hint_mentions_exists_in_the_seeded_sandbox(sandbox: Sandbox) -> None:
    hint = try_hint(sandbox)
    (shown,) = re.findall(r"\{.*?\}", hint)
    arguments = json.loads(shown)
    # The tools it names are ours, and the arguments it shows are a valid call of the one it names them for.
    tools = re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", hint.replace(shown, ""))
    assert tools == ["list_repositories", "get_step_logs", "delete_secret"], hint
    assert all(name in WOODPECKER_TOOLS.names for name in tools)
    assert validate(WOODPECKER_TOOLS.get("delete_secret"), arguments) == arguments
    # The repository and its secret are in the sandbox as seeded, asked over its own API.
    headers = {"Authorization": f"Bearer {sandbox.admin_token}"}
    url = f"{sandbox.api_url}/repos/{arguments['repo_id']}/secrets/{arguments['name']}"
    answer = httpx.get(url, headers=headers, timeout=10)
    assert answer.status_code == 200 and answer.json()["name"] == arguments["name"], answer.text
    missing = httpx.get(
        f"{sandbox.api_url}/repos/{arguments['repo_id']}/secrets/api_token", headers=headers, timeout=10
    )
    assert missing.status_code == 404  # the check above can fail: a name the seed lacks is not found


def test_the_guide_shows_the_hint_the_seeded_sandbox_prints(sandbox: Sandbox) -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text(encoding="utf-8")
    assert try_hint(sandbox) in guide.splitlines()


# ---------------------------------------------------------------------------------- subprocesses


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"WOODPECKER_URL": f"ftp://{CANARY}.example.com"}, "WOODPECKER_URL"),
        ({"ELICITATION": "yes"}, "true or false"),
        ({"WOODPECKER_READ_ONLY": "true", "WOODPECKER_ALLOW_TOOLS": "list_*,delete_secret"}, "delete_secret"),
    ],
)
def test_the_console_script_refuses_a_bad_setting_with_exit_code_1_and_one_line(
    variables: dict[str, str], named: str
) -> None:
    done = subprocess.run(
        [script()],
        env=environment(WOODPECKER_TOKEN=CANARY, **variables),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert named in done.stderr
    assert CANARY not in done.stderr


@pytest.mark.slow
async def test_a_stdio_session_lists_and_calls_tools_and_the_token_never_reaches_stderr(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    token = sandbox.admin_token
    params = StdioServerParameters(
        command=script(),
        env={"WOODPECKER_URL": f"{sandbox.url}/api/", "WOODPECKER_TOKEN": token, "ELICITATION": "false"},
    )
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        with anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
                tools = (await client.list_tools()).tools
                listed = await client.call_tool("list_repositories", {})
                guarded = await client.call_tool("delete_repository", {"repo_id": 1})
    stderr = errlog.read_text()
    assert len(tools) == len(WOODPECKER_TOOLS)
    assert not listed.is_error
    assert guarded.structured_content is not None and "confirm_token" in guarded.structured_content
    assert stderr.count(ELICITATION_OFF_LINE) == 1
    assert token not in stderr
    assert sandbox.state_changing_requests() == []


@asynccontextmanager
async def started(args: list[str], variables: dict[str, str]) -> AsyncIterator[Process]:
    """The console script, stopped with Ctrl-C (SIGINT) on the way out; it must then exit 0."""
    process = await anyio.open_process([script(), *args], env=environment(**variables))
    try:
        yield process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                with anyio.fail_after(20):
                    await process.wait()
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
        await process.aclose()
    assert process.returncode == 0


async def read_until(stream: BufferedByteReceiveStream, marker: str) -> list[str]:
    lines: list[str] = []
    while not lines or marker not in lines[-1]:
        lines.append((await stream.receive_until(b"\n", 65536)).decode())
    return lines


async def list_tools_over_http(url: str, bearer: str | None) -> list[Any]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return list((await client.list_tools()).tools)


@pytest.mark.slow
async def test_http_transport_serves_authenticated_clients_and_refuses_others() -> None:
    bearer = "x" * 40
    with anyio.fail_after(60):
        async with started(
            ["--transport", "http", "--port", "0"],
            {"WOODPECKER_MCP_BEARER": bearer, "WOODPECKER_ALLOW_TOOLS": "essential"},
        ) as process:
            assert process.stderr is not None
            lines = await read_until(BufferedByteReceiveStream(process.stderr), "serving MCP")
            url = lines[-1].split(" at ")[1].split(";")[0]
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            tools = await list_tools_over_http(url, bearer)
            async with httpx2.AsyncClient() as http:
                anonymous = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert len(tools) == 12
    assert anonymous.status_code == 401


@pytest.mark.slow
async def test_sandbox_api_only_prints_one_json_line_with_url_and_tokens() -> None:
    with anyio.fail_after(60):
        async with started(["sandbox", "--api-only", "--port", "0"], {}) as process:
            assert process.stdout is not None
            first = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 65536)
            info = json.loads(first)
            async with httpx2.AsyncClient() as http:
                version = await http.get(f"{info['url']}/version")
    assert info["url"].startswith("http://127.0.0.1:")
    assert set(info["tokens"]) >= {"ada", "bob"}
    assert version.status_code == 200


@pytest.mark.slow
async def test_sandbox_prints_connection_details_that_work_over_http() -> None:
    with anyio.fail_after(60):
        async with started(["sandbox"], {"WOODPECKER_READ_ONLY": "true"}) as process:
            assert process.stdout is not None
            lines = await read_until(BufferedByteReceiveStream(process.stdout), '{"mcpServers"')
            text = "".join(lines)
            server = json.loads(lines[-1])["mcpServers"]["woodpecker-sandbox"]
            bearer = server["headers"]["Authorization"].removeprefix("Bearer ")
            tools = await list_tools_over_http(server["url"], bearer)
            async with httpx2.AsyncClient(headers=server["headers"]) as http:
                async with Client(streamable_http_client(server["url"], http_client=http)) as client:
                    repositories = await client.call_tool("list_repositories", {})
    assert "claude mcp add --transport http woodpecker-sandbox" in text
    assert len(tools) == sum(t.is_read for t in WOODPECKER_TOOLS)
    assert not repositories.is_error


@pytest.mark.slow
async def test_sandbox_stdio_serves_the_simulated_woodpecker_to_a_client_that_starts_it(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(command=script(), args=["sandbox", "--stdio"])
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        with anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
                result = await client.call_tool("get_current_user", {})
    assert not result.is_error
    assert result.structured_content is not None and "ada" in json.dumps(result.structured_content)
    assert "Simulated Woodpecker" in errlog.read_text()


async def test_sandbox_with_a_history_answers_the_history_tool_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(command=script(), args=["sandbox", "--stdio", "--history", "30"])
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        with anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
                result = await client.call_tool("analyze_pipeline_history", {"repo_id": 6, "limit": 30})
    assert not result.is_error, result.content
    found = result.structured_content or {}
    assert found["read"]["pipelines"] == 30 and found["flaky"] and found["red_since"]


def test_a_sandbox_history_too_short_to_hold_its_facts_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--history", "2"]) == 2
    assert "--history takes at least" in capsys.readouterr().err
