"""Every endpoint the tools use exists in the sandbox with its method, success status and swagger-valid JSON."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from domain.tools import Endpoint, Fixed
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.sandbox import _swagger
from tests.sandbox._client import admin

# Seeded objects each placeholder resolves to (see sandbox/seed.py).
SECRET_BY_SCOPE = {"repo": "docker_password", "org": "npm_token", "global": "slack_webhook"}
REGISTRY_BY_SCOPE = {"repo": "ghcr.io/acme", "org": "docker.io", "global": "quay.io"}
PIPELINE_FOR_TOOL = {
    "cancel_pipeline": "13",  # running
    "approve_pipeline": "11",  # blocked (the fork pull request)
    "decline_pipeline": "11",
    "delete_pipeline": "1",
}
QUERY_VALUES = {
    "to": "acme/website",  # a name the forge knows acme/web by (sandbox/seed.py)
    "event": "deployment",
    "deploy_to": "staging",
    "include_inactive": "true",
    "forge_id": "1",
}
BODIES: dict[str, dict[str, Any]] = {
    "update_repository": {"timeout": 30},
    "trigger_pipeline": {"branch": "main", "variables": {"GREETING": "hello"}},
    "create_secret": {"name": "new_secret", "value": "s3cr3t-value", "events": ["push"]},
    "update_secret": {"events": ["push", "tag"]},
    "create_registry": {"address": "registry.example.net", "username": "robot", "password": "pw"},
    "update_registry": {"username": "robot2"},
    "create_cron": {"name": "hourly", "schedule": "0 * * * *", "branch": "main", "enabled": True},
    "update_cron": {"enabled": False},
    "create_user": {"login": "carol", "email": "carol@example.org"},
    "update_user": {
        "login": "bob",
        "email": "bob@example.org",
        "avatar_url": "",
        "admin": False,
        "forge_id": 1,
        "forge_remote_id": "102",
    },
    "create_agent": {"name": "new-runner", "no_schedule": False},
    "update_agent": {"name": "renamed-runner", "no_schedule": True},
    "create_forge": {
        "type": "forgejo",
        "url": "https://git.example.net",
        "client": "client-id",
        "oauth_client_secret": "not-a-real-secret",
    },
    "update_forge": {
        "type": "gitea",
        "url": "https://forge.example.org",
        "client": "woodpecker-oauth-client",
    },
    "set_log_level": {"log-level": "debug"},
}


@dataclass(frozen=True)
class Case:
    tool: str
    endpoint: Endpoint

    @property
    def id(self) -> str:
        return f"{self.tool}:{self.endpoint.method} {self.endpoint.path}"


def _cases() -> list[Case]:
    seen: set[tuple[str, str, str]] = set()
    cases = []
    for tool in WOODPECKER_TOOLS:
        for endpoint in tool.endpoints:
            key = (tool.name, endpoint.method, endpoint.path)
            if key not in seen:
                seen.add(key)
                cases.append(Case(tool.name, endpoint))
    return cases


CASES = _cases()


def _scope(path: str) -> str:
    if path.startswith("/api/repos/"):
        return "repo"
    if path.startswith("/api/orgs/"):
        return "org"
    return "global"


def _url(case: Case) -> str:
    ep = case.endpoint
    scope = _scope(ep.path)
    values = {
        "repo_id": "1",
        "full_name": "acme/web",
        "number": PIPELINE_FOR_TOOL.get(case.tool, "2"),
        "step_id": "10204",  # the failing test step of acme/web #2
        "org_id": "4",
        "cron_id": "1",
        "login": "bob",
        # The org route only knows the organization's own agent.
        "agent_id": "3" if ep.path.startswith("/api/orgs/") else "1",
        "forge_id": "1",
        # One path segment each: slashes inside an address travel encoded.
        "name": "acme" if "/orgs/lookup/" in ep.path else quote(SECRET_BY_SCOPE[scope], safe=""),
        "address": quote(REGISTRY_BY_SCOPE[scope], safe=""),
    }
    path = ep.path
    for key, value in values.items():
        path = path.replace("{" + key + "}", value)
    assert "{" not in path, path
    return path


def _query(case: Case) -> dict[str, str]:
    query: dict[str, str] = {}
    for key, source in case.endpoint.query.items():
        if isinstance(source, Fixed):
            query[key] = str(source)
        elif source.name == "forge_remote_id" and case.tool == "activate_repository":
            query[key] = "1007"  # the never-activated acme/legacy
        elif source.name in QUERY_VALUES:
            query[key] = QUERY_VALUES[source.name]
    return query


def test_the_catalogue_names_endpoints_to_check() -> None:
    assert len({t.name for t in WOODPECKER_TOOLS}) == len(WOODPECKER_TOOLS) > 70
    assert len(CASES) > 100


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue_endpoint_answers_with_its_success_status_and_valid_json(
    sandbox: Sandbox, case: Case
) -> None:
    ep = case.endpoint
    body = BODIES.get(case.tool) if ep.method in ("POST", "PATCH") else None
    with admin(sandbox) as http:
        response = http.request(ep.method, _url(case), params=_query(case), json=body)
    assert response.status_code == ep.success, (response.status_code, response.text[:300])
    if ep.success == 204:
        assert response.content == b""
        return
    if _swagger.produces(ep.method, ep.path) == ["text/plain"]:  # GET /signature/public-key
        assert response.headers["content-type"].startswith("text/plain"), response.headers["content-type"]
        assert response.text.strip()
        return
    assert response.headers["content-type"].startswith("application/json"), response.headers["content-type"]
    payload = response.json()
    _swagger.validate(ep.method, ep.path, payload)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue_success_status_agrees_with_the_swagger_exceptions(case: Case) -> None:
    ep = case.endpoint
    assert _swagger.expected_status(ep.method, ep.path) == ep.success
