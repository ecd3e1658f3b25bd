"""Planning Woodpecker requests from validated arguments: paths, query, bodies, scope dispatch and merges."""

from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.arguments import ArgumentError, validate
from domain.woodpecker import requests
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.catalogue.agents import merge_agent, org_agents
from domain.woodpecker.catalogue.forges import merge_forge
from domain.woodpecker.catalogue.users import merge_user
from domain.woodpecker.reads import Probe
from domain.woodpecker.requests import Request, check, current_for_guard, plan
from tests.domain.test_arguments_fuzz import valid_arguments


def _plan(tool: str, args: dict[str, Any]) -> Request:
    spec = WOODPECKER_TOOLS.get(tool)
    return plan(spec, validate(spec, args))


# resolve's requests depend on what the pasted reference names, read first (ports/use_cases/tools.py);
# a tool without endpoints (validate_pipeline_config) sends nothing, so plans no request.
PLANNED = [t for t in WOODPECKER_TOOLS if t.name != "resolve" and t.endpoints]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_every_tool_plans_a_complete_escaped_request(data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(PLANNED), label="tool")
    args = validate(tool, data.draw(valid_arguments(tool), label="args"))
    request = plan(tool, args)
    assert request.method in ("GET", "POST", "PATCH", "DELETE")
    assert request.path.startswith("/api/") or request.path in ("/version", "/healthz")
    assert "{" not in request.path and "}" not in request.path
    assert "confirm_token" not in request.query and "confirm_token" not in (request.body or {})
    assert all(isinstance(v, str) for v in request.query.values())


PATH_STEPS = st.sampled_from([".", "..", "%2e%2e", "%2E.", "%252e%252e", "\u2025", "\uff0e\uff0e", "\u2024"])
NAMES_WITH_STEPS = st.builds(
    lambda head, step, tail, sep: sep.join(p for p in (head, step, tail) if p is not None),
    st.none() | st.text(min_size=1, max_size=8),
    PATH_STEPS | st.just(""),
    st.none() | st.text(min_size=1, max_size=8),
    st.sampled_from(["/", "\\", "%2F", "%5c"]),
)


@given(st.text(min_size=1, max_size=40) | NAMES_WITH_STEPS)
def test_a_segment_is_one_escaped_name_or_refused(value: str) -> None:
    if requests.is_path_step(value):
        with pytest.raises(ArgumentError, match="cannot be a path segment"):
            requests.segment(value)
        return
    seg = requests.segment(value)
    assert "/" not in seg and "?" not in seg and "#" not in seg
    assert unquote(seg) == value
    assert unquote(seg) not in ("", ".", "..")


@given(NAMES_WITH_STEPS)
def test_a_value_holding_a_dot_or_empty_segment_is_a_path_step(value: str) -> None:
    assert requests.is_path_step(value)


@pytest.mark.parametrize(
    ("tool", "args", "name"),
    [
        ("delete_secret", {"scope": "repository", "repo_id": 1, "name": ".."}, "name"),
        ("delete_secret", {"scope": "organization", "org_id": 5, "name": "."}, "name"),
        ("delete_registry", {"scope": "repository", "repo_id": 1, "address": ".."}, "address"),
        ("get_registry", {"scope": "global", "address": "ghcr.io/../x"}, "address"),
        ("lookup_organization", {"name": "../../agents/1"}, "name"),
        ("lookup_organization", {"name": "a//b"}, "name"),
        ("lookup_repository", {"full_name": "../.."}, "full_name"),
        ("get_user", {"login": "%2e%2e"}, "login"),
    ],
)
def test_dot_and_empty_segments_are_refused_by_name_before_the_schema(
    tool: str, args: dict[str, Any], name: str
) -> None:
    spec = WOODPECKER_TOOLS.get(tool)
    with pytest.raises(ArgumentError) as refused:
        requests.check_path_values(spec, args)
    assert refused.value.arguments == (name,)
    assert f"{name} must not be '.', '..' or empty" in str(refused.value)


def test_the_path_parameters_are_the_string_arguments_a_path_names() -> None:
    found = {t.name: requests.path_params(t) for t in WOODPECKER_TOOLS if requests.path_params(t)}
    assert found == {
        "lookup_repository": ("full_name",),
        **dict.fromkeys(("get_secret", "create_secret", "update_secret", "delete_secret"), ("name",)),
        **dict.fromkeys(("get_registry", "update_registry", "delete_registry"), ("address",)),
        "lookup_organization": ("name",),
        **dict.fromkeys(("get_user", "create_user", "update_user", "delete_user"), ("login",)),
    }


def test_paging_is_sent_as_page_and_camel_case_per_page() -> None:
    r = _plan("list_pipelines", {"repo_id": 3, "page": 2, "per_page": 10, "branch": "main", "event": "push"})
    assert r == Request(
        "GET", "/api/repos/3/pipelines", {"page": "2", "perPage": "10", "branch": "main", "event": "push"}
    )


def test_list_repositories_dispatches_on_scope() -> None:
    assert _plan("list_repositories", {}) == Request("GET", "/api/user/repos", {})
    assert _plan("list_repositories", {"include_inactive": True, "name": "web"}) == Request(
        "GET", "/api/user/repos", {"all": "true", "name": "web"}
    )
    assert _plan("list_repositories", {"scope": "instance", "page": 3}) == Request(
        "GET", "/api/repos", {"page": "3", "perPage": "50"}
    )


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({"scope": "repository", "repo_id": 4}, "/api/repos/4/secrets"),
        ({"scope": "organization", "org_id": 9}, "/api/orgs/9/secrets"),
        ({"scope": "global"}, "/api/secrets"),
    ],
)
def test_secrets_dispatch_on_scope(args: dict[str, Any], path: str) -> None:
    assert _plan("list_secrets", args).path == path


def test_a_registry_address_travels_as_one_escaped_segment() -> None:
    r = _plan(
        "get_registry", {"scope": "organization", "org_id": 2, "address": "registry.example.org:5000/team"}
    )
    assert r.path == "/api/orgs/2/registries/registry.example.org%3A5000%2Fteam"


def test_lookups_keep_the_slash_of_a_full_name() -> None:
    assert (
        _plan("lookup_repository", {"full_name": "acme/web.site"}).path == "/api/repos/lookup/acme/web.site"
    )
    assert _plan("lookup_organization", {"name": "group/sub"}).path == "/api/orgs/lookup/group/sub"


def test_update_repository_nests_only_the_trust_flags_that_were_passed() -> None:
    r = _plan("update_repository", {"repo_id": 5, "trusted_network": True, "timeout": 30})
    assert r == Request("PATCH", "/api/repos/5", {}, {"timeout": 30, "trusted": {"network": True}})


def test_set_log_level_sends_the_dashed_body_key() -> None:
    assert _plan("set_log_level", {"level": "debug"}).body == {"log-level": "debug"}


def test_delete_repository_removes_rather_than_deactivates() -> None:
    assert _plan("delete_repository", {"repo_id": 8}) == Request("DELETE", "/api/repos/8", {"remove": "true"})


def test_the_feed_asks_for_the_latest_pipeline_per_repository() -> None:
    assert _plan("get_pipeline_feed", {}).query == {"latest": "true"}


def test_create_cron_always_enables_the_job_and_defaults_to_utc() -> None:
    body = _plan("create_cron", {"repo_id": 1, "name": "nightly", "schedule": "0 3 * * *"}).body
    assert body == {"name": "nightly", "schedule": "0 3 * * *", "timezone": "UTC", "enabled": True}


def test_restart_sends_only_event_and_deploy_to_as_query() -> None:
    assert _plan("restart_pipeline", {"repo_id": 1, "number": 4}) == Request(
        "POST", "/api/repos/1/pipelines/4"
    )
    r = _plan("restart_pipeline", {"repo_id": 1, "number": 4, "event": "deployment", "deploy_to": "prod"})
    assert r.query == {"event": "deployment", "deploy_to": "prod"} and r.body is None


def test_move_sends_the_target_as_query() -> None:
    assert _plan("move_repository", {"repo_id": 2, "to": "acme/new"}) == Request(
        "POST", "/api/repos/2/move", {"to": "acme/new"}
    )


def test_agents_dispatch_on_org_id() -> None:
    assert _plan("create_agent", {"name": "a1"}) == Request(
        "POST", "/api/agents", {}, {"name": "a1", "no_schedule": False}
    )
    assert _plan("delete_agent", {"agent_id": 3, "org_id": 7}).path == "/api/orgs/7/agents/3"


def test_get_server_info_goes_to_the_root() -> None:
    r = _plan("get_server_info", {})
    assert r.path == "/version" and r.root


def test_activate_sends_the_forge_id_as_query_without_a_body() -> None:
    assert _plan("activate_repository", {"forge_remote_id": "123"}) == Request(
        "POST", "/api/repos", {"forge_remote_id": "123"}
    )


def test_get_user_always_names_its_forge() -> None:
    assert _plan("get_user", {"login": "bob", "forge_id": 2}).query == {"forge_id": "2"}


def test_the_guard_reads_the_current_object_only_for_a_comparing_field() -> None:
    repo = WOODPECKER_TOOLS.get("update_repository")
    assert current_for_guard(repo, {"repo_id": 1, "trusted_network": True}) is None
    assert current_for_guard(repo, {"repo_id": 1, "visibility": "public"}) == Request("GET", "/api/repos/1")
    secret = WOODPECKER_TOOLS.get("update_secret")
    assert current_for_guard(secret, {"scope": "global", "name": "s", "value": "v"}) is None
    assert current_for_guard(secret, {"scope": "organization", "org_id": 3, "name": "s", "images": []}) == {
        "secret": Request("GET", "/api/orgs/3/secrets/s")
    }
    # guard.md §1c: manual or cron on a repository secret reads its repository's approval settings too.
    reads = current_for_guard(secret, {"scope": "repository", "repo_id": 4, "name": "s", "events": ["cron"]})
    assert reads == {
        "secret": Request("GET", "/api/repos/4/secrets/s"),
        "repo": Probe(Request("GET", "/api/repos/4")),
    }
    no_repo = current_for_guard(
        secret, {"scope": "repository", "repo_id": 4, "name": "s", "events": ["push"]}
    )
    assert no_repo is not None and "repo" not in no_repo
    assert current_for_guard(WOODPECKER_TOOLS.get("delete_forge"), {"forge_id": 1}) is None


def test_an_update_with_nothing_to_change_is_refused() -> None:
    for tool, args in [
        ("update_repository", {"repo_id": 1}),
        ("update_user", {"login": "a", "forge_id": 1}),
        ("update_agent", {"agent_id": 1, "org_id": 2}),
        ("update_forge", {"forge_id": 1}),
        ("update_secret", {"scope": "global", "name": "s"}),
        ("update_registry", {"scope": "global", "address": "r.io"}),
        ("update_cron", {"repo_id": 1, "cron_id": 2}),
    ]:
        with pytest.raises(ArgumentError, match="nothing to change"):
            check(WOODPECKER_TOOLS.get(tool), args)


def test_custom_labels_are_refused_before_anything_is_sent() -> None:
    for tool, args in [("create_agent", {"name": "a"}), ("update_agent", {"agent_id": 1, "name": "b"})]:
        with pytest.raises(ArgumentError, match="custom_labels"):
            check(WOODPECKER_TOOLS.get(tool), {**args, "custom_labels": {"gpu": "yes"}})


STORED_USER = {
    "id": 4,
    "login": "carol",
    "email": "carol@example.org",
    "avatar_url": "https://avatars.example.org/c",
    "forge_id": 2,
    "forge_remote_id": "77",
    "org_id": 5,
}


def test_a_partial_user_update_keeps_every_other_field() -> None:
    body = merge_user(STORED_USER, {"login": "carol", "forge_id": 2, "admin": True})
    assert body == {
        "login": "carol",
        "email": "carol@example.org",
        "avatar_url": "https://avatars.example.org/c",
        "admin": True,
        "forge_id": 2,
        "forge_remote_id": "77",
    }
    body = merge_user({**STORED_USER, "admin": True}, {"login": "carol", "forge_id": 2, "email": "c@x.org"})
    assert body["admin"] is True and body["email"] == "c@x.org"


def test_a_partial_agent_update_sends_both_overwritten_fields() -> None:
    stored = {"id": 3, "name": "runner-1", "no_schedule": True, "token": "t"}
    assert merge_agent(stored, {"agent_id": 3, "name": "runner-2"}) == {
        "name": "runner-2",
        "no_schedule": True,
    }
    assert merge_agent(stored, {"agent_id": 3, "no_schedule": False}) == {
        "name": "runner-1",
        "no_schedule": False,
    }


@pytest.mark.parametrize("flag", [None, "yes", 1, "missing"])
def test_a_rename_of_an_agent_whose_record_does_not_say_it_is_drained_sends_nothing(flag: object) -> None:
    # Review finding: a stored record without a boolean no_schedule once merged as false, so a rename put
    # a drained agent back in service unasked (the guard asks only when the call names no_schedule).
    stored: dict[str, object] = {"id": 3, "name": "runner-1"}
    if flag != "missing":
        stored["no_schedule"] = flag
    with pytest.raises(ValueError, match="no_schedule"):
        merge_agent(stored, {"agent_id": 3, "name": "runner-2"})
    assert (
        merge_agent(stored, {"agent_id": 3, "name": "runner-2", "no_schedule": True})["no_schedule"] is True
    )


def test_a_partial_forge_update_keeps_options_and_never_blanks_the_secret() -> None:
    stored = {
        "id": 1,
        "type": "gitea",
        "url": "https://git.example.org",
        "client": "abc",
        "skip_verify": False,
        "oauth_host": "",
        "additional_options": {"merge-ref": True},
    }
    body = merge_forge(stored, {"forge_id": 1, "skip_verify": True})
    assert body == {
        "type": "gitea",
        "url": "https://git.example.org",
        "client": "abc",
        "oauth_host": "",
        "skip_verify": True,
        "additional_options": {"merge-ref": True},
    }
    body = merge_forge(stored, {"forge_id": 1, "oauth_client_secret": "new"})
    assert body["oauth_client_secret"] == "new"


def test_merging_over_something_that_is_not_a_record_is_an_error() -> None:
    with pytest.raises(ValueError):
        merge_user(None, {"login": "a", "forge_id": 1})


def test_org_agents_are_walked_in_pages_of_fifty() -> None:
    assert org_agents(7, 3) == Request("GET", "/api/orgs/7/agents", {"page": "3", "perPage": "50"})
