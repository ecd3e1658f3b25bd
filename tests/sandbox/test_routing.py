"""Point 1 of API-NOTES §7: root routes, /api prefix, the web-UI fallback, trailing slashes and raw-path params."""

import pytest

from sandbox.server import Sandbox
from tests.sandbox._client import admin, anonymous, json_of


def test_version_is_served_at_the_root_without_a_token(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as http:
        response = http.get("/version")
    assert json_of(response) == {"source": "https://github.com/woodpecker-ci/woodpecker", "version": "3.17.0"}
    assert response.headers["x-woodpecker-version"] == "3.17.0"


def test_healthz_answers_204_with_no_body(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as http:
        response = http.get("/healthz")
    assert response.status_code == 204
    assert response.content == b""


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/version"),  # version lives at the root only
        ("GET", "/api/healthz"),
        ("GET", "/api/does-not-exist"),
        ("GET", "/repos/1"),  # everything else needs the /api prefix
        ("PUT", "/api/repos/1"),  # a wrong method is not 405 either
        ("POST", "/api/user"),
        ("HEAD", "/api/user"),
    ],
)
def test_unrouted_requests_get_the_web_ui_with_200_html(sandbox: Sandbox, method: str, path: str) -> None:
    with admin(sandbox) as http:
        response = http.request(method, path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=UTF-8"
    if method != "HEAD":
        assert response.text.startswith("<!DOCTYPE html>")


def test_a_trailing_slash_on_get_redirects_permanently_to_the_path_without_it(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.get("/api/repos/1/", params={"x": "1"})
    assert response.status_code == 301
    assert response.headers["location"] == "/api/repos/1?x=1"


def test_a_trailing_slash_on_other_methods_redirects_with_307(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.post("/api/queue/pause/")
    assert response.status_code == 307
    assert response.headers["location"] == "/api/queue/pause"
    assert sandbox.world.queue_paused is False


def test_options_is_answered_for_any_path(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as http:
        response = http.options("/api/repos/1")
    assert response.status_code == 200
    assert "GET" in response.headers["access-control-allow-methods"]


def test_an_encoded_slash_stays_inside_one_path_parameter(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        encoded = http.get("/api/repos/1/registries/ghcr.io%2Facme")
        literal = http.get("/api/repos/1/registries/ghcr.io/acme")
    assert json_of(encoded)["address"] == "ghcr.io/acme"
    assert literal.headers["content-type"].startswith("text/html")


def test_lookup_routes_take_the_rest_of_the_path(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        repo = json_of(http.get("/api/repos/lookup/acme/web"))
        org = json_of(http.get("/api/orgs/lookup/acme"))
    assert repo["id"] == 1
    assert org == {"id": 4, "forge_id": 1, "name": "acme", "is_user": False}


def test_static_segments_win_over_parameters(sandbox: Sandbox) -> None:
    # /api/repos/repair is its own route, not /api/repos/{repo_id} with id "repair".
    with admin(sandbox) as http:
        response = http.post("/api/repos/repair")
    assert response.status_code == 204
