"""Points 3 and 4 of API-NOTES §7: page/perPage, ordering, null lists; exact field names and omitempty rules."""

import httpx
import pytest

from sandbox.server import Sandbox
from tests.sandbox._client import admin, json_of, user


def _numbers(response: httpx.Response) -> list[int]:
    return [p["number"] for p in json_of(response)]


def test_pipelines_are_listed_newest_number_first_in_pages(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert _numbers(http.get("/api/repos/1/pipelines")) == list(range(13, 0, -1))
        assert _numbers(http.get("/api/repos/1/pipelines", params={"page": 2, "perPage": 5})) == [
            8,
            7,
            6,
            5,
            4,
        ]
        assert _numbers(http.get("/api/repos/1/pipelines", params={"page": 3, "perPage": 5})) == [3, 2, 1]
        assert json_of(http.get("/api/repos/1/pipelines", params={"page": 4, "perPage": 5})) == []


@pytest.mark.parametrize(
    ("page", "per_page"),
    [("0", "5"), ("-3", "5"), ("abc", "5"), ("1.5", "5"), ("", "5")],
)
def test_a_page_below_one_or_unparsable_means_page_one(sandbox: Sandbox, page: str, per_page: str) -> None:
    with admin(sandbox) as http:
        assert _numbers(http.get("/api/repos/1/pipelines", params={"page": page, "perPage": per_page})) == [
            13,
            12,
            11,
            10,
            9,
        ]


def test_per_page_above_fifty_or_garbage_means_fifty(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        for i in range(55):
            created = http.post(
                "/api/secrets", json={"name": f"bulk_{i:02d}", "value": "v", "events": ["push"]}
            )
            assert created.status_code == 200
        for per_page in ("51", "1000", "0", "-1", "x", None):
            params = {"perPage": per_page} if per_page is not None else {}
            assert len(json_of(http.get("/api/secrets", params=params))) == 50, per_page
        second = json_of(http.get("/api/secrets", params={"page": 2, "perPage": 100}))
    assert len(second) == 57 - 50


def test_secrets_are_ordered_by_name_and_registries_by_id(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        http.post("/api/secrets", json={"name": "aaa_first", "value": "v", "events": ["push"]})
        http.post("/api/registries", json={"address": "aaa.example.org", "username": "u", "password": "p"})
        secrets = [s["name"] for s in json_of(http.get("/api/secrets"))]
        registries = [r["address"] for r in json_of(http.get("/api/registries"))]
    assert secrets == sorted(secrets)
    assert registries == ["quay.io", "aaa.example.org"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/repos/2/cron",
        "/api/repos/2/secrets",
        "/api/repos/2/registries",
        "/api/agents/1/tasks",
    ],
)
def test_empty_lists_that_woodpecker_answers_as_null(sandbox: Sandbox, path: str) -> None:
    with admin(sandbox) as http:
        response = http.get(path)
    assert response.status_code == 200
    assert response.content == b"null"


@pytest.mark.parametrize(
    "path",
    [
        "/api/repos/6/pipelines?branch=nope",
        "/api/orgs/6/secrets",
        "/api/orgs/6/registries",
        "/api/repos?page=99",
    ],
)
def test_empty_lists_that_woodpecker_answers_as_an_empty_array(sandbox: Sandbox, path: str) -> None:
    with admin(sandbox) as http:
        response = http.get(path)
    assert response.content == b"[]"


def test_null_lists_when_the_instance_has_no_rows(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.agents.clear()
        sandbox.world.tasks.clear()
        for org_id in [o.id for o in sandbox.world.orgs.values() if not o.is_user]:
            del sandbox.world.orgs[org_id]
    with admin(sandbox) as http:
        assert http.get("/api/agents").content == b"null"
        assert http.get("/api/orgs").content == b"null"


def test_the_feed_is_null_when_empty_but_latest_is_an_array(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        sandbox.world.perms.clear()
    with user(sandbox) as http:
        assert http.get("/api/user/feed").content == b"null"
        assert http.get("/api/user/feed", params={"latest": "true"}).content == b"[]"


def test_the_feed_lists_pipelines_of_repositories_the_user_can_push_to(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        feed = json_of(http.get("/api/user/feed"))
        latest = json_of(http.get("/api/user/feed", params={"latest": "true"}))
    assert {e["full_name"] for e in feed} == {"acme/web", "bob/dotfiles"}
    assert len(feed) <= 50
    assert [e["full_name"] for e in latest] == ["acme/web", "bob/dotfiles"]
    assert latest[0]["number"] == 13


def test_pipelines_never_name_their_repository(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        listed = json_of(http.get("/api/repos/1/pipelines"))
        single = json_of(http.get("/api/repos/1/pipelines/2"))
    assert all("repo_id" not in p and "workflows" not in p for p in listed)
    assert "repo_id" not in single
    step_names = [s["name"] for w in single["workflows"] for s in w["children"]]
    assert step_names == ["clone", "build", "test"]
    test_step = single["workflows"][0]["children"][2]
    assert (test_step["id"], test_step["exit_code"], test_step["ppid"]) == (10204, 1, 1)


def test_pipeline_fields_follow_omitempty(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        plain = json_of(http.get("/api/repos/1/pipelines/1"))
        fork = json_of(http.get("/api/repos/1/pipelines/11"))
        broken = json_of(http.get("/api/repos/1/pipelines/4"))
    # Always present, even when empty or null.
    for key in ("event_reason", "errors", "deploy_to", "reviewed_by", "title", "version"):
        assert key in plain
    assert plain["errors"] is None and plain["event_reason"] is None
    # omitempty: absent when zero.
    for key in (
        "workflows",
        "cancel_info",
        "changed_files",
        "variables",
        "pr_labels",
        "from_fork",
        "cron",
        "release",
    ):
        assert key not in plain, key
    assert fork["from_fork"] is True and fork["event"] == "pull_request" and fork["status"] == "blocked"
    assert broken["errors"][0]["type"] == "linter"


def test_a_non_admin_user_has_no_admin_key(sandbox: Sandbox) -> None:
    with user(sandbox) as u, admin(sandbox) as a:
        me = json_of(u.get("/api/user"))
        boss = json_of(a.get("/api/user"))
    assert "admin" not in me
    assert boss["admin"] is True
    assert set(me) == {"id", "forge_id", "forge_remote_id", "login", "email", "avatar_url", "org_id"}


def test_secret_values_are_never_returned(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        created = json_of(
            http.post("/api/repos/1/secrets", json={"name": "n", "value": "hunter2", "events": ["push"]})
        )
        bodies = [
            created,
            *json_of(http.get("/api/repos/1/secrets")),
            *json_of(http.get("/api/orgs/4/secrets")),
            *json_of(http.get("/api/secrets")),
            json_of(http.get("/api/repos/1/secrets/docker_password")),
        ]
    assert all("value" not in b for b in bodies)
    assert "hunter2" not in str(bodies)


def test_registry_passwords_are_answered_empty(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        registries = [
            *json_of(http.get("/api/repos/1/registries")),
            *json_of(http.get("/api/orgs/4/registries")),
            *json_of(http.get("/api/registries")),
        ]
    assert registries and all(r["password"] == "" for r in registries)


def test_agent_tokens_are_returned_in_clear_text(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        agents = json_of(http.get("/api/agents"))
        created = json_of(http.post("/api/agents", json={"name": "fresh"}))
    assert all(len(a["token"]) == 64 for a in agents)
    assert len(created["token"]) == 64
    assert (created["org_id"], created["owner_id"]) == (-1, 1)


def test_organizations_are_single_objects(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        org = json_of(http.get("/api/orgs/4"))
        orgs = json_of(http.get("/api/orgs"))
    assert org == {"id": 4, "forge_id": 1, "name": "acme", "is_user": False}
    assert [o["name"] for o in orgs] == ["acme", "umbrella", "bench"]


def test_queue_info_reports_pending_and_running_tasks(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        info = json_of(http.get("/api/queue/info"))
    assert info["stats"] == {
        "worker_count": 4,
        "pending_count": 1,
        "waiting_on_deps_count": 0,
        "running_count": 1,
    }
    assert info["running"][0]["agent_name"] == "runner-arm64-1"
    assert info["pending"][0]["pipeline_number"] == 12
    assert info["paused"] is False
