"""`python -m bench.session_bytes` runs the worked session, and what it trimmed leaves every id a model
needs for its next call (docs/adr/0070): each repository's id, each pipeline's repository and number,
each failed step's id, all read from Woodpecker's own answers."""

import json
from typing import Any

import httpx
import pytest

from bench import session_bytes
from sandbox.server import Sandbox

pytestmark = pytest.mark.anyio

BEFORE_LISTS = 12_311  # bench/RESULTS.md: the three lists at c233a3a


def _data(text: str) -> Any:
    """The result's JSON data line (the first after the warning and the summary)."""
    return json.loads(next(line for line in text.splitlines()[2:] if line.startswith("{")))


def test_the_session_is_the_three_lists_then_the_guides_calls() -> None:
    tools = [tool for tool, _ in session_bytes.session()]
    assert tools == [
        "list_repositories",
        "get_pipeline_feed",
        "list_pipelines",
        "resolve",
        "get_pipeline_failure_summary",
        "get_step_logs",
        "search_step_logs",
    ]


async def test_every_id_for_the_next_call_is_in_the_text_and_the_lists_take_half_the_bytes(
    sandbox: Sandbox,
) -> None:
    ran = await session_bytes.run_session(sandbox.url, sandbox.admin_token)
    texts = {tool: result.text for tool, _, result in ran}
    with httpx.Client(
        base_url=sandbox.url, headers={"Authorization": f"Bearer {sandbox.admin_token}"}
    ) as api:
        repos = api.get("/api/user/repos").json()
        feed = api.get("/api/user/feed", params={"latest": "true"}).json()
        pipelines = api.get("/api/repos/6/pipelines").json()
        failed = api.get("/api/repos/6/pipelines/2").json()

    listed = _data(texts["list_repositories"])["repositories"]
    assert [(r["id"], r["full_name"]) for r in listed] == [(r["id"], r["full_name"]) for r in repos]
    assert [r["last_pipeline"]["number"] for r in listed] == [r["last_pipeline"]["number"] for r in repos]
    entries = _data(texts["get_pipeline_feed"])["feed"]
    assert [(e["repo_id"], e["number"], e["status"]) for e in entries] == [
        (e["repo_id"], e["number"], e["status"]) for e in feed
    ]
    numbers = [p["number"] for p in _data(texts["list_pipelines"])["pipelines"]]
    assert numbers == [p["number"] for p in pipelines] and 2 in numbers
    # The failed pipeline's failed steps, by the ids the log tools take.
    steps = [s for w in failed["workflows"] for s in w["children"] if s["state"] == "failure"]
    summary = _data(texts["get_pipeline_failure_summary"])
    assert sorted(s["step_id"] for s in summary["failed_steps"]) == sorted(s["id"] for s in steps)
    assert "get_pipeline_failure_summary(repo_id=6, number=2)" in texts["resolve"]

    lists = sum(len(result.text.encode("utf-8")) for _, _, result in ran[:3])
    assert lists <= BEFORE_LISTS // 2, lists
