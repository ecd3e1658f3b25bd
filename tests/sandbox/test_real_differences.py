"""Where the sandbox answered otherwise than a real Woodpecker 3.17.0 did, run by hand against the forge fake
of tests/real (docs/adr/0057). Each test states what the real server answered; each failed on the sandbox
as it was before."""

from sandbox.server import Sandbox
from tests.sandbox._client import admin, json_of, user


def test_a_refused_repository_patch_stores_nothing(sandbox: Sandbox) -> None:
    # Real: PatchRepo returns on the first refused value before UpdateRepo, so allow_deploy and
    # require_approval, applied in memory before it, are not stored either.
    with admin(sandbox) as http:
        before = json_of(http.get("/api/repos/2"))
        refused = http.patch(
            "/api/repos/2", json={"allow_deploy": True, "require_approval": "none", "timeout": 0}
        )
        assert (refused.status_code, refused.text) == (400, "Timeout must be at least 1 minute")
        bogus = http.patch("/api/repos/2", json={"allow_pr": False, "require_approval": "bogus"})
        assert (bogus.status_code, bogus.text) == (400, "Invalid require-approval setting")
        after = json_of(http.get("/api/repos/2"))
    assert after == before


def test_a_move_to_a_name_the_forge_does_not_hold_is_500_and_changes_nothing(sandbox: Sandbox) -> None:
    # Real: MoveRepo reads the target from the forge first (forge.Repo(owner, name)); a 404 there is 500.
    with admin(sandbox) as http:
        before = json_of(http.get("/api/repos/1"))
        response = http.post("/api/repos/1/move", params={"to": "nobody/nothing"})
        assert (response.status_code, response.content) == (500, b"")
        assert json_of(http.get("/api/repos/1")) == before
        assert http.get("/api/repos/lookup/nobody/nothing").status_code == 404


def test_a_move_onto_another_forge_repository_takes_its_identity(sandbox: Sandbox) -> None:
    # Real: repo.Update(from) copies the target's forge_remote_id, names and URLs: the record now follows
    # another forge repository (whose webhooks then run with this record's secrets).
    with admin(sandbox) as http:
        assert http.post("/api/repos/1/move", params={"to": "acme/legacy"}).status_code == 204
        moved = json_of(http.get("/api/repos/1"))
        assert json_of(http.get("/api/repos/lookup/acme/web"))["id"] == 1
    assert (moved["full_name"], moved["forge_remote_id"]) == ("acme/legacy", "1007")


def test_a_move_onto_a_repository_woodpecker_holds_is_500(sandbox: Sandbox) -> None:
    # Real: moving onto the forge repository of another active record fails in the store: 500, empty.
    with admin(sandbox) as http:
        response = http.post("/api/repos/1/move", params={"to": "acme/api"})
        assert (response.status_code, response.content) == (500, b"")
        assert json_of(http.get("/api/repos/1"))["full_name"] == "acme/web"


def test_a_missing_organization_is_the_empty_one(sandbox: Sandbox) -> None:
    # Real: store.OrgGet returns a non-nil empty org with ErrRecordNotExist, and SetOrg checks only for nil:
    # GET /api/orgs/999999 is 200 {"name":"","is_user":false} for an admin, 403 for anyone else.
    with admin(sandbox) as http:
        found = http.get("/api/orgs/999999")
        assert (found.status_code, json_of(found)) == (200, {"name": "", "is_user": False})
        assert json_of(http.get("/api/orgs/999999/permissions")) == {"member": True, "admin": True}
    with user(sandbox) as http:
        assert json_of(http.get("/api/orgs/999999/permissions")) == {"member": False, "admin": False}
        refused = http.get("/api/orgs/999999")
        assert (refused.status_code, refused.text) == (403, "user not authorized")


def test_a_missing_organizations_secrets_are_every_secret_outside_an_organization(sandbox: Sandbox) -> None:
    # Real: the empty org has id 0, so its secrets and registries are those with org_id 0: every
    # global and every repository one, found, changed and deleted through /api/orgs/<missing id>/...
    with admin(sandbox) as http:
        listed = json_of(http.get("/api/orgs/999999/secrets"))
        assert listed and {s["org_id"] for s in listed} == {0}
        assert {s["repo_id"] for s in listed} > {0}
        global_name = next(s["name"] for s in listed if s["repo_id"] == 0)
        assert json_of(http.get(f"/api/orgs/999999/secrets/{global_name}"))["repo_id"] == 0
        registries = json_of(http.get("/api/orgs/999999/registries"))
        assert registries and {r["org_id"] for r in registries} == {0}


def test_an_activated_repository_has_woodpeckers_defaults(sandbox: Sandbox) -> None:
    # Real (activating acme/app on the forge fake): the lists never set are null, the cancel events are
    # the server's default (push, pull_request).
    with admin(sandbox) as http:
        listed = json_of(http.get("/api/user/repos", params={"all": "true"}))
        legacy = next(r for r in listed if r["forge_remote_id"] == "1007")
        repo = json_of(http.post("/api/repos", params={"forge_remote_id": "1007"}))
    # Never activated: the forge's repository as Woodpecker's model holds it, nothing of Woodpecker's own.
    assert "id" not in legacy and "timeout" not in legacy
    assert (legacy["visibility"], legacy["require_approval"], legacy["allow_pr"]) == ("", "", False)
    for key in ("approval_allowed_users", "cancel_previous_pipeline_events", "netrc_trusted"):
        assert legacy[key] is None, key
    assert (repo["approval_allowed_users"], repo["netrc_trusted"]) == (None, None)
    assert repo["cancel_previous_pipeline_events"] == ["push", "pull_request"]
    assert (repo["visibility"], repo["require_approval"], repo["timeout"], repo["allow_pr"]) == (
        "public",
        "forks",
        60,
        True,
    )


def test_a_manual_pipeline_of_a_repository_without_its_owner_is_500(sandbox: Sandbox) -> None:
    # Real: the owner who activated root/secret-sauce deleted, the trigger answers 500, empty (restart 404,
    # branches 404), until repair_repository makes the caller the owner.
    with admin(sandbox) as http:
        owner = sandbox.world.repos[1].user_id
        sandbox.world.repos[1].user_id = 999
        response = http.post("/api/repos/1/pipelines", json={"branch": "main"})
        assert (response.status_code, response.content) == (500, b"")
        assert http.post("/api/repos/1/repair").status_code == 204
        assert sandbox.world.repos[1].user_id == sandbox.world.user_by_login("ada", 1).id
        assert http.post("/api/repos/1/pipelines", json={"branch": "main"}).status_code == 200
    assert owner


def test_deleting_a_missing_organization_deletes_every_secret_outside_an_organization(
    sandbox: Sandbox,
) -> None:
    # Real (run by hand): DELETE /api/orgs/999999 answered 404 with an empty body, and the global and
    # repository secrets were gone, the organization's secrets and every registry left. DeleteOrg calls
    # orgDelete(0) for the empty org: the secrets with org_id 0 go, outside a transaction, then no org
    # row 0 is found to delete.
    kept = {k: s for k, s in sandbox.world.secrets.items() if s.org_id != 0}
    assert kept and len(kept) < len(sandbox.world.secrets)
    registries = dict(sandbox.world.registries)
    with admin(sandbox) as http:
        assert http.delete("/api/orgs/999999").status_code == 404
    assert sandbox.world.secrets == kept and sandbox.world.registries == registries
