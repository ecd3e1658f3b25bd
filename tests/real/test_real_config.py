"""validate_pipeline_config held to a real Woodpecker, as Woodpecker itself judges a config: each case
of tests/real/config_cases.py is committed to a branch of the forge fake and started by a real manual
trigger. A case our tool finds a blocking error in must become an `error` pipeline; one it accepts
must run (and finish); and its warnings must be Woodpecker's `is_warning` entries, by workflow, kind
and field. The tool is called over a real MCP client (the SDK, in memory) on the same server.
Deselected by default (`-m real_woodpecker`; docs/adr/0083)."""

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from domain.woodpecker.workflow_lint import woodpecker_name, workflow_name
from tests.fixtures.mcp import harness_for
from tests.real.config_cases import CASES
from tests.real.harness import ADMIN, Real, running, version_key
from tests.real.scenario import FINISHED, wait_pipeline
from tests.real.test_real_woodpecker import _binaries

pytestmark = [pytest.mark.real_woodpecker, pytest.mark.slow, pytest.mark.anyio]

# What versions before 3.17 judge otherwise (their linter and types, read at their tags): 3.11 refuses
# `network_mode: none` without trust (3.12 exempted it) and cannot decode a dependency written as an
# object (`{name, optional}`), and words its schema findings, bad habits and deprecations differently,
# so there only the verdict is compared.
OLDER_VERDICTS = {"network_mode_none": True, "depends_on_an_optional_missing_step": True}


@pytest.fixture(scope="module")
def real() -> Iterator[tuple[Real, int]]:
    with running(_binaries()) as started:
        lib = started.forge.repo_by_name(ADMIN, "lib")
        assert lib is not None
        with started.client(ADMIN) as http:
            activated = http.post("/api/repos", params={"forge_remote_id": str(lib.id)})
            assert activated.status_code == 200, activated.text
            yield started, int(activated.json()["id"])


def _woodpecker_judges(real: Real, repo_id: int, name: str, files: dict[str, str]) -> dict[str, Any]:
    """The pipeline a manual trigger of the case's branch makes, once it has finished or failed to start."""
    lib = real.forge.repo_by_name(ADMIN, "lib")
    assert lib is not None
    branch = f"case-{name}"
    real.forge.commit(lib, branch, files)
    with real.client(ADMIN) as http:
        started = http.post(f"/api/repos/{repo_id}/pipelines", json={"branch": branch})
    assert started.status_code == 200, (name, started.status_code, started.text)
    pipeline = dict(started.json())
    if pipeline["status"] != "error":
        pipeline = wait_pipeline(real, repo_id, int(pipeline["number"]), FINISHED)
    return pipeline


def _ours(found: dict[str, Any]) -> tuple[bool, list[tuple[str, str, str]]]:
    kind = {"bad_habit": "bad_habit", "deprecation": "deprecation"}
    warnings = sorted(
        (workflow_name(f["file"]), kind.get(f["source"], "linter"), f["field"])
        for f in found["findings"]
        # The builder's are ours: Woodpecker drops such a workflow without an entry in `errors`.
        if f["severity"] == "warning" and f["source"] != "builder"
    )
    return found["errors"] > 0, warnings


def _theirs(pipeline: dict[str, Any]) -> tuple[bool, list[tuple[str, str, str]]]:
    warnings = sorted(
        (e["data"]["file"], e["type"], e["data"]["field"])
        for e in pipeline.get("errors") or []
        if e["is_warning"]
    )
    return pipeline["status"] == "error", warnings


async def test_validate_pipeline_config_agrees_with_a_real_woodpecker_on_every_case(
    real: tuple[Real, int],
) -> None:
    started, repo_id = real
    assert len(CASES) >= 20

    answers: dict[str, dict[str, Any]] = {}
    async with harness_for(started.url, started.tokens[ADMIN]) as harness:
        with anyio.fail_after(120):
            async with Client(harness.server, mode="legacy") as client:
                for name, files in CASES.items():
                    result = await client.call_tool("validate_pipeline_config", {"files": files})
                    assert not result.is_error, (name, result.content)
                    answers[name] = dict(result.structured_content or {})
    current = version_key(started.version) >= (3, 17, 0)
    table, disagreeing = [], []
    for name, files in CASES.items():
        pipeline = _woodpecker_judges(started, repo_id, name, files)
        (ours_blocks, ours_warn), (theirs_blocks, theirs_warn) = _ours(answers[name]), _theirs(pipeline)
        if not current:
            ours_blocks = OLDER_VERDICTS.get(name, ours_blocks)
        agrees = ours_blocks == theirs_blocks and (not current or ours_warn == theirs_warn)
        if not theirs_blocks:
            agrees = agrees and pipeline["status"] in {"success", "failure"}  # it ran, to its end
            # The workflows it ran are the files' but those we say it drops.
            dropped = {
                woodpecker_name(f["file"])
                for f in answers[name]["findings"]
                if f["rule"] == "missing_workflow_dependency"
            }
            ran = {w["name"] for w in pipeline.get("workflows") or []}
            agrees = agrees and ran == {woodpecker_name(f) for f in files} - dropped
        table.append((name, "error" if ours_blocks else "runs", pipeline["status"], len(theirs_warn), agrees))
        if not agrees:
            disagreeing.append((name, ours_blocks, ours_warn, pipeline["status"], pipeline.get("errors")))
    print(f"\nWoodpecker {started.version}: {sum(row[-1] for row in table)} of {len(table)} cases agree")
    for row in table:
        name, ours, status, warnings, agrees = row
        verdict = "ok" if agrees else "DIFFERS"
        print(f"  {name:42} ours {ours:5} woodpecker {status:8} warnings {warnings}  {verdict}")
    assert disagreeing == []
    assert {row[1] for row in table} == {"error", "runs"}  # the table holds both kinds
