"""The official TypeScript client (@modelcontextprotocol/client 2.x) against the real server over stdio, in both eras."""

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from domain.arguments import input_schema
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.mcp import server_command, server_environment
from tests.mcp.guarded_calls import WIDENING, assert_clean_question

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
SCRIPT = NODE_DIR / "client.mjs"

pytestmark = [
    pytest.mark.node,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "client").is_dir(),
        reason="run `npm ci` in tests/node first",
    ),
]

TOOLS = ("approve_pipeline", "update_secret", "delete_repository")
WRITES = {
    ("POST", "/api/repos/1/pipelines/11/approve"),
    ("PATCH", "/api/repos/1/secrets/docker_password"),
    ("DELETE", "/api/repos/1"),
}


def run_node(sandbox: Sandbox, plan: dict[str, Any], **env: str) -> dict[str, Any]:
    command, args = server_command()
    full = {
        "command": command,
        "args": args,
        "env": server_environment(sandbox.url, sandbox.admin_token, **env),
    }
    done = subprocess.run(
        ["node", str(SCRIPT)],
        input=json.dumps({**full, **plan}),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NODE_DIR,
        check=False,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    assert done.returncode == 0 and "error" not in report, (done.stdout, done.stderr)
    return dict(report)


GUARDED_CALLS: list[dict[str, Any]] = [
    {"name": tool, "arguments": WIDENING[tool], "answer": answer}
    for tool in TOOLS
    for answer in ("decline", "accept")
]
LOG_WHERE = {"repo_id": 6, "number": 1, "step_id": 60103}
STEP_LOG = "woodpecker://repos/{repo_id}/pipelines/{number}/steps/{step_id}/log{?from_line}"
# Both tests' plans in one: a node client and a server started once per era, not once per test.
# The log call reads repository 6 after the guarded calls (which write to repository 1 only).
PLAN: dict[str, Any] = {
    "elicitation": True,
    "listTools": True,
    "calls": [
        *GUARDED_CALLS,
        {"name": "get_step_logs", "arguments": {**LOG_WHERE, "from_line": 0, "limit": 5}},
    ],
    "listTemplates": True,
    "reads": ["woodpecker://repos/6/pipelines/1/steps/60103/log?from_line=5"],
    "completions": [
        {
            "ref": {"type": "ref/resource", "uri": STEP_LOG},
            "argument": {"name": "repo_id", "value": "bench"},
        }
    ],
}

Run = tuple[dict[str, Any], list[tuple[str, str]]]


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    return {}


def run_of(era: str, sandbox: Sandbox, runs: dict[str, Run]) -> Run:
    """The report of this era's one run of PLAN on a freshly seeded sandbox, and the writes it made."""
    if era not in runs:
        sandbox.reset()
        report = run_node(sandbox, {"era": era, **PLAN})
        runs[era] = report, [(r.method, r.path) for r in sandbox.state_changing_requests()]
    return runs[era]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_typescript_client_lists_the_tools_and_only_a_yes_writes(
    sandbox_session: Sandbox, runs: dict[str, Run], era: str
) -> None:
    calls = GUARDED_CALLS
    report, writes = run_of(era, sandbox_session, runs)
    assert report["era"] == era
    tools = report["tools"]
    assert [t["name"] for t in tools] == list(WOODPECKER_TOOLS.names)
    for tool in tools:
        hints, spec = tool["annotations"], WOODPECKER_TOOLS.get(tool["name"])
        assert (
            hints["readOnlyHint"],
            hints["destructiveHint"],
            hints["idempotentHint"],
            hints["openWorldHint"],
        ) == (
            spec.annotations.read_only,
            spec.annotations.destructive,
            spec.annotations.idempotent,
            spec.annotations.open_world,
        )
        assert tool["inputSchema"] == input_schema(spec)
    assert len(report["calls"]) == len(PLAN["calls"])
    for call, outcome in zip(calls, report["calls"][: len(calls)], strict=True):
        assert len(outcome["questions"]) == 1, call
        assert_clean_question(outcome["questions"][0], call["arguments"])
        text = outcome["result"]["content"][0]["text"]
        if call["answer"] == "decline":
            assert "nothing was done" in text
        else:
            assert not outcome["result"].get("isError"), text
    assert set(writes) == WRITES
    assert len(writes) == len(WRITES)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_typescript_client_reads_a_linked_log_page_and_completes_a_repository(
    sandbox_session: Sandbox, runs: dict[str, Run], era: str
) -> None:
    report, _ = run_of(era, sandbox_session, runs)
    links = [b["uri"] for b in report["calls"][-1]["result"]["content"] if b["type"] == "resource_link"]
    assert links[-1] == "woodpecker://repos/6/pipelines/1/steps/60103/log?from_line=5"
    assert STEP_LOG in [t["uriTemplate"] for t in report["templates"]]
    page = report["reads"][0]["contents"][0]["text"]
    assert "[5]" in page or "[0005]" in page
    assert report["completions"][0]["completion"]["values"] == ["6"]
