"""Point 6 of API-NOTES §7: Woodpecker's status-code zoo, including which errors come with text and which are empty."""

from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.sandbox._client import admin, json_of

# (method, path, query, json body, expected status, expected body: bytes for exact, str for "starts with")
ZOO: list[tuple[str, str, dict[str, str], Any, int, bytes | str]] = [
    # 204 No Content, where the swagger often says 200.
    ("POST", "/api/repos/1/pipelines/13/cancel", {}, None, 204, b""),
    ("DELETE", "/api/agents/1", {}, None, 204, b""),
    ("DELETE", "/api/forges/1", {}, None, 204, b""),
    ("POST", "/api/queue/pause", {}, None, 204, b""),
    ("POST", "/api/queue/resume", {}, None, 204, b""),
    ("POST", "/api/repos/1/repair", {}, None, 204, b""),
    ("POST", "/api/repos/1/move", {"to": "acme/site"}, None, 204, b""),
    ("DELETE", "/api/repos/1/secrets/docker_password", {}, None, 204, b""),
    # Cancelling something finished is a 400 with text.
    ("POST", "/api/repos/1/pipelines/1/cancel", {}, None, 400, "Cannot cancel a non-running"),
    # Approve of a non-blocked pipeline is 400 text; decline of one is an empty 500.
    (
        "POST",
        "/api/repos/1/pipelines/1/approve",
        {},
        None,
        400,
        "cannot approve a pipeline with status success",
    ),
    ("POST", "/api/repos/1/pipelines/1/decline", {}, None, 500, b""),
    # Move without `to`, or with a malformed one: 500 with an empty body.
    ("POST", "/api/repos/1/move", {}, None, 500, b""),
    ("POST", "/api/repos/1/move", {"to": "no-slash"}, None, 500, b""),
    ("POST", "/api/repos/1/move", {"to": "/b"}, None, 500, b""),
    ("POST", "/api/repos/1/move", {"to": "a/"}, None, 500, b""),
    # Trigger on a branch the forge does not have: 500 empty; bad variables 400 empty.
    ("POST", "/api/repos/1/pipelines", {}, {"branch": "no-such-branch"}, 500, b""),
    ("POST", "/api/repos/1/pipelines", {}, {"branch": "main", "variables": {"A": {"nested": 1}}}, 400, b""),
    ("POST", "/api/repos/1/pipelines", {}, {"branch": "main", "variables": ["A"]}, 400, b""),
    # Restart: only event=deployment; blocked pipelines refuse.
    ("POST", "/api/repos/1/pipelines/2", {"event": "push"}, None, 400, b""),
    ("POST", "/api/repos/1/pipelines/11", {}, None, 400, "cannot restart a pipeline with status blocked"),
    ("POST", "/api/repos/2/pipelines/1", {"event": "deployment"}, None, 403, b""),  # acme/api forbids deploys
    ("POST", "/api/repos/5/pipelines/1", {}, None, 404, b""),  # deactivated: no owner
    # Deleting pipelines or logs that are busy: 422 with text.
    ("DELETE", "/api/repos/1/pipelines/13", {}, None, 422, "Cannot delete pipeline with status running"),
    ("DELETE", "/api/repos/1/pipelines/11", {}, None, 422, "Cannot delete pipeline with status blocked"),
    ("DELETE", "/api/repos/1/pipelines/12", {}, None, 422, "Cannot delete pipeline with status pending"),
    ("DELETE", "/api/repos/1/logs/13", {}, None, 422, "Cannot delete logs for pipeline with status running"),
    (
        "DELETE",
        "/api/repos/1/logs/13/11303",
        {},
        None,
        422,
        "Cannot delete logs for a pending or running step",
    ),
    # Pipeline list filters are validated.
    ("GET", "/api/repos/1/pipelines", {"event": "push,bogus"}, None, 400, b""),
    ("GET", "/api/repos/1/pipelines", {"status": "great"}, None, 400, b""),
    ("GET", "/api/repos/1/pipelines", {"before": "yesterday"}, None, 400, b""),
    ("GET", "/api/repos/1/pipelines/abc", {}, None, 400, b""),
    ("GET", "/api/repos/1/pipelines/999", {}, None, 404, b""),
    # Secrets: 422 on validation at every level for create; global update 400.
    (
        "POST",
        "/api/repos/1/secrets",
        {},
        {"name": "n", "value": "v", "events": []},
        422,
        "Error inserting secret",
    ),
    ("POST", "/api/orgs/4/secrets", {}, {"name": "n", "value": "v"}, 422, "Error inserting secret"),
    (
        "POST",
        "/api/secrets",
        {},
        {"name": "n", "value": "v", "events": ["nope"]},
        422,
        "Error inserting secret",
    ),
    (
        "POST",
        "/api/secrets",
        {},
        {"name": "n", "value": "v", "events": ["push"], "images": ["bad image!"]},
        422,
        "Error",
    ),
    ("PATCH", "/api/repos/1/secrets/docker_password", {}, {"events": []}, 422, "Error updating secret"),
    ("PATCH", "/api/secrets/slack_webhook", {}, {"events": []}, 400, "Error updating secret"),
    (
        "POST",
        "/api/repos/1/secrets",
        {},
        {"name": "docker_password", "value": "v", "events": ["push"]},
        500,
        "Error",
    ),
    ("GET", "/api/repos/1/secrets/nope", {}, None, 404, b""),
    # Registries: repo create 400, org create 422, global create 400; updates 422/422/400.
    ("POST", "/api/repos/1/registries", {}, {"address": "x.example.org", "username": "u"}, 400, "Error"),
    ("POST", "/api/orgs/4/registries", {}, {"address": "x.example.org", "username": "u"}, 422, "Error"),
    ("POST", "/api/registries", {}, {"address": "x.example.org", "username": "u"}, 400, "Error"),
    ("DELETE", "/api/registries/nope.example.org", {}, None, 404, b""),
    # Crons.
    ("GET", "/api/repos/1/cron/abc", {}, None, 400, "Error parsing cron id"),
    ("GET", "/api/repos/1/cron/999", {}, None, 404, b""),
    ("POST", "/api/repos/1/cron", {}, {"name": "n", "schedule": "0 0 * * * *"}, 422, "Error inserting cron"),
    (
        "POST",
        "/api/repos/1/cron",
        {},
        {"name": "n", "schedule": "0 0 * * *", "timezone": "Mars/Olympus"},
        400,
        "Error",
    ),
    ("POST", "/api/repos/1/cron", {}, {"name": "n", "schedule": "0 0 * * *", "branch": "nope"}, 400, "Error"),
    (
        "POST",
        "/api/repos/1/cron",
        {},
        {"name": "nightly", "schedule": "0 0 * * *"},
        409,
        "cron with this exists",
    ),
    ("PATCH", "/api/repos/1/cron/1", {}, {"schedule": "61 * * * *"}, 400, "Error inserting cron"),
    ("PATCH", "/api/repos/1/cron/1", {}, {"timezone": "Nowhere/Special"}, 400, "Error inserting cron"),
    # Repositories.
    ("POST", "/api/repos", {"forge_remote_id": "0"}, None, 400, "No forge_remote_id provided"),
    ("POST", "/api/repos", {}, None, 400, "No forge_remote_id provided"),
    ("POST", "/api/repos", {"forge_remote_id": "1001"}, None, 409, "Repository is already active."),
    ("PATCH", "/api/repos/1", {}, {"require_approval": "sometimes"}, 400, "Invalid require-approval setting"),
    ("PATCH", "/api/repos/1", {}, {"visibility": "secret"}, 400, "Invalid visibility type"),
    ("PATCH", "/api/repos/1", {}, {"timeout": 0}, 400, "Timeout must be at least 1 minute"),
    ("GET", "/api/repos/5/branches", {}, None, 404, b""),  # deactivated: no owner
    # Users, agents, forges, log level.
    ("POST", "/api/users", {}, {"login": "bad login!"}, 400, "invalid user login"),
    ("POST", "/api/users", {}, {"login": "bob"}, 500, "UNIQUE"),
    ("GET", "/api/users/nobody", {}, None, 404, b""),
    ("GET", "/api/users/bob", {"forge_id": "x"}, None, 400, b""),
    ("DELETE", "/api/agents/2", {}, None, 409, "Agent has running tasks"),
    ("GET", "/api/agents/999", {}, None, 404, b""),
    ("PATCH", "/api/orgs/4/agents/1", {}, {"name": "x"}, 404, "Agent not found"),  # an instance agent
    ("GET", "/api/forges/999", {}, None, 404, b""),
    ("POST", "/api/log-level", {}, {"log-level": "loud"}, 400, b""),
    # Bodies that do not bind.
    ("PATCH", "/api/users/bob", {}, "not json", 400, b""),
]


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "status", "expected"),
    ZOO,
    ids=[f"{m} {p} {q or ''} -> {s}" for m, p, q, _, s, _ in ZOO],
)
def test_status_code_and_body_shape_match_woodpecker(
    sandbox: Sandbox,
    method: str,
    path: str,
    query: dict[str, str],
    body: Any,
    status: int,
    expected: bytes | str,
) -> None:
    with admin(sandbox) as http:
        if isinstance(body, str):
            response = http.request(
                method, path, params=query, content=body, headers={"content-type": "application/json"}
            )
        else:
            response = http.request(method, path, params=query, json=body)
    assert response.status_code == status, response.text[:200]
    if isinstance(expected, bytes):
        assert response.content == expected
    else:
        assert response.headers["content-type"].startswith("text/plain")
        assert response.text.startswith(expected), response.text


def test_a_filtered_trigger_answers_204_with_the_pipeline_filtered_header(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.post("/api/repos/1/pipelines", json={"branch": "gh-pages"})
    assert response.status_code == 204
    assert response.headers["pipeline-filtered"] == "true"


def test_repair_of_every_repository_reports_the_failed_ones_as_json(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        del sandbox.world.forge_repos["1002"]  # acme/api vanished from the forge
    with admin(sandbox) as http:
        response = http.post("/api/repos/repair")
    assert response.status_code == 500
    assert json_of(response) == {"error": "failed to repair some repos", "failed_repos": [2]}


def test_a_body_without_a_json_content_type_binds_as_an_empty_form(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.post(
            "/api/secrets",
            content=b'{"name": "n", "value": "v", "events": ["push"]}',
            headers={"content-type": "text/plain"},
        )
    assert response.status_code == 422  # nothing was bound, so validation fails
