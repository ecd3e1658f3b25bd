"""Point 2 of API-NOTES §7: tokens map to users; 401 anonymous, 403 non-admin, 404 with an empty body for no access."""

import pytest

from sandbox.server import Sandbox
from tests.sandbox._client import admin, anonymous, client, json_of, outsider, user


def test_a_bearer_token_identifies_its_user(sandbox: Sandbox) -> None:
    with admin(sandbox) as a, user(sandbox) as u:
        assert json_of(a.get("/api/user"))["login"] == sandbox.admin_login
        assert json_of(u.get("/api/user"))["login"] == sandbox.user_login


def test_an_unknown_token_is_just_anonymous(sandbox: Sandbox) -> None:
    with client(sandbox, "0" * 64) as http:
        assert http.get("/api/user").status_code == 401
        # Anonymous callers may still read public things.
        assert json_of(http.get("/api/repos/1"))["full_name"] == "acme/web"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/user"),
        ("GET", "/api/users"),
        ("GET", "/api/secrets"),
        ("GET", "/api/registries"),
        ("POST", "/api/repos?forge_remote_id=1007"),
        ("GET", "/api/queue/info"),
        ("GET", "/api/orgs/4"),
    ],
)
def test_anonymous_callers_get_401_user_not_authorized(sandbox: Sandbox, method: str, path: str) -> None:
    with anonymous(sandbox) as http:
        response = http.request(method, path)
    assert response.status_code == 401
    assert response.text == "User not authorized"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/users"),
        ("GET", "/api/orgs"),
        ("GET", "/api/agents"),
        ("GET", "/api/repos"),
        ("GET", "/api/pipelines"),
        ("GET", "/api/queue/info"),
        ("POST", "/api/queue/pause"),
        ("GET", "/api/log-level"),
        ("POST", "/api/secrets"),
        ("DELETE", "/api/registries/quay.io"),
        ("POST", "/api/forges"),
    ],
)
def test_non_admins_get_403_on_admin_routes(sandbox: Sandbox, method: str, path: str) -> None:
    with user(sandbox) as http:
        response = http.request(method, path, json={})
    assert response.status_code == 403
    assert response.text == "User not authorized"
    assert sandbox.world.queue_paused is False


def test_a_user_without_pull_access_gets_404_with_an_empty_body(sandbox: Sandbox) -> None:
    # umbrella/infra (3) is private and bob has no permission on it.
    with user(sandbox) as http:
        for path in (
            "/api/repos/3",
            "/api/repos/3/pipelines",
            "/api/repos/3/pipelines/1",
            "/api/repos/lookup/umbrella/infra",
        ):
            response = http.get(path)
            assert (response.status_code, response.content) == (404, b""), path


def test_a_user_without_push_access_gets_404_on_push_routes(sandbox: Sandbox) -> None:
    # acme/api (2) is internal: bob can read it but not push.
    with user(sandbox) as http:
        assert http.get("/api/repos/2").status_code == 200
        for method, path in (("GET", "/api/repos/2/secrets"), ("POST", "/api/repos/2/pipelines/1/cancel")):
            response = http.request(method, path)
            assert (response.status_code, response.content) == (404, b""), path


def test_anonymous_callers_get_401_with_an_empty_body_on_private_repositories(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as http:
        response = http.get("/api/repos/3")
        missing = http.get("/api/repos/999")
    assert (response.status_code, response.content) == (401, b"")
    assert (missing.status_code, missing.content) == (401, b"")


def test_repository_admin_routes_answer_403_text_to_pushers(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        response = http.delete("/api/repos/1/pipelines/1")
    assert (response.status_code, response.text) == (403, "User not authorized")
    assert sandbox.world.pipeline(1, 1) is not None


def test_visibility_widens_pull_access(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as anon, outsider(sandbox) as eve:
        assert anon.get("/api/repos/1").status_code == 200  # public
        assert anon.get("/api/repos/2").status_code == 401  # internal needs a login
        assert eve.get("/api/repos/2").status_code == 200
        assert eve.get("/api/repos/3").status_code == 404  # private


def test_repository_permissions_describe_the_caller(sandbox: Sandbox) -> None:
    with admin(sandbox) as a, user(sandbox) as u, anonymous(sandbox) as anon:
        assert {
            k: v
            for k, v in json_of(a.get("/api/repos/3/permissions")).items()
            if k in ("pull", "push", "admin")
        } == {
            "pull": True,
            "push": True,
            "admin": True,
        }
        bob = json_of(u.get("/api/repos/1/permissions"))
        assert (bob["pull"], bob["push"], bob["admin"]) == (True, True, False)
        nobody = json_of(anon.get("/api/repos/1/permissions"))
        assert (nobody["pull"], nobody["push"], nobody["admin"]) == (True, False, False)


def test_bad_repository_ids_answer_400_empty(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.get("/api/repos/abc")
    assert (response.status_code, response.content) == (400, b"")


def test_forges_are_public_but_only_admins_see_the_full_record(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as anon, admin(sandbox) as a:
        public = json_of(anon.get("/api/forges"))
        full = json_of(a.get("/api/forges/1"))
    assert public == [{"id": 1, "type": "gitea", "url": "https://forge.example.org"}]
    assert full["client"] == "woodpecker-oauth-client"
    assert "oauth_client_secret" not in full


def test_organization_permissions_work_anonymously(sandbox: Sandbox) -> None:
    with anonymous(sandbox) as anon, user(sandbox) as u, admin(sandbox) as a:
        assert json_of(anon.get("/api/orgs/4/permissions")) == {"member": False, "admin": False}
        assert json_of(u.get("/api/orgs/4/permissions")) == {"member": True, "admin": False}
        assert json_of(u.get("/api/orgs/2/permissions")) == {"member": True, "admin": True}  # bob's own org
        assert json_of(a.get("/api/orgs/5/permissions")) == {"member": True, "admin": True}


def test_organization_routes_check_membership_and_admin(sandbox: Sandbox) -> None:
    with user(sandbox) as u:
        assert json_of(u.get("/api/orgs/4"))["name"] == "acme"
        secrets = u.get("/api/orgs/4/secrets")
        assert (secrets.status_code, secrets.text) == (403, "user not authorized")
        assert u.get("/api/orgs/5").status_code == 403
        assert json_of(u.get("/api/orgs/2/secrets")) == []  # own org: admin
        bad = u.get("/api/orgs/x")
        missing = u.get("/api/orgs/999")
    assert (bad.status_code, bad.text) == (400, "Invalid organization ID")
    # A missing id is the empty org (id 0), which only instance admins pass (docs/adr/0057).
    assert (missing.status_code, missing.text) == (403, "user not authorized")


def test_deleting_an_organization_needs_an_instance_admin(sandbox: Sandbox) -> None:
    with user(sandbox) as u:
        response = u.delete("/api/orgs/2")  # bob administers his own org but is not instance admin
    assert response.status_code == 403
    assert 2 in sandbox.world.orgs


def test_private_organizations_are_hidden_from_lookups(sandbox: Sandbox) -> None:
    with user(sandbox) as u, admin(sandbox) as a, anonymous(sandbox) as anon:
        assert u.get("/api/orgs/lookup/umbrella").status_code == 404
        assert json_of(a.get("/api/orgs/lookup/umbrella"))["id"] == 5
        # Woodpecker dereferences the missing user: an anonymous lookup is a 500.
        assert anon.get("/api/orgs/lookup/acme").status_code == 500


def test_global_secrets_are_readable_by_any_user_but_writable_by_admins_only(sandbox: Sandbox) -> None:
    with outsider(sandbox) as eve:
        names = [s["name"] for s in json_of(eve.get("/api/secrets"))]
        response = eve.post("/api/secrets", json={"name": "x", "value": "y", "events": ["push"]})
    assert names == ["slack_webhook", "sonar_token"]
    assert response.status_code == 403
