"""Contract: every request the catalogue names is a real Woodpecker 3.17 route, and the gateway completes each against the sandbox."""

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import pytest

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential, LogWindowRequest, Request, ServesWebUi
from sandbox.biglogs import BigLog
from sandbox.server import Sandbox
from tests.contract_data import SWAGGER_3_17
from tests.fixtures.gateway import GatewayFactory

ROOT_PATHS = {"/version", "/healthz"}


def catalogue_pairs() -> dict[tuple[str, str], int]:
    """(method, path template) -> the success status the catalogue expects."""
    pairs: dict[tuple[str, str], int] = {}
    for tool in WOODPECKER_TOOLS:
        for endpoint in tool.endpoints:
            key = (endpoint.method, endpoint.path)
            assert pairs.get(key, endpoint.success) == endpoint.success, key
            pairs[key] = endpoint.success
    return pairs


PAIRS = catalogue_pairs()


def template(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


# ---------------------------------------------------------------------- the OpenAPI document


@pytest.fixture(scope="module")
def swagger() -> dict[str, Any]:
    return json.loads(SWAGGER_3_17.read_text())


def test_every_catalogue_request_is_a_route_of_the_woodpecker_3_17_api(swagger: dict[str, Any]) -> None:
    assert swagger["basePath"] == "/api"
    documented = {
        (method.upper(), "/api" + template(path)) for path, ops in swagger["paths"].items() for method in ops
    }
    missing = sorted(
        f"{method} {path}"
        for method, path in PAIRS
        if path not in ROOT_PATHS and (method, template(path)) not in documented
    )
    assert missing == []


def test_only_version_and_healthz_live_at_the_server_root() -> None:
    roots = {
        (e.method, e.path)
        for t in WOODPECKER_TOOLS
        for e in t.endpoints
        if e.root or not e.path.startswith("/api/")
    }
    assert roots == {("GET", "/version"), ("GET", "/healthz")}
    assert all(e.root == (e.path in ROOT_PATHS) for t in WOODPECKER_TOOLS for e in t.endpoints)


# ---------------------------------------------------------------------- against the sandbox

# Seeded objects: repository 1 is acme/web; its pipeline 2 failed (step 10204 is its
# failed test step), 11 is blocked, 13 is running; org 4 is acme; agent 3 belongs to it.
IDS = {
    "repo_id": "1",
    "full_name": "acme/web",
    "number": "2",
    "step_id": "10204",
    "org_id": "4",
    "cron_id": "1",
    "login": "bob",
    "agent_id": "1",
    "forge_id": "1",
}


@dataclass(frozen=True)
class Case:
    ids: Mapping[str, str] = field(default_factory=dict)  # overrides of IDS
    query: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


REPO = "/api/repos/{repo_id}"
ORG = "/api/orgs/{org_id}"
USER = {"login": "bob", "email": "bob@example.org", "avatar_url": "", "admin": False, "forge_id": 1}
FORGE = {"type": "gitea", "url": "https://gitea.example.org", "client": "id", "oauth_client_secret": "s"}

CASES: dict[tuple[str, str], Case] = {
    ("GET", "/api/user/repos"): Case(query={"all": "true"}),
    ("GET", "/api/repos"): Case(query={"page": "1", "perPage": "50"}),
    ("GET", REPO): Case(),
    ("GET", "/api/repos/lookup/{full_name}"): Case(),
    ("GET", REPO + "/permissions"): Case(),
    ("GET", REPO + "/branches"): Case(),
    ("GET", REPO + "/pull_requests"): Case(),
    ("POST", "/api/repos"): Case(query={"forge_remote_id": "1007"}),
    ("PATCH", REPO): Case(body={"timeout": 90, "allow_pr": True}),
    ("POST", REPO + "/repair"): Case(),
    ("POST", "/api/repos/repair"): Case(),
    ("POST", REPO + "/move"): Case(query={"to": "acme/website"}),
    ("POST", REPO + "/chown"): Case(),
    ("DELETE", REPO): Case(query={"remove": "true"}),
    ("GET", REPO + "/pipelines"): Case(query={"page": "1", "perPage": "10", "branch": "main"}),
    ("GET", REPO + "/pipelines/{number}"): Case(),
    ("GET", REPO + "/pipelines/{number}/config"): Case(),
    ("GET", REPO + "/pipelines/{number}/metadata"): Case(),
    ("GET", "/api/pipelines"): Case(),
    ("POST", REPO + "/pipelines"): Case(body={"branch": "main", "variables": {"DEPLOY": "no"}}),
    ("POST", REPO + "/pipelines/{number}"): Case(),
    ("POST", REPO + "/pipelines/{number}/cancel"): Case(ids={"number": "13"}),
    ("POST", REPO + "/pipelines/{number}/approve"): Case(ids={"number": "11"}),
    ("POST", REPO + "/pipelines/{number}/decline"): Case(ids={"number": "11"}),
    ("DELETE", REPO + "/pipelines/{number}"): Case(),
    ("GET", REPO + "/logs/{number}/{step_id}"): Case(),
    ("DELETE", REPO + "/logs/{number}/{step_id}"): Case(),
    ("DELETE", REPO + "/logs/{number}"): Case(),
    ("GET", REPO + "/secrets"): Case(),
    ("GET", ORG + "/secrets"): Case(),
    ("GET", "/api/secrets"): Case(),
    ("GET", REPO + "/secrets/{name}"): Case(ids={"name": "docker_password"}),
    ("GET", ORG + "/secrets/{name}"): Case(ids={"name": "npm_token"}),
    ("GET", "/api/secrets/{name}"): Case(ids={"name": "slack_webhook"}),
    ("POST", REPO + "/secrets"): Case(body={"name": "new_one", "value": "v", "events": ["push"]}),
    ("POST", ORG + "/secrets"): Case(body={"name": "new_one", "value": "v", "events": ["push"]}),
    ("POST", "/api/secrets"): Case(body={"name": "new_one", "value": "v", "events": ["push"]}),
    ("PATCH", REPO + "/secrets/{name}"): Case(ids={"name": "docker_password"}, body={"events": ["push"]}),
    ("PATCH", ORG + "/secrets/{name}"): Case(ids={"name": "npm_token"}, body={"events": ["push"]}),
    ("PATCH", "/api/secrets/{name}"): Case(ids={"name": "slack_webhook"}, body={"events": ["push"]}),
    ("DELETE", REPO + "/secrets/{name}"): Case(ids={"name": "docker_password"}),
    ("DELETE", ORG + "/secrets/{name}"): Case(ids={"name": "npm_token"}),
    ("DELETE", "/api/secrets/{name}"): Case(ids={"name": "slack_webhook"}),
    ("GET", REPO + "/registries"): Case(),
    ("GET", ORG + "/registries"): Case(),
    ("GET", "/api/registries"): Case(),
    # An address with a slash travels as one escaped segment.
    ("GET", REPO + "/registries/{address}"): Case(ids={"address": "ghcr.io%2Facme"}),
    ("GET", ORG + "/registries/{address}"): Case(ids={"address": "docker.io"}),
    ("GET", "/api/registries/{address}"): Case(ids={"address": "quay.io"}),
    ("POST", REPO + "/registries"): Case(
        body={"address": "new.example.org", "username": "u", "password": "p"}
    ),
    ("POST", ORG + "/registries"): Case(
        body={"address": "new.example.org", "username": "u", "password": "p"}
    ),
    ("POST", "/api/registries"): Case(body={"address": "new.example.org", "username": "u", "password": "p"}),
    ("PATCH", REPO + "/registries/{address}"): Case(
        ids={"address": "ghcr.io%2Facme"}, body={"username": "u2", "password": "p2"}
    ),
    ("PATCH", ORG + "/registries/{address}"): Case(
        ids={"address": "docker.io"}, body={"username": "u2", "password": "p2"}
    ),
    ("PATCH", "/api/registries/{address}"): Case(
        ids={"address": "quay.io"}, body={"username": "u2", "password": "p2"}
    ),
    ("DELETE", REPO + "/registries/{address}"): Case(ids={"address": "ghcr.io%2Facme"}),
    ("DELETE", ORG + "/registries/{address}"): Case(ids={"address": "docker.io"}),
    ("DELETE", "/api/registries/{address}"): Case(ids={"address": "quay.io"}),
    ("GET", REPO + "/cron"): Case(),
    ("GET", REPO + "/cron/{cron_id}"): Case(),
    ("POST", REPO + "/cron"): Case(
        body={"name": "hourly", "schedule": "0 * * * *", "branch": "main", "enabled": True}
    ),
    ("PATCH", REPO + "/cron/{cron_id}"): Case(body={"schedule": "0 4 * * *"}),
    ("POST", REPO + "/cron/{cron_id}"): Case(),
    ("DELETE", REPO + "/cron/{cron_id}"): Case(),
    ("GET", "/api/orgs"): Case(),
    ("GET", ORG): Case(),
    ("GET", "/api/orgs/lookup/{name}"): Case(ids={"name": "acme"}),
    ("GET", ORG + "/permissions"): Case(),
    ("DELETE", ORG): Case(ids={"org_id": "6"}),
    ("GET", "/api/user"): Case(),
    ("GET", "/api/user/feed"): Case(query={"latest": "true"}),
    ("GET", "/api/users"): Case(),
    ("GET", "/api/users/{login}"): Case(query={"forge_id": "1"}),
    ("POST", "/api/users"): Case(body={"login": "carol", "email": "carol@example.org"}),
    ("PATCH", "/api/users/{login}"): Case(
        body={**USER, "forge_remote_id": "102", "email": "bob@new.example.org"}
    ),
    ("DELETE", "/api/users/{login}"): Case(query={"forge_id": "1"}),
    ("GET", "/api/agents"): Case(),
    ("GET", ORG + "/agents"): Case(query={"perPage": "50"}),
    ("GET", "/api/agents/{agent_id}"): Case(),
    ("GET", "/api/agents/{agent_id}/tasks"): Case(ids={"agent_id": "2"}),
    ("POST", "/api/agents"): Case(body={"name": "new-runner", "no_schedule": False}),
    ("POST", ORG + "/agents"): Case(body={"name": "new-runner", "no_schedule": False}),
    ("PATCH", "/api/agents/{agent_id}"): Case(body={"name": "renamed", "no_schedule": True}),
    ("PATCH", ORG + "/agents/{agent_id}"): Case(
        ids={"agent_id": "3"}, body={"name": "renamed", "no_schedule": False}
    ),
    ("DELETE", "/api/agents/{agent_id}"): Case(),
    ("DELETE", ORG + "/agents/{agent_id}"): Case(ids={"agent_id": "3"}),
    ("GET", "/api/forges"): Case(),
    ("GET", "/api/forges/{forge_id}"): Case(),
    ("POST", "/api/forges"): Case(body=FORGE),
    ("PATCH", "/api/forges/{forge_id}"): Case(body={**FORGE, "url": "https://forge.example.org"}),
    ("DELETE", "/api/forges/{forge_id}"): Case(),
    ("GET", "/version"): Case(),
    ("GET", "/healthz"): Case(),
    ("GET", "/api/queue/info"): Case(),
    ("GET", "/api/log-level"): Case(),
    ("GET", "/api/signature/public-key"): Case(),
    ("POST", "/api/queue/pause"): Case(),
    ("POST", "/api/queue/resume"): Case(),
    ("POST", "/api/log-level"): Case(body={"log-level": "debug"}),
}


def fill(path: str, ids: Mapping[str, str]) -> str:
    values = {**IDS, **ids}
    return re.sub(r"\{([^}]+)\}", lambda m: values[m.group(1)], path)


def test_every_catalogue_request_has_a_contract_case() -> None:
    assert sorted(set(PAIRS) - set(CASES)) == []
    assert sorted(set(CASES) - set(PAIRS)) == []


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize(("method", "path"), sorted(PAIRS), ids=[f"{m} {p}" for m, p in sorted(PAIRS)])
async def test_the_gateway_completes_each_catalogue_request_against_the_sandbox(
    sandbox: Sandbox, make_gateway: GatewayFactory, method: str, path: str
) -> None:
    case = CASES[(method, path)]
    gateway = make_gateway(sandbox.url, token=Credential(sandbox.admin_token))
    call = Request(method, fill(path, case.ids), case.query, case.body)
    with anyio.fail_after(10):
        response = await gateway.send(call, None)
    assert response.status == PAIRS[(method, path)]
    [seen] = sandbox.requests
    login = None if path in ROOT_PATHS else "ada"  # the root routes need no token and get none
    assert (seen.method, seen.query, seen.body, seen.login) == (method, dict(case.query), case.body, login)


@pytest.mark.slow
@pytest.mark.anyio
async def test_get_server_info_works_without_any_token(
    sandbox: Sandbox, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(sandbox.url, token=None)
    with anyio.fail_after(10):
        version = await gateway.send(Request("GET", "/version"), None)
        health = await gateway.send(Request("GET", "/healthz"), None)
    assert version.data["version"] == sandbox.version
    assert (health.status, health.data) == (204, None)


@pytest.mark.slow
@pytest.mark.anyio
async def test_api_version_is_the_web_ui_of_a_real_server_and_is_named_so(
    sandbox: Sandbox, make_gateway: GatewayFactory
) -> None:
    # A WOODPECKER_URL ending in /api: the root routes land on the web UI's index.html.
    gateway = make_gateway(sandbox.url + "/api", token=None)
    with anyio.fail_after(10), pytest.raises(ServesWebUi):
        await gateway.send(Request("GET", "/version"), None)


# ---------------------------------------------------------------------- logs from the sandbox


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("end", ["head", "tail"])
async def test_step_log_windows_the_sandbox_log_of_a_failed_step(
    sandbox: Sandbox, make_gateway: GatewayFactory, end: Literal["head", "tail"]
) -> None:
    gateway = make_gateway(sandbox.url, token=Credential(sandbox.admin_token))
    path = fill(REPO + "/logs/{number}/{step_id}", {})
    with anyio.fail_after(10):
        whole = await gateway.send(Request("GET", path), None)
        window = await gateway.step_log(path, LogWindowRequest(3, end), None)
    expected = sorted((e["line"], base64.b64decode(e["data"]).decode()) for e in whole.data)
    expected = expected[:3] if end == "head" else expected[-3:]
    assert [(line.number, line.text) for line in window.lines] == expected
    assert window.total_lines == len(whole.data)


@pytest.mark.slow
@pytest.mark.anyio
async def test_step_log_reads_the_last_lines_of_the_sandbox_10000_line_log(
    sandbox: Sandbox, make_gateway: GatewayFactory
) -> None:
    repo_id, number, step_id = sandbox.big_log_steps[10_000]
    gateway = make_gateway(sandbox.url, token=Credential(sandbox.admin_token))
    with anyio.fail_after(20):
        window = await gateway.step_log(
            f"/api/repos/{repo_id}/logs/{number}/{step_id}", LogWindowRequest(200, "tail"), None
        )
    log = BigLog(step_id=step_id, lines=10_000, first_id=0)
    assert window.total_lines == 10_000
    assert [line.number for line in window.lines] == list(range(9_800, 10_000))
    assert [line.text for line in window.lines[-3:]] == [log.line_text(i) for i in range(9_997, 10_000)]


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_step_without_log_is_an_empty_window(sandbox: Sandbox, make_gateway: GatewayFactory) -> None:
    gateway = make_gateway(sandbox.url, token=Credential(sandbox.admin_token))
    # Step 11304 (deploy of the running pipeline 13) has not started: Woodpecker answers null.
    with anyio.fail_after(10):
        window = await gateway.step_log("/api/repos/1/logs/13/11304", LogWindowRequest(10), None)
    assert (window.lines, window.total_lines) == ((), 0)
