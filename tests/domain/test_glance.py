"""The lists a person starts from keep the fields a person acts on, in the text and the structured
content alike, and their summaries count what needs a look by id (docs/adr/0070)."""

import json
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from domain.arguments import validate
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import output_schema, shape
from domain.woodpecker.results.glance import SUBJECT, iso

# A Woodpecker 3.17 pipeline as list_pipelines answers it, every field set.
PIPELINE: dict[str, Any] = {
    "id": 602,
    "number": 2,
    "author": "ada",
    "parent": 0,
    "event": "push",
    "event_reason": None,
    "status": "failure",
    "errors": None,
    "created": 1760602000,
    "updated": 1760602125,
    "started": 1760602005,
    "finished": 1760602125,
    "deploy_to": "",
    "deploy_task": "",
    "commit": "9f73867a09b2e54fd2b9800d5a46ed91d0bb4ecf",
    "branch": "main",
    "rerun_count": 0,
    "ref": "refs/heads/main",
    "refspec": "",
    "author_avatar": "https://forge.example.org/avatars/ada",
    "forge_url": "https://forge.example.org/bench/logs/commit/9f73867a09b2e54fd2b9800d5a46ed91d0bb4ecf",
    "reviewed_by": "",
    "reviewed": 0,
    "version": "3.17.0",
    "title": "",
    "message": "checkout: retry the payment once\n\nThe body of the message.",
    "timestamp": 1760601940,
    "sender": "ada",
    "author_email": "ada@example.org",
}


def _listed(tool_name: str, entries: list[Any], **args: Any) -> tuple[dict[str, Any], list[str]]:
    tool = WOODPECKER_TOOLS.get(tool_name)
    shaped = shape(tool, validate(tool, args), entries)
    jsonschema.Draft202012Validator(output_schema(tool)).validate(shaped.structured)
    return shaped.structured, shaped.text.splitlines()


def test_a_pipeline_keeps_what_a_person_acts_on_with_its_times_in_iso_8601_utc_beside_them() -> None:
    structured, lines = _listed("list_pipelines", [PIPELINE], repo_id=6)
    assert structured["pipelines"] == [
        {
            "number": 2,
            "status": "failure",
            "event": "push",
            "branch": "main",
            "commit": "9f73867a09b2e54fd2b9800d5a46ed91d0bb4ecf",
            "author": "ada",
            "subject": "checkout: retry the payment once",
            "created": 1760602000,
            "created_at": "2025-10-16T08:06:40Z",
            "started": 1760602005,
            "started_at": "2025-10-16T08:06:45Z",
            "finished": 1760602125,
            "finished_at": "2025-10-16T08:08:45Z",
        }
    ]
    # The text carries the same data, no field more or less (docs/adr/0022).
    assert json.loads(lines[2])["pipelines"] == structured["pipelines"]


def test_a_pull_request_keeps_its_ref_title_and_fork_and_a_pipeline_not_started_has_no_start() -> None:
    pull = PIPELINE | {
        "event": "pull_request",
        "ref": "refs/pull/42/head",
        "title": "Approve me " + "x" * 100,
        "from_fork": True,
        "started": 0,
        "finished": 0,
        "status": "blocked",
    }
    structured, _ = _listed("list_pipelines", [pull], repo_id=6)
    (entry,) = structured["pipelines"]
    assert entry["ref"] == "refs/pull/42/head" and entry["from_fork"] is True
    assert (
        len(entry["subject"]) == SUBJECT
        and entry["subject"].startswith("Approve me x")
        and entry["subject"][-1] == "…"
    )
    assert {"started", "started_at", "finished", "finished_at"}.isdisjoint(entry)


def test_a_repository_keeps_its_ids_and_its_latest_pipeline_at_a_glance() -> None:
    repo = {
        "id": 6,
        "forge_remote_id": "1006",
        "org_id": 6,
        "full_name": "bench/logs",
        "clone_url_ssh": "git@forge.example.org:bench/logs.git",
        "config_extension_endpoint": "",
        "trusted": {"network": False, "volumes": False, "security": False},
        "default_branch": "main",
        "active": True,
        "last_pipeline": PIPELINE,
    }
    inactive = {"forge_remote_id": "1007", "org_id": 0, "full_name": "acme/legacy", "active": False}
    structured, lines = _listed("list_repositories", [repo, inactive])
    assert structured["repositories"] == [
        {
            "id": 6,
            "full_name": "bench/logs",
            "forge_remote_id": "1006",
            "org_id": 6,
            "default_branch": "main",
            "active": True,
            "last_pipeline": {
                "number": 2,
                "status": "failure",
                "event": "push",
                "branch": "main",
                "created": 1760602000,
                "created_at": iso(1760602000),
                "started": 1760602005,
                "started_at": iso(1760602005),
                "finished": 1760602125,
                "finished_at": iso(1760602125),
            },
        },
        # Never activated: no id (an org_id of 0 is none), and what activate_repository takes.
        {"full_name": "acme/legacy", "forge_remote_id": "1007", "active": False},
    ]
    assert lines[1] == (
        "2 repositories of this account. Latest pipelines: 1 failed: pipeline 2 of repository 6. "
        "Every field of one: get_repository(repo_id)."
    )


def test_the_feed_says_which_pipelines_failed_are_blocked_or_run_by_their_ids() -> None:
    feed = [
        PIPELINE | {"repo_id": 3, "full_name": "umbrella/infra", "number": 12},
        PIPELINE | {"repo_id": 2, "full_name": "acme/api", "number": 2, "status": "blocked"},
        PIPELINE | {"repo_id": 1, "full_name": "acme/web", "number": 13, "status": "running"},
        PIPELINE | {"repo_id": 5, "full_name": "acme/docs", "number": 7, "status": "success"},
    ]
    structured, lines = _listed("get_pipeline_feed", feed)
    assert [(e["repo_id"], e["number"]) for e in structured["feed"]] == [(3, 12), (2, 2), (1, 13), (5, 7)]
    assert lines[1] == (
        "4 feed entries (latest pipeline per repository). 1 failed: pipeline 12 of repository 3; "
        "1 blocked (awaiting approval): pipeline 2 of repository 2; 1 running or pending: pipeline 13 of "
        "repository 1. Every field of one: get_pipeline(repo_id, number)."
    )


def test_a_killed_pipeline_is_said_as_killed_not_as_failed() -> None:
    # A cancel of a running pipeline leaves it "killed": the build did not fail, someone stopped it.
    listed = [
        PIPELINE | {"number": 3, "status": "killed"},
        PIPELINE | {"number": 2, "status": "failure"},
        PIPELINE | {"number": 1, "status": "error"},
    ]
    _, lines = _listed("list_pipelines", listed, repo_id=6)
    assert "2 failed: pipelines 2, 1; 1 killed: pipeline 3." in lines[1], lines[1]


def test_a_long_list_names_five_pipelines_of_a_status_and_counts_the_rest() -> None:
    failed = [PIPELINE | {"number": n} for n in range(9, 0, -1)]
    _, lines = _listed("list_pipelines", failed, repo_id=6)
    assert "9 failed: pipelines 9, 8, 7, 6, 5 and 4 more." in lines[1], lines[1]


PUSHED = st.text(min_size=1, max_size=40)
KNOWN = {"failure", "error", "killed", "blocked", "running", "pending"}


@given(PUSHED, PUSHED, PUSHED, PUSHED.filter(lambda s: s not in KNOWN))
def test_no_pushed_text_reaches_the_summary_line(branch: str, message: str, name: str, status: str) -> None:
    # Branch, message and repository name, and a status we do not know, stay in the data line: the
    # summary is the same words whatever they say.
    entry = PIPELINE | {"branch": branch, "message": message, "title": message, "status": status}
    feed = [entry | {"repo_id": 3, "full_name": name}, entry | {"repo_id": 4, "status": "failure"}]
    _, lines = _listed("get_pipeline_feed", feed)
    assert lines[1] == (
        "2 feed entries (latest pipeline per repository). 1 failed: pipeline 2 of repository 4. "
        "Every field of one: get_pipeline(repo_id, number)."
    )


def test_a_pipeline_object_and_its_workflows_and_steps_carry_iso_times_beside_the_seconds() -> None:
    tool = WOODPECKER_TOOLS.get("get_pipeline")
    step = {"id": 60203, "pid": 3, "name": "test", "state": "failure", "started": 1760602005, "finished": 0}
    workflow = {
        "id": 6021,
        "name": "linux",
        "started": 1760602005,
        "finished": 1760602125,
        "children": [step],
    }
    shaped = shape(tool, validate(tool, {"repo_id": 6, "number": 2}), PIPELINE | {"workflows": [workflow]})
    pipeline = shaped.structured["pipeline"]
    assert (pipeline["created"], pipeline["created_at"]) == (1760602000, "2025-10-16T08:06:40Z")
    assert pipeline["updated_at"] == iso(1760602125) and "timestamp_at" not in pipeline
    (shown,) = pipeline["workflows"]
    assert shown["finished_at"] == "2025-10-16T08:08:45Z"
    # A step not finished (0) has no finished_at; its start has one.
    assert shown["steps"] == [step | {"started_at": "2025-10-16T08:06:45Z"}]
    assert json.loads(shaped.text.splitlines()[2])["pipeline"] == pipeline
