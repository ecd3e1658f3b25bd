"""The request log records what reached the sandbox (never a token), and the control routes reset state."""

import base64

import httpx

from sandbox.server import Sandbox, running_sandbox
from tests.sandbox._client import admin, anonymous, client, json_of, user


def test_every_request_is_recorded_with_the_login_not_the_token(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        http.get("/api/repos/1/pipelines", params={"page": "2"})
        http.post("/api/repos/1/secrets", json={"name": "n", "value": "v", "events": ["push"]})
    with anonymous(sandbox) as anon:
        anon.get("/version")
    first, second, third = sandbox.requests
    assert (first.method, first.path, first.query, first.status, first.login) == (
        "GET",
        "/api/repos/1/pipelines",
        {"page": "2"},
        200,
        sandbox.admin_login,
    )
    assert first.state_changing is False and first.body is None
    assert (second.body, second.state_changing) == ({"name": "n", "value": "v", "events": ["push"]}, True)
    assert third.login is None
    assert sandbox.admin_token not in repr(sandbox.requests)


def test_state_changing_requests_are_the_writes(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        http.get("/api/user")
        http.options("/api/user")
        http.post("/api/repos/1/pipelines/11/approve")
        http.delete("/api/repos/1/pipelines/1")  # refused (403), still a state-changing attempt
    changing = sandbox.state_changing_requests()
    assert [(r.method, r.path, r.status) for r in changing] == [
        ("POST", "/api/repos/1/pipelines/11/approve", 200),
        ("DELETE", "/api/repos/1/pipelines/1", 403),
    ]


def test_the_log_is_served_over_http_and_can_be_cleared(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        http.get("/api/user")
        logged = json_of(http.get("/_sandbox/requests"))
        assert logged == [
            {
                "method": "GET",
                "path": "/api/user",
                "query": {},
                "body": None,
                "status": 200,
                "login": sandbox.user_login,
                "state_changing": False,
            }
        ]
        assert http.delete("/_sandbox/requests").status_code == 204
        assert json_of(http.get("/_sandbox/requests")) == []


def test_reset_over_http_reseeds_but_keeps_tokens(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        http.delete("/api/repos/1/secrets/docker_password")
        assert http.post("/_sandbox/reset").status_code == 204
        assert http.get("/api/repos/1/secrets/docker_password").status_code == 200
    assert [r.path for r in sandbox.requests] == ["/api/repos/1/secrets/docker_password"]


def test_injected_faults_answer_instead_of_the_route_a_given_number_of_times(sandbox: Sandbox) -> None:
    sandbox.inject_fault("GET", "/api/user", 502, "bad gateway", times=1)
    with admin(sandbox) as http:
        failed = http.get("/api/user")
        ok = http.get("/api/user")
        assert (
            http.post(
                "/_sandbox/faults", json={"method": "POST", "path": "/api/queue/pause", "status": 500}
            ).status_code
            == 204
        )
        paused = http.post("/api/queue/pause")
    assert (failed.status_code, failed.text) == (502, "bad gateway")
    assert ok.status_code == 200
    assert (paused.status_code, paused.content) == (500, b"")
    assert sandbox.world.queue_paused is False
    assert [r.status for r in sandbox.requests] == [502, 200, 500]


def test_an_echoing_upstream_adds_the_requests_authorization_to_the_next_answers_only(
    sandbox: Sandbox,
) -> None:
    sandbox.inject_echo("GET", "/api/repos/1", times=1)
    sandbox.inject_echo("GET", "/api/repos/1/logs/2/10204", into="log")
    with admin(sandbox) as http:
        plain = json_of(http.get("/api/repos/1/logs/2/10204"))
        assert http.post("/_sandbox/reset").status_code == 204  # a reset clears the echoes
        unechoed = json_of(http.get("/api/repos/1/logs/2/10204"))
        sandbox.inject_echo("GET", "/api/repos/1/logs/2/10204", into="log")
        log = json_of(http.get("/api/repos/1/logs/2/10204"))
        assert (
            http.post("/_sandbox/echoes", json={"method": "GET", "path": "/api/repos/1"}).status_code == 204
        )
        echoed = json_of(http.get("/api/repos/1"))
        after = json_of(http.get("/api/repos/1"))
        assert http.post("/_sandbox/echoes", json={"method": "GET", "into": "x"}).status_code == 400
    header = f"Bearer {sandbox.admin_token}"
    assert echoed["_echo"] == {"request_headers": {"Authorization": header}}
    assert {k: v for k, v in echoed.items() if k != "_echo"} == after and "_echo" not in after
    assert plain[-1]["data"] == base64.b64encode(f"Authorization: {header}".encode()).decode()
    assert log == [
        *unechoed,
        {
            **unechoed[-1],
            "id": unechoed[-1]["id"] + 1,
            "line": unechoed[-1]["line"] + 1,
            "data": plain[-1]["data"],
        },
    ]


def test_the_fixture_gives_each_test_a_fresh_world(sandbox: Sandbox) -> None:
    assert sandbox.requests == []
    assert 1 in sandbox.world.repos and sandbox.world.repos[1].full_name == "acme/web"


def test_a_sandbox_starts_quickly_and_stops_cleanly() -> None:
    with running_sandbox() as sb:
        url = sb.url
        with client(sb) as http:
            assert http.get("/healthz").status_code == 204
    try:
        httpx.get(f"{url}/healthz", timeout=2)
    except httpx.HTTPError:
        return
    raise AssertionError("the sandbox still answers after the context manager exited")
