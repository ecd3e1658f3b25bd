"""Seed a real Woodpecker by really running pipelines: what the differential test compares with the sandbox.

Every object is made through Woodpecker's API, the forge fake's hooks, or the agent (no database writes):
activated repositories, a success, a failure, two workflows, a killed, a blocked, a declined, an approved
and a restarted pipeline, a fork's held pull request, a cron and its run, secrets and registries at
repository, organisation and global level.
"""

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.real.forge_fake import ForgeRepo, wait_for
from tests.real.harness import ADMIN, ORG, OUTSIDER, PIPELINE_OK, Real

FINISHED = {"success", "failure", "killed", "error", "canceled", "declined", "skipped"}
FORK_FILES = {".woodpecker/build.yaml": PIPELINE_OK}


@dataclass
class Seeded:
    repos: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Woodpecker repo
    pipelines: dict[str, int] = field(default_factory=dict)  # role -> number in the app repository
    org_id: int = 0


def _ok(response: httpx.Response, *codes: int) -> httpx.Response:
    assert response.status_code in (codes or (200,)), (
        response.request.method,
        str(response.request.url),
        response.status_code,
        response.text[:300],
    )
    return response


def post_hook(repo: ForgeRepo, event: str, payload: dict[str, Any]) -> httpx.Response:
    """A Gitea webhook of `event` to the hook Woodpecker registered on the repo."""
    hooks = [h for h in repo.hooks if h.get("config", {}).get("url")]
    assert hooks, f"no hook on {repo.full_name}"
    return httpx.post(
        hooks[-1]["config"]["url"],
        content=json.dumps(payload),
        headers={"Content-Type": "application/json", "X-Gitea-Event": event},
        timeout=30.0,
    )


def push(real: Real, repo: ForgeRepo, branch: str, sender: str) -> httpx.Response:
    """A Gitea push webhook for `branch`'s head."""
    return post_hook(repo, "push", real.forge.push_payload(repo, branch, sender))


def pull_request(
    real: Real, base: ForgeRepo, into: str, head: ForgeRepo, branch: str, files: dict[str, str], sender: str
) -> httpx.Response:
    """`sender` opens a pull request of `head`'s `branch` (a fork, or `base` itself) into `base`'s `into`."""
    payload = real.forge.open_pull_request(base, into, head, branch, files, sender)
    return post_hook(base, "pull_request", payload)


def _wait_status(
    http: httpx.Client, repo_id: int, number: int, wanted: set[str], timeout: float = 90
) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def reached() -> bool:
        seen.update(_ok(http.get(f"/api/repos/{repo_id}/pipelines/{number}")).json())
        return seen.get("status") in wanted

    wait_for(reached, timeout, f"pipeline {number} to reach {sorted(wanted)} (is {seen.get('status')})")
    return seen


def _wait_step(http: httpx.Client, repo_id: int, number: int, timeout: float = 90) -> None:
    """Until the pipeline's first step runs: a cancel then stops a running step, not a pending one."""

    def running() -> bool:
        found = _ok(http.get(f"/api/repos/{repo_id}/pipelines/{number}")).json()
        steps = [s for w in found.get("workflows") or [] for s in w.get("children") or []]
        return bool(steps) and steps[0].get("state") == "running"

    wait_for(running, timeout, f"pipeline {number}'s first step to run")


def _newest(http: httpx.Client, repo_id: int) -> dict[str, Any]:
    return _ok(http.get(f"/api/repos/{repo_id}/pipelines", params={"perPage": 1})).json()[0]


def seed(real: Real) -> Seeded:
    out = Seeded()
    forge_repos = {r.name: r for r in real.forge.repos.values()}
    with real.client(ADMIN) as admin:
        for name in ("app", "lib", "secret-sauce"):
            fr = forge_repos[name]
            out.repos[name] = _ok(admin.post("/api/repos", params={"forge_remote_id": str(fr.id)})).json()
        app = out.repos["app"]["id"]
        out.org_id = out.repos["app"]["org_id"]
        _ok(
            admin.patch(
                f"/api/repos/{app}", json={"allow_deploy": True, "cancel_previous_pipeline_events": []}
            )
        )

        def trigger(branch: str) -> int:
            return int(
                _ok(admin.post(f"/api/repos/{app}/pipelines", json={"branch": branch})).json()["number"]
            )

        out.pipelines["success"] = trigger("main")
        _wait_status(admin, app, out.pipelines["success"], FINISHED)
        out.pipelines["failure"] = trigger("broken")
        out.pipelines["two_workflows"] = trigger("two")
        for role in ("failure", "two_workflows"):
            _wait_status(admin, app, out.pipelines[role], FINISHED)
        if not real.cancel_kills_agent:
            # A running step killed: the agent reports the workflow cancelled, and the pipeline stays killed.
            out.pipelines["killed"] = trigger("slow")
            _wait_step(admin, app, out.pipelines["killed"])
            _ok(admin.post(f"/api/repos/{app}/pipelines/{out.pipelines['killed']}/cancel"), 204)
            _wait_status(admin, app, out.pipelines["killed"], FINISHED)

        _ok(admin.patch(f"/api/repos/{app}", json={"require_approval": "all_events"}))
        # A pull request from mallory's fork (from_fork), held like every event here.
        fork = real.forge.fork(forge_repos["app"], OUTSIDER)
        _ok(pull_request(real, forge_repos["app"], "main", fork, "fork-change", FORK_FILES, OUTSIDER))
        out.pipelines["fork"] = int(_newest(admin, app)["number"])
        _wait_status(admin, app, out.pipelines["fork"], {"blocked"}, 30)
        held = ("blocked", "declined", "approved") + (("killed",) if real.cancel_kills_agent else ())
        for role in held:
            _ok(push(real, forge_repos["app"], "main", ADMIN), 200, 202, 204)
            number = int(_newest(admin, app)["number"])
            _wait_status(admin, app, number, {"blocked"}, 30)
            out.pipelines[role] = number
        if real.cancel_kills_agent:
            # Before 3.14 a cancel of a running pipeline crashes the local agent, and whether the pipeline
            # ends killed or failure is a race between the crash and the agent's report
            # (test_a_cancel_of_a_running_pipeline_ends_as_each_version_records_it). A held pipeline
            # cancelled is killed by the server alone, with no agent to race.
            _ok(admin.post(f"/api/repos/{app}/pipelines/{out.pipelines['killed']}/cancel"), 204)
            _wait_status(admin, app, out.pipelines["killed"], {"killed"})
        _ok(admin.post(f"/api/repos/{app}/pipelines/{out.pipelines['declined']}/decline"))
        _ok(admin.post(f"/api/repos/{app}/pipelines/{out.pipelines['approved']}/approve"))
        _wait_status(admin, app, out.pipelines["approved"], FINISHED)
        restarted = _ok(admin.post(f"/api/repos/{app}/pipelines/{out.pipelines['declined']}")).json()
        out.pipelines["restarted_declined"] = int(restarted["number"])
        _wait_status(admin, app, out.pipelines["restarted_declined"], FINISHED)

        cron = _ok(
            admin.post(
                f"/api/repos/{app}/cron", json={"name": "nightly", "schedule": "0 3 * * *", "branch": "main"}
            )
        ).json()
        ran = _ok(admin.post(f"/api/repos/{app}/cron/{cron['id']}"))
        out.pipelines["cron"] = int(ran.json()["number"])
        _wait_status(admin, app, out.pipelines["cron"], FINISHED)

        secret = {"name": "token", "value": "s3cr3t", "events": ["push", "manual"], "images": []}
        _ok(admin.post(f"/api/repos/{app}/secrets", json=secret))
        _ok(admin.post(f"/api/orgs/{out.org_id}/secrets", json={**secret, "name": "org_token"}))
        _ok(admin.post("/api/secrets", json={**secret, "name": "global_token"}))
        registry = {"address": "registry.example.org", "username": "u", "password": "p"}
        _ok(admin.post(f"/api/repos/{app}/registries", json=registry))
        _ok(admin.post(f"/api/orgs/{out.org_id}/registries", json={**registry, "address": "org.example.org"}))
        _ok(admin.post("/api/registries", json={**registry, "address": "global.example.org"}))
    assert ORG
    return out


def wait_pipeline(real: Real, repo_id: int, number: int, wanted: set[str] | None = None) -> dict[str, Any]:
    """The pipeline once it reaches one of `wanted` (default: finished), read as the admin."""
    with real.client(ADMIN) as http:
        return _wait_status(http, repo_id, number, wanted or FINISHED)
