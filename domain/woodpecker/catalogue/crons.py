"""A repository's cron jobs."""

from domain.tools import Arg, Endpoint, Fixed, Param, ToolSpec
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask
from domain.woodpecker.catalogue.common import (
    BRANCH_RULES,
    CONFIRM_TOKEN,
    MAY_HAVE_STARTED,
    PAGING,
    PAGING_QUERY,
    REPO_ID,
    WRITE_ADDS,
    WRITE_DESTRUCTIVE,
    WRITE_STARTS_BUILD,
    asks_always,
    id_param,
    optional,
    read_tool,
    write_tool,
)

_CRON_ID = id_param("cron_id", "Cron job id, from list_crons.")

_TIMEZONE_PATTERN = r"^[A-Za-z0-9_+\-/]+$"

_SCHEDULE = Param(
    "schedule",
    "string",
    True,
    "When it fires: five crontab fields (minute hour day month weekday; '30 2 * * 1' is Mondays at 02:30), "
    "one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, or @every with a Go duration "
    "(@every 6h). There is no seconds field.",
    constraints={"minLength": 1, "maxLength": 200},
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_crons",
        group="crons",
        untrusted_output=True,
        description=(
            "Lists a repository's cron jobs: schedule, branch, time zone, whether enabled, and when "
            "each fires next."
        ),
        params=(REPO_ID, *PAGING),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/cron", query=PAGING_QUERY),),
        notes=(
            ("null when there are none; ordered by name; next_exec is Unix seconds. Needs push permission."),
            (
                "Names and branches are written by people with push access; the name also becomes the "
                "message of the pipelines the job starts."
            ),
        ),
        answer=Listed("crons"),
    ),
    read_tool(
        "get_cron",
        group="crons",
        untrusted_output=True,
        description="Returns one cron job with all its fields, variables included.",
        params=(REPO_ID, _CRON_ID),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/cron/{cron_id}"),),
        notes=("A non-numeric id answers 400, an unknown one 404. Needs push permission.",),
        answer=One("cron", "Cron job {id} of repository {repo_id}."),
    ),
    write_tool(
        "create_cron",
        group="crons",
        annotations=WRITE_ADDS,
        description=(
            "Adds an enabled cron job to a repository. Its pipelines have event cron: steps limited to "
            "other events are skipped, and secrets limited to other events are missing."
        ),
        params=(
            REPO_ID,
            Param(
                "name",
                "string",
                True,
                "The job's name, unique within the repository.",
                constraints={"minLength": 1, "maxLength": 250},
            ),
            _SCHEDULE,
            Param(
                "branch",
                "string",
                False,
                "The branch to build; it must exist in the forge. Without it, whatever the default "
                "branch is when the job fires.",
                constraints=BRANCH_RULES,
            ),
            Param(
                "timezone",
                "string",
                False,
                "Zone name such as Europe/Berlin, UTC by default. Servers on the stock container image "
                "have no zone data and refuse anything but UTC ('unknown time zone').",
                constraints={
                    "default": "UTC",
                    "minLength": 1,
                    "maxLength": 100,
                    "pattern": _TIMEZONE_PATTERN,
                },
            ),
        ),
        endpoints=(
            Endpoint(
                "POST",
                "/api/repos/{repo_id}/cron",
                body={
                    "name": Arg("name"),
                    "schedule": Arg("schedule"),
                    "branch": Arg("branch"),
                    "timezone": Arg("timezone"),
                    "enabled": Fixed(True),
                },
            ),
        ),
        notes=(
            "Always send enabled: true; since 3.13 an omitted enabled creates a disabled job.",
            (
                "Validation answers 422, an unparsable schedule 400, a branch missing in the forge "
                "400, a duplicate name 409. A six-field expression fails with 'expected exactly 5 "
                "fields, found 6'."
            ),
        ),
        answer=One("cron", "Created cron job {id} of repository {repo_id} (enabled)."),
    ),
    write_tool(
        "update_cron",
        group="crons",
        annotations=WRITE_DESTRUCTIVE,
        untrusted_output=True,
        description=(
            "Changes a cron job's name, schedule, branch, time zone or enabled flag; fields not passed "
            "stay as they are. enabled=false pauses the job and keeps its definition."
        ),
        params=(
            REPO_ID,
            _CRON_ID,
            Param("name", "string", False, "New job name.", constraints={"minLength": 1, "maxLength": 250}),
            optional(_SCHEDULE),
            Param(
                "branch",
                "string",
                False,
                "New branch; it must exist in the forge.",
                constraints=BRANCH_RULES,
            ),
            Param(
                "timezone",
                "string",
                False,
                "New zone name such as Europe/Berlin; the stock server image knows only UTC ('unknown "
                "time zone' otherwise).",
                constraints={"minLength": 1, "maxLength": 100, "pattern": _TIMEZONE_PATTERN},
            ),
            Param("enabled", "boolean", False, "false pauses the job; true resumes it."),
        ),
        endpoints=(
            Endpoint(
                "PATCH",
                "/api/repos/{repo_id}/cron/{cron_id}",
                body={
                    "name": Arg("name"),
                    "schedule": Arg("schedule"),
                    "branch": Arg("branch"),
                    "timezone": Arg("timezone"),
                    "enabled": Arg("enabled"),
                },
            ),
        ),
        notes=(
            (
                "Woodpecker ignores blank strings. A bad schedule or time zone answers 400, a missing "
                "branch 400, failed final validation 422."
            ),
            (
                "The caller becomes the job's creator_id; next_exec is recomputed when schedule or "
                "time zone change or the job is re-enabled."
            ),
            "A call with nothing to change is an error.",
        ),
        answer=One("cron", "Updated cron job {id} of repository {repo_id}."),
        changes=("name", "schedule", "branch", "timezone", "enabled"),
    ),
    write_tool(
        "run_cron",
        group="crons",
        annotations=WRITE_STARTS_BUILD,
        untrusted_output=True,
        description=(
            "Starts a cron job's pipeline now, as a cron event, leaving the schedule alone; a way to "
            "test a job before it fires. Not idempotent: every call, a repeat or retry included, "
            "starts another run."
        ),
        params=(REPO_ID, _CRON_ID),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/cron/{cron_id}"),),
        notes=(
            (
                "No body. 200 with the new pipeline; 204 when the config filtered everything out "
                "(report that no pipeline was created)."
            ),
            "Forge or branch errors answer 500 with a text body.",
        ),
        answer=One(
            "pipeline",
            "Cron job {cron_id} started pipeline {number} of repository {repo_id} ({status}).",
            filtered=True,
        ),
        hints={"unavailable": MAY_HAVE_STARTED},
    ),
    write_tool(
        "delete_cron",
        group="crons",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "cron_id"),
        description=(
            "Deletes a cron job. Nothing will report the runs that stop happening; to pause it "
            "instead, use update_cron with enabled=false. Always asks a person first."
        ),
        params=(REPO_ID, _CRON_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/cron/{cron_id}", success=204),),
        notes=("404 when absent. Needs push permission.",),
        answer=Done("Deleted cron job {cron_id} of repository {repo_id}."),
        question=Ask(
            "This will delete cron job {cron_id} of repository {repo_id}.",
            (
                "Its scheduled runs stop, and nothing will mention the runs that no longer happen. "
                "To suspend it instead, use update_cron with enabled=false.",
            ),
        ),
        why="Its scheduled runs stop silently.",
    ),
)
