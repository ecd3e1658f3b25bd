"""Against a real Woodpecker (prebuilt binaries named by WOODPECKER_MCP_REAL_BIN_DIR; nothing here builds
them): the sandbox compared with it request by request, the answers the guard decides from, and the
guard's restart decision read from the real server. Deselected by default (`-m real_woodpecker` runs it;
docs/adr/0057)."""

import os
import sqlite3
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adapters.ruamel_workflow_syntax import RuamelWorkflowSyntax
from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.guard.policy import decide
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.rules import WOODPECKER_RULES
from ports.use_cases.tools import ToolRunner
from ports.woodpecker import Credential
from sandbox.seed import ADMIN_LOGIN, OUTSIDER_LOGIN, USER_LOGIN
from sandbox.server import running_sandbox
from tests.fakes.clock import FakeClock
from tests.real import differential as d
from tests.real import versions
from tests.real.forge_fake import wait_for
from tests.real.harness import ADMIN, ORG, OUTSIDER, PIPELINE_OK, USER, Real, bin_dir, running
from tests.real.scenario import Seeded, _wait_step, push, seed, wait_pipeline

pytestmark = [pytest.mark.real_woodpecker, pytest.mark.slow]


def _binaries() -> Any:
    binaries = bin_dir()
    if binaries is None:
        reason = "no prebuilt Woodpecker server and agent: set WOODPECKER_MCP_REAL_BIN_DIR"
        if os.environ.get("WOODPECKER_MCP_STRICT_SKIPS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return binaries


@pytest.fixture(scope="module")
def real() -> Iterator[tuple[Real, Seeded]]:
    """One seeded server for the tests below; each changes only what it made or names."""
    with running(_binaries()) as started:
        yield started, seed(started)


def _real_target(real: Real) -> d.Target:
    return d.Target(
        "real",
        real.url,
        {"admin": real.tokens[ADMIN], "user": real.tokens[USER], "outsider": real.tokens[OUTSIDER]},
        {"admin": ADMIN, "user": USER, "outsider": OUTSIDER},
    )


def test_the_sandbox_answers_as_the_real_server_does() -> None:
    # A server of its own: the probes' writes (approve, patch, move ...) change what the other tests read.
    with running(_binaries()) as started, running_sandbox() as sb:
        seed(started)
        targets = (
            _real_target(started),
            d.Target(
                "sandbox",
                sb.url,
                {
                    k: sb.tokens[v]
                    for k, v in (("admin", ADMIN_LOGIN), ("user", USER_LOGIN), ("outsider", OUTSIDER_LOGIN))
                },
                {"admin": ADMIN_LOGIN, "user": USER_LOGIN, "outsider": OUTSIDER_LOGIN},
            ),
        )
        for target in targets:
            target.subjects = d.find_subjects(target)
        rows = d.run(targets, d.READS + d.WRITES)
    # The sandbox copies 3.17.0; an older version's known differences are in tests/real/versions.py.
    differing = [
        f"{r['probe']} ({r['request']}): {unknown}"
        for r in rows
        if (unknown := [s for s in r["significant"] if not versions.allowed(started.version, r["probe"], s)])
    ]
    assert differing == [], "\n".join(differing)
    assert started.forge.unknown == []


def _pipeline(http: httpx.Client, repo_id: int, number: int) -> dict[str, Any]:
    response = http.get(f"/api/repos/{repo_id}/pipelines/{number}")
    assert response.status_code == 200
    return dict(response.json())


def test_what_the_guard_reads_of_reviews(real: tuple[Real, Seeded]) -> None:
    started, seeded = real
    app = seeded.repos["app"]["id"]
    with started.client(ADMIN) as http:
        blocked = _pipeline(http, app, seeded.pipelines["blocked"])
        declined = _pipeline(http, app, seeded.pipelines["declined"])
        approved = _pipeline(http, app, seeded.pipelines["approved"])
        rerun = _pipeline(http, app, seeded.pipelines["restarted_declined"])
        decline_again = http.post(f"/api/repos/{app}/pipelines/{seeded.pipelines['declined']}/decline")
        approve_done = http.post(f"/api/repos/{app}/pipelines/{seeded.pipelines['success']}/approve")
        restart_blocked = http.post(f"/api/repos/{app}/pipelines/{seeded.pipelines['blocked']}")
    assert (blocked["status"], blocked["reviewed_by"]) == ("blocked", "")
    # A decline is recorded like an approval (reviewed_by, reviewed), and a re-run copies it.
    assert (declined["status"], declined["reviewed_by"]) == ("declined", ADMIN) and declined["reviewed"] > 0
    assert (approved["status"], approved["reviewed_by"]) == ("success", ADMIN)
    assert (rerun["parent"], rerun["reviewed_by"]) == (seeded.pipelines["declined"], ADMIN)
    assert rerun["status"] != "blocked"  # a re-run is never held, whatever require_approval says
    assert (decline_again.status_code, decline_again.content) == (500, b"")
    assert (approve_done.status_code, approve_done.text) == (
        400,
        "cannot approve a pipeline with status success",
    )
    assert (restart_blocked.status_code, restart_blocked.text) == (
        400,
        "cannot restart a pipeline with status blocked",
    )


async def test_the_guard_asks_for_a_rerun_of_a_declined_pipeline(real: tuple[Real, Seeded]) -> None:
    started, seeded = real
    app = seeded.repos["app"]["id"]
    gateway = HttpxWoodpeckerGateway(started.url, trust_env=False, retries=0, timeout=30.0)
    runner = ToolRunner(
        WOODPECKER_TOOLS, gateway, token_configured=True, web_root=started.url, clock=FakeClock()
    )
    restart = WOODPECKER_TOOLS.get("restart_pipeline")
    try:
        args = {"repo_id": app, "number": seeded.pipelines["restarted_declined"]}
        current = await runner.read_current("restart_pipeline", args, Credential(started.tokens[ADMIN]))
    finally:
        await gateway.aclose()
    assert current is not None and current["origin_1"]["status"] == "declined"
    assert "restarts_declined" in decide(restart, args, current, WOODPECKER_RULES).reasons


def test_repair_makes_the_caller_the_owner_of_a_repository_whose_owner_is_gone(
    real: tuple[Real, Seeded],
) -> None:
    started, seeded = real
    repo = seeded.repos["secret-sauce"]["id"]
    with started.client(ADMIN) as admin:
        # mallory becomes an instance admin (PATCH finds the row by forge_remote_id) and takes the repository.
        me = admin.get(f"/api/users/{OUTSIDER}").json()
        body = {
            "forge_remote_id": me.get("forge_remote_id", ""),  # none on 3.11: it finds the row by login
            "login": OUTSIDER,
            "email": me["email"],
            "admin": True,
        }
        assert admin.patch(f"/api/users/{OUTSIDER}", json=body).status_code == 200
        with started.client(OUTSIDER) as mallory:
            assert mallory.post(f"/api/repos/{repo}/chown").status_code == 200
        assert admin.delete(f"/api/users/{OUTSIDER}").status_code == 204
        assert admin.get(f"/api/repos/{repo}/branches").status_code == 404  # no owner
        trigger = admin.post(f"/api/repos/{repo}/pipelines", json={"branch": "main"})
        assert (trigger.status_code, trigger.content) == (500, b"")
        assert admin.post(f"/api/repos/{repo}/repair").status_code == 204
        assert admin.get(f"/api/repos/{repo}/branches").json() == ["main"]
        root_id = admin.get("/api/user").json()["id"]
    with sqlite3.connect(started.db()) as db:
        (owner,) = db.execute("SELECT user_id FROM repos WHERE id = ?", (repo,)).fetchone()
    assert owner == root_id


def test_a_branch_head_lookup_hands_refs_pull_to_the_forge_as_a_branch_name(
    real: tuple[Real, Seeded],
) -> None:
    started, seeded = real
    app = seeded.repos["app"]["id"]
    forge_repo = next(r for r in started.forge.repos.values() if r.name == "app")
    with started.client(ADMIN) as admin:
        started.forge.requests.clear()
        refused = admin.post(f"/api/repos/{app}/pipelines", json={"branch": "refs/pull/1/head"})
        asked = [q for q in started.forge.requests if "/branches/" in q]
        # A forge that answered such a name as a branch (Gitea does not: its branch API reads refs/heads/*).
        with started.forge.lock:
            forge_repo.branches["refs/pull/1/head"] = forge_repo.branches["main"]
        accepted = admin.post(f"/api/repos/{app}/pipelines", json={"branch": "refs/pull/1/head"})
    assert (refused.status_code, refused.content) == (500, b"")
    # 3.11 escapes the slashes (tests/real/versions.py); the forge's answer is the same 404.
    escaped = "refs%2Fpull%2F1%2Fhead" if started.version == "3.11.0" else "refs/pull/1/head"
    assert asked == [f"GET /api/v1/repos/{forge_repo.full_name}/branches/{escaped}"]
    pipeline = accepted.json()
    assert (pipeline["event"], pipeline["branch"], pipeline["ref"]) == (
        "manual",
        "refs/pull/1/head",
        "refs/pull/1/head",
    )
    wait_pipeline(started, app, int(pipeline["number"]))


def test_a_cancel_of_a_running_pipeline_ends_as_each_version_records_it(real: tuple[Real, Seeded]) -> None:
    started, seeded = real
    app = seeded.repos["app"]["id"]
    agent = started.procs[-1]
    with started.client(ADMIN) as admin:
        number = int(admin.post(f"/api/repos/{app}/pipelines", json={"branch": "slow"}).json()["number"])
        _wait_step(admin, app, number)
        assert admin.post(f"/api/repos/{app}/pipelines/{number}/cancel").status_code == 204
        if not started.cancel_kills_agent:
            # The agent reports the workflow cancelled (WorkflowState.Canceled): killed, and it lives on.
            done = wait_pipeline(started, app, number)
            wait_for(lambda: _pipeline(admin, app, number)["workflows"][0]["state"] == "killed", 30, "killed")
            assert (done["status"], agent.poll()) == ("killed", None)
            return
        # Before 3.14 the local agent crashes on the cancel (upstream #6008). The server marked the pipeline
        # killed at once; if the agent's report of the workflow arrives before the crash, 3.11 (which has no
        # cancelled workflow state) records the workflow as failure, and the pipeline with it. Which comes
        # first is a race: the seed's killed pipeline is a held one cancelled (scenario.seed).
        started.revive_agent_after_cancel()
        crashed = agent.poll() is not None

        def settled() -> bool:
            state = _pipeline(admin, app, number)["workflows"][0]["state"]
            return state == "failure" or (crashed and state != "pending")

        wait_for(settled, 30, f"pipeline {number}'s workflow to settle after the cancel")
        done = _pipeline(admin, app, number)
    workflow = done["workflows"][0]["state"]
    assert done["status"] == ("failure" if workflow == "failure" else "killed"), (done["status"], workflow)
    assert crashed or workflow == "failure"


def test_a_push_to_a_repository_that_holds_every_event_is_blocked(real: tuple[Real, Seeded]) -> None:
    started, seeded = real
    app = seeded.repos["app"]["id"]
    forge_repo = next(r for r in started.forge.repos.values() if r.name == "app")
    assert push(started, forge_repo, "main", ADMIN).status_code in (200, 204)
    with started.client(ADMIN) as admin:
        newest = admin.get(f"/api/repos/{app}/pipelines", params={"perPage": 1}).json()[0]
    assert newest["event"] == "push"
    assert wait_pipeline(started, app, int(newest["number"]), {"blocked"})["reviewed_by"] == ""


async def test_a_call_on_an_organization_the_real_server_does_not_hold_is_refused_unsent(
    real: tuple[Real, Seeded],
) -> None:
    # docs/adr/0060: the real server answers a missing organization as the empty one, whose secret of a
    # name is the global one of that name; the tool reads the organization first and sends nothing else.
    started, _ = real
    with started.client(ADMIN) as admin:
        assert admin.get("/api/orgs/999999").json()["name"] == ""
        assert admin.get("/api/orgs/999999/secrets/global_token").status_code == 200
    gateway = HttpxWoodpeckerGateway(started.url, trust_env=False, retries=0, timeout=30.0)
    runner = ToolRunner(
        WOODPECKER_TOOLS, gateway, token_configured=True, web_root=started.url, clock=FakeClock()
    )
    args = {"scope": "organization", "org_id": 999999, "name": "global_token"}
    try:
        result = await runner.run("delete_secret", args, Credential(started.tokens[ADMIN]))
    finally:
        await gateway.aclose()
    assert result.is_error and result.structured["error"]["kind"] == "not_found"
    with started.client(ADMIN) as admin:
        assert admin.get("/api/secrets/global_token").status_code == 200


def _read_arguments(real: Real, seeded: Seeded) -> dict[str, dict[str, Any]]:
    """Arguments for every read tool, naming objects the seeded server holds."""
    app, failed = seeded.repos["app"]["id"], seeded.pipelines["failure"]
    with real.client(ADMIN) as http:
        pipeline = http.get(f"/api/repos/{app}/pipelines/{failed}").json()
        step_id = [s for w in pipeline["workflows"] for s in w["children"]][-1]["id"]
        cron_id = http.get(f"/api/repos/{app}/cron").json()[0]["id"]
        agent_id = http.get("/api/agents").json()[0]["id"]
        secret = http.get(f"/api/repos/{app}/secrets").json()[0]["name"]
        registry = http.get(f"/api/repos/{app}/registries").json()[0]["address"]
    repo = {"repo_id": app}
    at_repo = {"scope": "repository", "repo_id": app}
    run = {**repo, "number": failed}
    return {
        "list_repositories": {},
        "get_repository": repo,
        "lookup_repository": {"full_name": seeded.repos["app"]["full_name"]},
        "get_repository_permissions": repo,
        "list_repository_branches": repo,
        "list_pull_requests": repo,
        "list_pipelines": repo,
        "get_pipeline": run,
        "get_pipeline_config": run,
        "get_pipeline_metadata": run,
        "list_queued_pipelines": {},
        "get_pipeline_failure_summary": run,
        "resolve": {"reference": f"{real.url}/repos/{app}/pipeline/{failed}/{step_id}"},
        "wait_for_pipeline": {**run, "timeout_seconds": 5},
        "analyze_pipeline_history": repo,
        "validate_pipeline_config": {"config": PIPELINE_OK},  # the seeded repositories' own config
        "get_step_logs": {**run, "step_id": step_id},
        "search_step_logs": {**run, "step_id": step_id, "pattern": "FAIL|fail"},
        "list_secrets": at_repo,
        "get_secret": {**at_repo, "name": secret},
        "list_registries": at_repo,
        "get_registry": {**at_repo, "address": registry},
        "list_crons": repo,
        "get_cron": {**repo, "cron_id": cron_id},
        "list_organizations": {},
        "get_organization": {"org_id": seeded.org_id},
        "lookup_organization": {"name": ORG},
        "get_organization_permissions": {"org_id": seeded.org_id},
        "get_current_user": {},
        "get_pipeline_feed": {},
        "list_users": {},
        "get_user": {"login": ADMIN, "forge_id": 1},
        "list_agents": {},
        "get_agent": {"agent_id": agent_id},
        "list_agent_tasks": {"agent_id": agent_id},
        "list_forges": {},
        "get_forge": {"forge_id": 1},
        "get_server_info": {},
        "get_queue_info": {},
        "get_log_level": {},
        "get_signature_public_key": {},
    }


async def test_every_read_tool_answers_from_a_real_woodpecker(real: tuple[Real, Seeded]) -> None:
    started, seeded = real
    calls = _read_arguments(started, seeded)
    assert set(calls) == {t.name for t in WOODPECKER_TOOLS if t.kind == "read"}
    gateway = HttpxWoodpeckerGateway(started.url, trust_env=False, retries=0, timeout=30.0)
    runner = ToolRunner(
        WOODPECKER_TOOLS,
        gateway,
        token_configured=True,
        web_root=started.url,
        clock=FakeClock(),
        workflow_syntax=RuamelWorkflowSyntax(),
    )
    failed: dict[str, Any] = {}
    try:
        for tool, args in calls.items():
            result = await runner.run(tool, args, Credential(started.tokens[ADMIN]))
            if result.is_error:
                failed[tool] = result.structured.get("error")
    finally:
        await gateway.aclose()
    assert failed == {}


def _flaky_config(marker: str) -> str:
    """A step that fails on its first run of a commit and passes on the next: the local backend runs it on
    this machine, where the marker file the first run leaves outlives the run."""
    return (
        "skip_clone: true\nsteps:\n  - name: test\n    image: sh\n    commands:\n"
        f'      - \'if [ -e "{marker}-$CI_COMMIT_SHA" ]; then echo passed; else touch "{marker}-$CI_COMMIT_SHA"; '
        'echo "FAIL: flaky"; exit 1; fi\'\n'
    )


async def test_a_restarted_flaky_step_and_a_red_branch_are_found_on_a_real_woodpecker(
    real: tuple[Real, Seeded], tmp_path: Any
) -> None:
    from mcp import Client

    from tests.fixtures.mcp import harness_for

    started, seeded = real
    app = seeded.repos["app"]["id"]
    forge_app = next(r for r in started.forge.repos.values() if r.name == "app")
    started.forge.commit(
        forge_app, "wobbly-branch", {".woodpecker/build.yaml": _flaky_config(str(tmp_path / "ran"))}
    )
    with started.client(ADMIN) as admin:
        failed = int(
            admin.post(f"/api/repos/{app}/pipelines", json={"branch": "wobbly-branch"}).json()["number"]
        )
        assert wait_pipeline(started, app, failed)["status"] == "failure"
        passed = int(admin.post(f"/api/repos/{app}/pipelines/{failed}").json()["number"])
        assert wait_pipeline(started, app, passed)["status"] == "success"
    async with harness_for(started.url, started.tokens[ADMIN]) as harness:
        async with Client(harness.server, mode="legacy") as client:
            result = await client.call_tool("analyze_pipeline_history", {"repo_id": app, "limit": 100})
    assert not result.is_error, result.content
    found = result.structured_content or {}
    assert [(f["failed_pipeline"], f["passed_pipeline"], f["via"]) for f in found["flaky"]] == [
        (failed, passed, "restart")
    ]
    red = {r["branch"]: r for r in found["red_since"]}
    # The seeded failure on `broken` is that branch's only pipeline; `wobbly-branch` is green again.
    assert red["broken"]["since"] == seeded.pipelines["failure"] and "wobbly-branch" not in red
    assert found["read"]["stopped_early"] is False
    headline = result.content[0].text.splitlines()[1]
    assert "wobbly" not in headline and "broken" not in headline and f"#{failed} then #{passed}" in headline


# A step whose log has BIG_LINES lines and a coloured compiler error deep in it (bold red "error",
# as cargo and rustc write theirs), then fails: the debugging tools on a log of that size, as a
# real Woodpecker stores and serves it (issue 35). The local backend runs awk on this machine.
BIG_LINES = 200_000
BIG_ERROR_AT = 150_000  # the loop's i of the error line
BIG_ERROR = "error: widget mismatch (src/widget.rs:42)"  # as the line is shown, escapes gone
PIPELINE_BIG = f"""skip_clone: true
steps:
  - name: compile
    image: sh
    commands:
      - |
        awk 'BEGIN {{ for (i = 1; i <= {BIG_LINES}; i++) {{ if (i == {BIG_ERROR_AT}) printf "%s\\n", "\\033[1;31merror\\033[0m\\033[1m: widget mismatch\\033[0m (src/widget.rs:42)"; else print "   Compiling crate_" i " v0.1.0" }} }}'
      - exit 1
"""


def _whole_log(http: httpx.Client, repo_id: int, number: int, step_id: int) -> list[dict[str, Any]]:
    """The step's log once Woodpecker holds all of it: every line from 0 to the local backend's trace
    of the last command (`+ exit 1`). A step is reported finished before its last lines are stored:
    a read right after the finish had 187,415 of 200,004 entries."""
    import base64

    seen: list[list[dict[str, Any]]] = []

    def complete() -> bool:
        entries = http.get(f"/api/repos/{repo_id}/logs/{number}/{step_id}").json()
        seen.append(entries)
        numbers = {e["line"] for e in entries}
        last = [e for e in entries if base64.b64decode(e["data"] or "") == b"+ exit 1"]
        return bool(last) and len(numbers) == len(entries) == max(numbers) + 1

    wait_for(complete, 120, f"the log of step {step_id} to hold all its lines")
    return seen[-1]


async def test_the_debugging_tools_read_a_200000_line_real_log_with_a_coloured_error(
    real: tuple[Real, Seeded],
) -> None:
    import base64

    from mcp import Client

    from tests.fixtures.mcp import harness_for

    started, seeded = real
    lib = seeded.repos["lib"]["id"]
    forge_lib = next(r for r in started.forge.repos.values() if r.name == "lib")
    started.forge.commit(forge_lib, "big", {".woodpecker/build.yaml": PIPELINE_BIG})
    with started.client(ADMIN) as admin:
        number = int(admin.post(f"/api/repos/{lib}/pipelines", json={"branch": "big"}).json()["number"])
        finished = wait_pipeline(started, lib, number)
        assert finished["status"] == "failure"
        (step,) = [s for w in finished["workflows"] for s in w["children"]]
        raw = _whole_log(admin, lib, number, step["id"])
    # What Woodpecker holds, read here without our reader: the error's line number and the total.
    texts = {e["line"]: base64.b64decode(e["data"] or "") for e in raw}
    (error_line,) = [n for n, t in texts.items() if t.startswith(b"\x1b[1;31merror\x1b[0m")]
    assert texts[error_line - 1].endswith(f"crate_{BIG_ERROR_AT - 1} v0.1.0".encode())
    total = len(raw)
    where = {"repo_id": lib, "number": number}

    async with harness_for(started.url, started.tokens[ADMIN]) as harness:
        async with Client(harness.server, mode="legacy") as client:
            summary = await client.call_tool("get_pipeline_failure_summary", where)
            literal = await client.call_tool(
                "search_step_logs", {**where, "step_id": step["id"], "pattern": "error: widget mismatch"}
            )
            anchored = await client.call_tool(
                "search_step_logs", {**where, "step_id": step["id"], "pattern": r"^error: \w+", "context": 1}
            )
            tail = await client.call_tool("get_step_logs", {**where, "step_id": step["id"], "limit": 5})

    assert not summary.is_error, summary.content
    (failed,) = (summary.structured_content or {})["failed_steps"]
    assert failed["step_id"] == step["id"] and failed["exit_code"] == 1 and failed["total_lines"] == total
    # The coloured line is found, shown as the person reads it (the step's own echo of the awk
    # command, whose printf dash's echo also turned into colours, may be found beside it).
    assert {"line": error_line, "text": BIG_ERROR} in [
        {"line": e["line"], "text": e["text"]} for e in failed["error_lines"]
    ], failed["error_lines"]

    for found in (literal, anchored):
        assert not found.is_error, found.content
        data = found.structured_content or {}
        assert data["total_lines"] == total
        assert error_line in [m["line"] for m in data["matches"]] and BIG_ERROR in [
            m["text"] for m in data["matches"]
        ]
    (only,) = (anchored.structured_content or {})["matches"]  # ^ anchors at the shown text's start
    assert only["before"] == [{"line": error_line - 1, "text": texts[error_line - 1].decode()}]

    assert not tail.is_error, tail.content
    lines = (tail.structured_content or {})["lines"]
    assert [line["line"] for line in lines] == sorted(texts)[-5:] and (tail.structured_content or {})[
        "total_lines"
    ] == total
