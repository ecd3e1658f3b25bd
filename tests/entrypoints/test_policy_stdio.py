"""A policy file on a real stdio server (ADR 0079): the process started as a client starts it, driven by the
MCP SDK's client, against the sandbox Woodpecker on a real socket; and the policies it refuses to start with."""

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from domain.woodpecker.questions import POLICY_ASKS
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CANARY = "canary-policy-7c2e"


def policy_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def params(sandbox: Sandbox, policy: Path) -> StdioServerParameters:
    command, args = server_command()
    env = server_environment(f"{sandbox.url}/api/", sandbox.admin_token, WOODPECKER_MCP_POLICY=str(policy))
    return StdioServerParameters(command=command, args=args, env=env)


async def test_a_stdio_server_whose_policy_denies_delete_repository_refuses_it_unasked_and_sends_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    policy = policy_file(tmp_path, "[tools.delete_repository]\ndeny = true\n")
    person = Person("accept")
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err, anyio.fail_after(60):
        async with Client(
            stdio_client(params(sandbox, policy), errlog=err), elicitation_callback=person
        ) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            sandbox.clear_requests()
            refused = await c.call_tool("delete_repository", {"repo_id": 1})
    assert person.questions == []
    assert sandbox.requests == []
    assert refused.is_error and refused.structured_content is not None
    assert refused.structured_content["error"]["kind"] == "denied_by_policy"
    assert "delete_repository" in listed and "DENIED by this server's policy" in (
        listed["delete_repository"].description or ""
    )
    stderr = errlog.read_text()
    assert f"policy {policy}: tools.delete_repository.deny: delete_repository is denied" in stderr
    # The audit trail (stderr by default) names the rule that refused it.
    assert '"outcome":"denied"' in stderr.replace(" ", "")
    assert '"policy":"tools.delete_repository.deny"' in stderr.replace(" ", "")


async def test_a_stdio_server_whose_policy_says_ask_always_on_get_repository_asks(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    policy = policy_file(tmp_path, '[tools.get_repository]\nask = "always"\n')
    person = Person("decline")
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err, anyio.fail_after(60):
        async with Client(
            stdio_client(params(sandbox, policy), errlog=err), elicitation_callback=person
        ) as c:
            sandbox.clear_requests()
            declined = await c.call_tool("get_repository", {"repo_id": 1})
            nothing_read = list(sandbox.requests)
            person.reply = "accept"
            read = await c.call_tool("get_repository", {"repo_id": 1})
    assert nothing_read == []
    assert "nothing was done" in str(getattr(declined.content[0], "text", "")).lower()
    assert len(person.questions) == 2 and POLICY_ASKS in person.questions[0]
    assert not read.is_error and read.structured_content is not None
    assert [(r.method, r.path) for r in sandbox.requests] == [("GET", "/api/repos/1")]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('[tools.delete_secret]\nask = "never"\n', 2, "would take a question away from a guarded tool"),
        ("[tools.delete_secret]\nallow = true\n", 2, "unknown key allow in [tools.delete_secret]"),
        ("# a typo\n[tools.delete_secrets]\ndeny = true\n", 2, "no tool is named delete_secrets"),
        ('[tools.delete_secret]\nexpires_in = "10m"\n', 2, "above the default of 5 minutes"),
        ("[tools.delete_secret\n", 1, "does not parse as TOML"),
    ],
)
def test_a_policy_that_would_loosen_the_guard_or_names_the_unknown_stops_the_server_at_start(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    policy = policy_file(tmp_path, text)
    command, args = server_command()
    done = subprocess.run(
        [command, *args],
        env=server_environment("http://127.0.0.1:9", CANARY, WOODPECKER_MCP_POLICY=str(policy)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    (only,) = done.stderr.splitlines()
    assert only.startswith(f"woodpecker-ci-mcp: WOODPECKER_MCP_POLICY: {policy}:{line}: "), only
    assert words in only
    assert CANARY not in done.stderr


def test_a_missing_policy_file_stops_the_server_at_start(tmp_path: Path) -> None:
    command, args = server_command()
    missing = tmp_path / "nowhere.toml"
    done = subprocess.run(
        [command, *args],
        env=server_environment("http://127.0.0.1:9", CANARY, WOODPECKER_MCP_POLICY=str(missing)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"woodpecker-ci-mcp: WOODPECKER_MCP_POLICY: {missing}: cannot be read (No such file or directory); "
        "point WOODPECKER_MCP_POLICY at a readable TOML file (docs/policy.md), or unset it"
    ]
