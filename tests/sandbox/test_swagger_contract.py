"""Beyond one call per endpoint: every seeded object, as each kind of caller sees it, fits the swagger 3.17 models."""

import jsonschema
import pytest

from sandbox.server import Sandbox
from tests.sandbox import _swagger
from tests.sandbox._client import admin, anonymous, json_of, user


def test_every_seeded_pipeline_fits_the_pipeline_model(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        for repo_id in sorted(sandbox.world.repos):
            listed = json_of(http.get(f"/api/repos/{repo_id}/pipelines"))
            _swagger.validate("GET", "/api/repos/{repo_id}/pipelines", listed)
            for pipeline in listed:
                path = f"/api/repos/{repo_id}/pipelines/{pipeline['number']}"
                _swagger.validate("GET", "/api/repos/{repo_id}/pipelines/{number}", json_of(http.get(path)))
                _swagger.validate(
                    "GET",
                    "/api/repos/{repo_id}/pipelines/{number}/metadata",
                    json_of(http.get(f"{path}/metadata")),
                )


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/api/user/repos?all=true", "/api/user/repos"),
        ("/api/user/repos", "/api/user/repos"),
        ("/api/user/feed?latest=true", "/api/user/feed"),
        ("/api/user/feed", "/api/user/feed"),
        ("/api/repos?active=true", "/api/repos"),
        ("/api/repos/lookup/acme/old-site", "/api/repos/lookup/{repo_full_name}"),
        ("/api/repos/1/pipelines/latest?branch=develop", "/api/repos/{repo_id}/pipelines/{pipeline_number}"),
        ("/api/agents/2/tasks", "/api/agents/{agent_id}/tasks"),
        ("/api/orgs/4/agents", "/api/orgs/{org_id}/agents"),
        ("/api/queue/info", "/api/queue/info"),
        ("/api/forges", "/api/forges"),
    ],
)
def test_admin_views_fit_the_models(sandbox: Sandbox, path: str, template: str) -> None:
    with admin(sandbox) as http:
        _swagger.validate("GET", template, json_of(http.get(path)))


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/api/user/repos?all=true", "/api/user/repos"),
        ("/api/user/feed", "/api/user/feed"),
        ("/api/repos/1/permissions", "/api/repos/{repo_id}/permissions"),
        ("/api/orgs/4/permissions", "/api/orgs/{org_id}/permissions"),
        ("/api/secrets", "/api/secrets"),
        ("/api/registries", "/api/registries"),
    ],
)
def test_user_views_fit_the_models(sandbox: Sandbox, path: str, template: str) -> None:
    with user(sandbox) as http:
        _swagger.validate("GET", template, json_of(http.get(path)))


def test_anonymous_views_fit_the_models(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as http:
        _swagger.validate("GET", "/api/forges", json_of(http.get("/api/forges")))
        _swagger.validate("GET", "/api/forges/{forge_id}", json_of(http.get("/api/forges/1")))
        _swagger.validate("GET", "/api/repos/{repo_id}", json_of(http.get("/api/repos/1")))
        _swagger.validate("GET", "/version", json_of(http.get("/version")))


def test_the_validator_rejects_a_misnamed_field() -> None:
    with pytest.raises(jsonschema.ValidationError, match="repo_id"):
        _swagger.validate(
            "GET", "/api/repos/{repo_id}/pipelines/{number}", {"id": 1, "number": 1, "repo_id": 1}
        )


def test_the_validator_rejects_integer_array_log_data() -> None:
    # The document's own claim (array of integers) is exactly what the server never sends.
    with pytest.raises(jsonschema.ValidationError, match="not of type"):
        _swagger.validate("GET", "/api/repos/{repo_id}/logs/{number}/{step_id}", [{"data": [104, 105]}])
