"""guard.md §1b's validation: refused before anything is asked or sent, with an error that names the argument."""

from typing import Any

import pytest

from domain.arguments import ArgumentError, validate
from domain.woodpecker import requests
from domain.woodpecker.catalogue import WOODPECKER_TOOLS


def _refused(tool: str, args: dict[str, Any]) -> ArgumentError:
    with pytest.raises(ArgumentError) as caught:
        validate(WOODPECKER_TOOLS.get(tool), args)
    return caught.value


@pytest.mark.parametrize(
    "name",
    [
        "CI_COMMIT_SHA",
        "CI_REPO_CLONE_URL",
        "DRONE_COMMIT",
        "WOODPECKER_TOKEN",
        "PLUGIN_SETTINGS",
        "PATH",
        "HOME",
        "SHELL",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "GIT_SSH_COMMAND",
    ],
)
def test_a_trigger_variable_may_not_override_woodpeckers_own(name: str) -> None:
    error = _refused("trigger_pipeline", {"repo_id": 1, "branch": "main", "variables": {name: "x"}})
    assert error.arguments == ("variables",)
    assert "variables" in str(error) and name in str(error)
    assert "Woodpecker's own" in str(error)


@pytest.mark.parametrize("name", ["ci_commit_sha", "Path", "Ld_Preload", "woodpecker_x", "git_dir", "Home"])
def test_a_trigger_variable_may_not_override_woodpeckers_own_in_another_case(name: str) -> None:
    """A Windows agent's environment ignores case: `ci_commit_sha` there is CI_COMMIT_SHA."""
    error = _refused("trigger_pipeline", {"repo_id": 1, "branch": "main", "variables": {name: "x"}})
    assert error.arguments == ("variables",)
    assert name in str(error) and name.upper() in str(error) and "Windows" in str(error)
    assert "Woodpecker's own" in str(error)


@pytest.mark.parametrize("name", ["DEPLOY_ENV", "PATHS", "MY_PATH", "HOMER", "ci", "paths", "_X", "CIX"])
def test_ordinary_variables_pass(name: str) -> None:
    args = validate(
        WOODPECKER_TOOLS.get("trigger_pipeline"), {"repo_id": 1, "branch": "main", "variables": {name: "x"}}
    )
    assert args["variables"] == {name: "x"}


@pytest.mark.parametrize(
    "branch",
    ["-rf", "a..b", "a@{1}", "a//b", "trailing/", "x.lock", "dot.", "a b", "a~1", "a^", "a:b", "#1", "%2e"],
)
def test_a_branch_that_git_would_refuse_is_refused(branch: str) -> None:
    assert _refused("trigger_pipeline", {"repo_id": 1, "branch": branch}).arguments == ("branch",)


@pytest.mark.parametrize("branch", ["main", "feature/login", "release/1.x", "v2.0", "renovate/lock-file"])
def test_an_ordinary_branch_passes(branch: str) -> None:
    assert validate(WOODPECKER_TOOLS.get("trigger_pipeline"), {"repo_id": 1, "branch": branch})


@pytest.mark.parametrize("target", ["prod?x=1", "a b", "prod&event=push", "a=b", "x%2f", ""])
def test_deploy_to_is_a_plain_name(target: str) -> None:
    args = {"repo_id": 1, "number": 1, "event": "deployment", "deploy_to": target}
    assert _refused("restart_pipeline", args).arguments == ("deploy_to",)


def test_a_plain_deploy_to_passes() -> None:
    args = {"repo_id": 1, "number": 1, "event": "deployment", "deploy_to": "eu/production-2"}
    assert validate(WOODPECKER_TOOLS.get("restart_pipeline"), args)["deploy_to"] == "eu/production-2"


@pytest.mark.parametrize(("tool", "name"), [("lookup_repository", "full_name"), ("move_repository", "to")])
def test_gitlab_subgroup_repositories_are_accepted(tool: str, name: str) -> None:
    args = {name: "group/sub/project"} | ({"repo_id": 1} if tool == "move_repository" else {})
    assert validate(WOODPECKER_TOOLS.get(tool), args)[name] == "group/sub/project"


@pytest.mark.parametrize(
    "value", ["../x", "a/..", "a/../b", "./a", "a/.", "a/./b", "a//b", "/a/b", "a/b/", "single"]
)
@pytest.mark.parametrize(("tool", "name"), [("lookup_repository", "full_name"), ("move_repository", "to")])
def test_a_dot_or_empty_segment_is_still_refused(tool: str, name: str, value: str) -> None:
    args = {name: value} | ({"repo_id": 1} if tool == "move_repository" else {})
    assert _refused(tool, args).arguments == (name,)


def test_a_subgroup_lookup_goes_out_one_escaped_segment_per_part() -> None:
    tool = WOODPECKER_TOOLS.get("lookup_repository")
    planned = requests.plan(tool, validate(tool, {"full_name": "group/sub/project"}))
    assert planned.path == "/api/repos/lookup/group/sub/project"


def test_a_bitbucket_uuid_remote_id_is_accepted_and_sent_as_query() -> None:
    tool = WOODPECKER_TOOLS.get("activate_repository")
    uuid = "{3c0ea4e6-7b0a-4d4f-9a57-5a4b3f1e2d10}"
    planned = requests.plan(tool, validate(tool, {"forge_remote_id": uuid}))
    assert (planned.method, planned.path, dict(planned.query)) == (
        "POST",
        "/api/repos",
        {"forge_remote_id": uuid},
    )


@pytest.mark.parametrize("value", [".", "..", "a/b", "a b", "{x}?y"])
def test_a_remote_id_that_is_a_dot_segment_or_has_other_characters_is_refused(value: str) -> None:
    assert _refused("activate_repository", {"forge_remote_id": value}).arguments == ("forge_remote_id",)
