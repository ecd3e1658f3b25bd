"""Seed data: deterministic apart from tokens, every pipeline status present, hostile pushed text where it belongs."""

import base64
import time

from sandbox.models import STATUSES
from sandbox.seed import HOSTILE_STRINGS, build_world
from sandbox.server import Sandbox, new_tokens
from tests.sandbox._client import admin, json_of


def _fingerprint(tokens: dict[str, str]) -> str:
    world = build_world("3.17", tokens, lambda: 1_760_000_000.0)
    return repr(
        (
            sorted((p.id, p.repo_id, p.number, p.status, p.message) for p in world.pipelines.values()),
            sorted(vars(r).items() for r in world.repos.values()),
            sorted((s.id, s.name, s.value) for s in world.secrets.values()),
        )
    )


def test_the_seed_is_deterministic_except_for_tokens() -> None:
    assert _fingerprint(new_tokens()) == _fingerprint(new_tokens())


def test_agent_and_forge_secrets_are_random_per_seed() -> None:
    first = build_world("3.17", new_tokens(), time.time)
    second = build_world("3.17", new_tokens(), time.time)
    assert first.agents[1].token != second.agents[1].token
    assert first.forges[1].oauth_client_secret != second.forges[1].oauth_client_secret


def test_pipelines_exist_in_every_interesting_status(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        statuses = {p["status"] for p in json_of(http.get("/api/repos/1/pipelines"))}
    assert statuses >= set(STATUSES) - {"created"}


def test_there_is_a_blocked_pull_request_from_a_fork(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        blocked = json_of(http.get("/api/repos/1/pipelines", params={"status": "blocked"}))
    assert [(p["number"], p["event"], p.get("from_fork")) for p in blocked] == [(11, "pull_request", True)]


def test_hostile_strings_reach_the_api_through_pushed_content(sandbox: Sandbox) -> None:
    seen: list[str] = []
    with admin(sandbox) as http:
        for p in json_of(http.get("/api/repos/1/pipelines")):
            seen += [p["message"], p["title"], p["branch"], p["refspec"]]
        seen += json_of(http.get("/api/repos/1/branches"))
        seen += [pr["title"] for pr in json_of(http.get("/api/repos/1/pull_requests"))]
        seen += [c["name"] for c in json_of(http.get("/api/repos/1/cron"))]
        seen += [t["labels"].get("note", "") for t in json_of(http.get("/api/queue/info"))["running"]]
        for entry in json_of(http.get("/api/repos/1/logs/2/10204")):
            seen.append(base64.b64decode(entry["data"]).decode("utf-8"))
    text = "\n".join(seen)
    missing = [h for h in HOSTILE_STRINGS if h not in text]
    assert missing == []


def test_secret_names_stay_plain(sandbox: Sandbox) -> None:
    names = [s.name for s in sandbox.world.secrets.values()]
    assert all(name.replace("_", "").isalnum() for name in names)
