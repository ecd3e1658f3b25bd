"""Point 7 of API-NOTES §7: numbering, restart, approval, refusals while busy, crons, overwrite-on-PATCH, moves."""

import time

from sandbox.server import Sandbox
from tests.sandbox._client import admin, client, json_of, user


def test_new_pipelines_take_the_next_number_of_their_repository(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        web = json_of(
            http.post("/api/repos/1/pipelines", json={"branch": "develop", "variables": {"A": "1"}})
        )
        api = json_of(http.post("/api/repos/2/pipelines", json={"branch": "main"}))
        again = json_of(http.post("/api/repos/1/pipelines", json={"branch": "main"}))
    assert (web["number"], api["number"], again["number"]) == (14, 3, 15)
    assert web["event"] == "manual" and web["status"] == "pending"
    assert web["message"] == "MANUAL PIPELINE @ develop" and web["variables"] == {"A": "1"}
    assert web["author"] == sandbox.admin_login


def test_restart_creates_a_new_number_whose_parent_is_the_old_one(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        first = json_of(http.post("/api/repos/1/pipelines/2"))
        second = json_of(http.post("/api/repos/1/pipelines/14", params={"DEBUG": "1"}))
        old = json_of(http.get("/api/repos/1/pipelines/2"))
    assert (first["number"], first["parent"], first["rerun_count"]) == (14, 2, 1)
    assert (second["number"], second["parent"], second["rerun_count"]) == (15, 14, 2)
    assert second["workflows"][0]["environ"] == {"DEBUG": "1"}  # extra query keys become variables
    assert old["status"] == "failure"  # the original is left alone


def test_restart_as_a_deployment_sets_the_target(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        deployed = json_of(
            http.post("/api/repos/1/pipelines/1", params={"event": "deployment", "deploy_to": "prod"})
        )
    assert (deployed["event"], deployed["deploy_to"]) == ("deployment", "prod")


def test_approve_starts_a_blocked_pipeline_once(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        approved = http.post("/api/repos/1/pipelines/11/approve")
        again = http.post("/api/repos/1/pipelines/11/approve")
    body = json_of(approved)
    assert (body["status"], body["reviewed_by"]) == ("pending", sandbox.user_login)
    assert all(s["state"] == "pending" for w in body["workflows"] for s in w["children"])
    assert (again.status_code, again.text) == (400, "cannot approve a pipeline with status pending")


def test_decline_only_works_on_a_blocked_pipeline(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        declined = json_of(http.post("/api/repos/1/pipelines/11/decline"))
        again = http.post("/api/repos/1/pipelines/11/decline")
    assert declined["status"] == "declined"
    assert {s["state"] for w in declined["workflows"] for s in w["children"]} == {"declined"}
    assert (again.status_code, again.content) == (500, b"")


def test_cancel_kills_a_running_pipeline_and_clears_its_tasks(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert http.post("/api/repos/1/pipelines/13/cancel").status_code == 204
        killed = json_of(http.get("/api/repos/1/pipelines/13"))
        pending = http.post("/api/repos/1/pipelines/12/cancel")
        canceled = json_of(http.get("/api/repos/1/pipelines/12"))
        assert http.get("/api/agents/2/tasks").content == b"null"
    assert killed["status"] == "killed" and killed["cancel_info"] == {"canceled_by_user": sandbox.admin_login}
    assert pending.status_code == 204 and canceled["status"] == "canceled"


def test_a_busy_pipeline_can_be_deleted_once_it_is_finished(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert http.delete("/api/repos/1/pipelines/13").status_code == 422
        assert http.delete("/api/repos/1/logs/13").status_code == 422
        http.post("/api/repos/1/pipelines/13/cancel")
        assert http.delete("/api/repos/1/logs/13").status_code == 204
        assert http.delete("/api/repos/1/pipelines/13").status_code == 204
        assert http.get("/api/repos/1/pipelines/13").status_code == 404
        # Woodpecker numbers with MAX(number)+1, so deleting the newest pipeline frees its number.
        assert json_of(http.post("/api/repos/1/pipelines", json={"branch": "main"}))["number"] == 13


def test_a_cron_created_without_enabled_is_disabled(sandbox: Sandbox) -> None:
    before = int(time.time())
    with admin(sandbox) as http:
        off = json_of(http.post("/api/repos/1/cron", json={"name": "off", "schedule": "*/5 * * * *"}))
        on = json_of(
            http.post("/api/repos/1/cron", json={"name": "on", "schedule": "@hourly", "enabled": True})
        )
    assert off["enabled"] is False and on["enabled"] is True
    assert off["timezone"] == "UTC" and off["creator_id"] == 1
    assert before < off["next_exec"] <= before + 5 * 60 + 60
    assert off["next_exec"] % 300 == 0
    assert on["next_exec"] % 3600 == 0


def test_cron_next_exec_follows_the_time_zone(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        utc = json_of(http.post("/api/repos/1/cron", json={"name": "utc", "schedule": "0 12 * * *"}))
        tokyo = json_of(
            http.post(
                "/api/repos/1/cron",
                json={"name": "tokyo", "schedule": "0 12 * * *", "timezone": "Asia/Tokyo"},
            )
        )
    assert utc["next_exec"] % 86400 == 12 * 3600
    assert tokyo["next_exec"] % 86400 == 3 * 3600  # noon in Tokyo is 03:00 UTC


def test_patching_a_cron_recomputes_next_exec_and_records_the_caller(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        patched = json_of(http.patch("/api/repos/1/cron/1", json={"schedule": "30 1 * * *", "name": "  "}))
    assert patched["schedule"] == "30 1 * * *"
    assert patched["name"] == "nightly"  # blank strings are ignored
    assert patched["next_exec"] % 86400 == 5400
    assert patched["creator_id"] == 2


def test_running_a_cron_creates_a_cron_pipeline_named_after_it(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        pipeline = json_of(http.post("/api/repos/1/cron/1"))
    assert (pipeline["event"], pipeline["cron"], pipeline["message"], pipeline["sender"]) == (
        "cron",
        "nightly",
        "nightly",
        "nightly",
    )
    assert pipeline["number"] == 14


def test_secret_patch_replaces_lists_and_ignores_empty_values_and_names(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        patched = json_of(
            http.patch(
                "/api/repos/1/secrets/docker_password",
                json={"name": "renamed", "value": "", "events": ["tag", "push", "manual"], "images": []},
            )
        )
    assert patched["name"] == "docker_password"
    assert patched["events"] == ["manual", "push", "tag"]
    assert patched["images"] == []
    stored = next(s for s in sandbox.world.secrets.values() if s.name == "docker_password" and s.repo_id == 1)
    assert stored.value == "value-of-docker_password"


def test_patch_user_overwrites_every_field_it_was_not_given(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        current = json_of(http.get("/api/users/bob"))
        patched = json_of(
            http.patch("/api/users/bob", json={"forge_id": 1, "forge_remote_id": "102", "login": "bob"})
        )
        stored = json_of(http.get("/api/users/bob"))
    assert current["email"] == "bob@example.org"
    assert patched["email"] == "" and stored["email"] == "" and stored["avatar_url"] == ""


def test_patch_user_without_a_matching_remote_id_changes_nothing_and_echoes_a_ghost(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        echo = json_of(
            http.patch("/api/users/bob", json={"login": "bob", "email": "new@example.org", "admin": True})
        )
        stored = json_of(http.get("/api/users/bob"))
    assert echo["id"] == 0 and echo["admin"] is True
    assert "admin" not in stored and stored["email"] == "bob@example.org"


def test_patch_user_can_grant_admin_with_the_full_record(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        current = json_of(http.get("/api/users/bob"))
        json_of(http.patch("/api/users/bob", json={**current, "admin": True}))
    with user(sandbox) as bob:
        assert json_of(bob.get("/api/user"))["admin"] is True
        assert bob.get("/api/users").status_code == 200


def test_a_second_pre_created_user_collides_on_the_remote_id(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        first = http.post("/api/users", json={"login": "carol", "admin": True})
        second = http.post("/api/users", json={"login": "dave"})
    body = json_of(first)
    assert (body["forge_remote_id"], body["forge_id"]) == ("0", 1)
    assert "admin" not in body  # the POST ignores admin
    assert second.status_code == 500


def test_patch_agent_overwrites_name_and_no_schedule(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        patched = json_of(http.patch("/api/agents/3", json={}))
    assert (patched["name"], patched["no_schedule"]) == ("", False)


def test_patch_forge_overwrites_everything_but_an_empty_secret(sandbox: Sandbox) -> None:
    secret_before = sandbox.world.forges[1].oauth_client_secret
    with admin(sandbox) as http:
        patched = json_of(
            http.patch("/api/forges/1", json={"type": "gitea", "url": "https://forge.example.org"})
        )
    assert "client" not in patched  # blanked, and omitempty
    assert sandbox.world.forges[1].oauth_client_secret == secret_before


def test_repository_registry_writes_echo_the_request_not_the_stored_row(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        created = json_of(
            http.post(
                "/api/repos/1/registries", json={"address": "r.example.org", "username": "u", "password": "p"}
            )
        )
        stored = json_of(http.get("/api/repos/1/registries/r.example.org"))
        patched = json_of(http.patch("/api/repos/1/registries/r.example.org", json={"username": "u2"}))
        org = json_of(
            http.post(
                "/api/orgs/4/registries", json={"address": "o.example.org", "username": "u", "password": "p"}
            )
        )
    assert (created["id"], created["repo_id"], created["password"]) == (0, 0, "")
    assert stored["id"] != 0 and stored["repo_id"] == 1
    assert (patched["id"], patched["address"], patched["username"]) == (0, "", "u2")
    assert org["id"] != 0 and org["org_id"] == 4


def test_global_registry_patch_with_an_address_renames_it(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        renamed = json_of(http.patch("/api/registries/quay.io", json={"address": "quay.example.org"}))
        gone = http.get("/api/registries/quay.io")
    assert renamed["address"] == "quay.example.org"
    assert gone.status_code == 404


def test_deactivating_keeps_the_repository_readable_and_remove_purges_it(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        deactivated = http.delete("/api/repos/1")
        assert deactivated.status_code == 200 and json_of(deactivated)["active"] is False
        assert json_of(http.get("/api/repos/1"))["active"] is False
        assert json_of(http.get("/api/repos/lookup/acme/web"))["id"] == 1
        assert http.get("/api/repos/1/branches").status_code == 404
        assert len(json_of(http.get("/api/repos/1/pipelines"))) == 13  # history kept
        removed = http.delete("/api/repos/2", params={"remove": "true"})
        assert removed.status_code == 200 and json_of(removed)["id"] == 2
        assert http.get("/api/repos/2").status_code == 404


def test_activation_lists_and_then_activates_a_forge_repository(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        listed = json_of(http.get("/api/user/repos"))
        everything = json_of(http.get("/api/user/repos", params={"all": "true"}))
        assert "acme/legacy" not in [r["full_name"] for r in listed]
        legacy = next(r for r in everything if r["full_name"] == "acme/legacy")
        assert ("id" not in legacy, legacy["forge_remote_id"], legacy["active"]) == (True, "1007", False)
        activated = json_of(http.post("/api/repos", params={"forge_remote_id": "1007"}))
        assert activated["active"] is True and activated["id"] > 0
        assert "acme/legacy" in [r["full_name"] for r in json_of(http.get("/api/user/repos"))]
        again = http.post("/api/repos", params={"forge_remote_id": "1007"})
    assert again.status_code == 409


def test_a_deactivated_repository_can_be_activated_again(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        reactivated = json_of(http.post("/api/repos", params={"forge_remote_id": "1005"}))
    assert (reactivated["id"], reactivated["active"]) == (5, True)


def test_a_move_renames_and_leaves_a_redirection(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert http.post("/api/repos/1/move", params={"to": "acme/website"}).status_code == 204
        assert json_of(http.get("/api/repos/1"))["full_name"] == "acme/website"
        assert json_of(http.get("/api/repos/lookup/acme/web"))["full_name"] == "acme/website"


def test_on_311_a_move_happens_and_then_answers_500(sandbox_311: Sandbox) -> None:
    with admin(sandbox_311) as http:
        response = http.post("/api/repos/1/move", params={"to": "acme/website"})
        after = json_of(http.get("/api/repos/1"))
        version = json_of(http.get("/version"))
    assert (response.status_code, response.content) == (500, b"")
    assert after["full_name"] == "acme/website"
    assert version["version"] == "3.11.0"


def test_chown_makes_the_caller_the_owner(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert http.post("/api/repos/5/chown").status_code == 200
    assert sandbox.world.repos[5].user_id == 1


def test_log_level_is_echoed_and_remembered(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert json_of(http.post("/api/log-level", json={"log-level": "disabled"})) == {
            "log-level": "disabled"
        }
        assert json_of(http.get("/api/log-level")) == {"log-level": "disabled"}


def test_pause_and_resume_flip_the_queue(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        http.post("/api/queue/pause")
        assert json_of(http.get("/api/queue/info"))["paused"] is True
        http.post("/api/queue/resume")
        assert json_of(http.get("/api/queue/info"))["paused"] is False


def test_deleting_an_organization_takes_its_secrets_and_its_repositories_with_their_pipelines(
    sandbox: Sandbox,
) -> None:
    # orgDelete (server/store/datastore/org.go, 3.17.0): the org's secrets, then every repository
    # record of the org purged with its pipelines; the org's registries and agents are not deleted.
    world = sandbox.world
    repos = {r.id for r in world.repos.values() if r.org_id == 4}
    registries = {k for k, r in world.registries.items() if r.org_id == 4}
    assert repos and registries and 3 in world.agents
    with admin(sandbox) as http:
        assert http.delete("/api/orgs/4").status_code == 204
        # A missing org answers as the empty one (docs/adr/0057).
        assert json_of(http.get("/api/orgs/4")) == {"name": "", "is_user": False}
        assert all(http.get(f"/api/repos/{repo_id}").status_code == 404 for repo_id in repos)
    assert not [s for s in world.secrets.values() if s.org_id == 4 or s.repo_id in repos]
    assert not [p for p in world.pipelines.values() if p.repo_id in repos]
    assert registries <= set(world.registries) and 3 in world.agents


def test_a_rotated_token_replaces_the_old_ones(sandbox: Sandbox) -> None:
    with user(sandbox) as http:
        new_token = http.delete("/api/user/token").text
        assert http.get("/api/user").status_code == 401
    with client(sandbox, new_token) as http:
        assert json_of(http.get("/api/user"))["login"] == sandbox.user_login
    sandbox.reset()
    with user(sandbox) as http:
        assert http.get("/api/user").status_code == 200


def test_a_move_into_a_gitlab_subgroup_is_followed(sandbox: Sandbox) -> None:
    # Woodpecker cuts `to` at its first slash (model.ParseRepo), so the rest becomes the name.
    with admin(sandbox) as http:
        assert http.post("/api/repos/1/move", params={"to": "acme/platform/web"}).status_code == 204
        moved = json_of(http.get("/api/repos/1"))
        found = json_of(http.get("/api/repos/lookup/acme/platform/web"))
    assert (moved["full_name"], found["id"]) == ("acme/platform/web", 1)


# ------------------------------------------------------------ what guard.md §1b reads and relies on


def test_a_declined_or_cancelled_fork_pull_request_restarts_without_an_approval_on_record(
    sandbox: Sandbox,
) -> None:
    # Woodpecker refuses only blocked pipelines; the guard, not the server, has to catch these.
    with admin(sandbox) as http:
        declined = json_of(http.get("/api/repos/1/pipelines/7"))
        assert http.post("/api/repos/1/pipelines/11/cancel").status_code == 204
        cancelled = json_of(http.get("/api/repos/1/pipelines/11"))
        rerun_declined = http.post("/api/repos/1/pipelines/7")
        rerun_cancelled = http.post("/api/repos/1/pipelines/11")
        killed = http.post("/api/repos/1/pipelines/3")
    assert (declined["status"], declined["event"], declined["from_fork"]) == (
        "declined",
        "pull_request",
        True,
    )
    assert (cancelled["status"], cancelled["reviewed_by"], cancelled["from_fork"]) == ("killed", "", True)
    assert [r.status_code for r in (rerun_declined, rerun_cancelled, killed)] == [200, 200, 200]


def test_a_deployment_restart_needs_allow_deploy(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        refused = http.post("/api/repos/2/pipelines/1", params={"event": "deployment"})
        assert http.patch("/api/repos/2", json={"allow_deploy": True}).status_code == 200
        allowed = http.post("/api/repos/2/pipelines/1", params={"event": "deployment"})
    assert (refused.status_code, allowed.status_code) == (403, 200)


def test_approval_allowed_users_are_stored_and_shown(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        patched = json_of(http.patch("/api/repos/1", json={"approval_allowed_users": ["renovate"]}))
        read = json_of(http.get("/api/repos/1"))
    assert patched["approval_allowed_users"] == read["approval_allowed_users"] == ["renovate"]


def test_the_forge_list_tells_a_stored_inactive_repository_from_a_new_one(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        listed = {
            r["forge_remote_id"]: r for r in json_of(http.get("/api/user/repos", params={"all": "true"}))
        }
    assert (listed["1005"]["id"], listed["1005"]["active"]) == (5, False)  # known: reactivation
    assert "id" not in listed["1007"] and listed["1007"]["active"] is False  # never activated
