"""A repository's cron jobs."""

from domain.tools import Arg, Endpoint, Fixed, GuardRule, Param, ToolSpec
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask
from domain.woodpecker.before_asking import EXISTING
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
from domain.woodpecker.catalogue.pipelines import (
    BRANCH_CLAUSES,
    BRANCH_READS,
    STARTS_CONDITION,
    branch_sources,
)
from domain.woodpecker.read_back import gone

_CRON_ID = id_param("cron_id", "From list_crons.")

_TIMEZONE_PATTERN = r"^[A-Za-z0-9_+\-/]+$"

# Woodpecker never holds a cron pipeline for approval (server/pipeline/gated.go).
_UNHELD = (
    "Woodpecker never holds a cron pipeline for approval: each run starts at once, with this "
    "repository's secrets for cron events."
)
_WHY = (
    "Woodpecker never holds a cron pipeline, so on a branch whose code is held or was declined a cron "
    "run goes around approve_pipeline."
)

_SCHEDULE = Param(
    "schedule",
    "string",
    True,
    "Five crontab fields (no seconds), @daily-style, or '@every 6h'.",
    constraints={"minLength": 1, "maxLength": 200},
)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_crons",
        group="crons",
        untrusted_output=True,
        description=("A repository's cron jobs with their next run."),
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
        description="One cron job.",
        params=(REPO_ID, _CRON_ID),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/cron/{cron_id}"),),
        notes=("A non-numeric id answers 400, an unknown one 404. Needs push permission.",),
        answer=One("cron", "Cron job {id} of repository {repo_id}."),
    ),
    write_tool(
        "create_cron",
        group="crons",
        annotations=WRITE_ADDS,
        guard=GuardRule(
            when="starts_past_approval",
            condition=f"Asks, for the cron's branch (the default branch when none is named), {STARTS_CONDITION}.",
            targets=("repo_id",),
            body_bound=True,
            needs_current_state=True,
        ),
        description=(
            "Adds an enabled cron job. Its event is cron: steps and secrets limited "
            "to other events are left out. Asks a person for a branch with a blocked,"
            " declined or unapproved pipeline."
        ),
        params=(
            REPO_ID,
            Param(
                "name",
                "string",
                True,
                "Unique in the repository.",
                constraints={"minLength": 1, "maxLength": 250},
            ),
            _SCHEDULE,
            Param(
                "branch",
                "string",
                False,
                "Default: the default branch.",
                constraints=BRANCH_RULES,
            ),
            Param(
                "timezone",
                "string",
                False,
                "e.g. Europe/Berlin; stock images know only UTC.",
                constraints={
                    "default": "UTC",
                    "minLength": 1,
                    "maxLength": 100,
                    "pattern": _TIMEZONE_PATTERN,
                },
            ),
            CONFIRM_TOKEN,
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
            *BRANCH_READS,
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
        question=Ask(
            "This will create an enabled cron job in repository {repo_id}, on the branch the call names "
            "(or the default branch).",
            (_UNHELD,),
            when=BRANCH_CLAUSES,
            fields=True,
        ),
        why=_WHY,
        current=branch_sources,
    ),
    write_tool(
        "update_cron",
        group="crons",
        annotations=WRITE_DESTRUCTIVE,
        guard=GuardRule(
            when="moves_cron_past_approval",
            condition=(
                f"Asks, when branch is passed or enabled turns true from false (the cron's branch), "
                f"{STARTS_CONDITION}. Other changes never ask."
            ),
            targets=("repo_id", "cron_id"),
            body_bound=True,
            needs_current_state=True,
        ),
        untrusted_output=True,
        description=(
            "Changes a cron job; enabled=false pauses it. Asks a person for a new branch, or"
            " re-enabling on a branch, with a blocked, declined or unapproved pipeline."
        ),
        params=(
            REPO_ID,
            _CRON_ID,
            Param("name", "string", False, "", constraints={"minLength": 1, "maxLength": 250}),
            optional(_SCHEDULE),
            Param(
                "branch",
                "string",
                False,
                "",
                constraints=BRANCH_RULES,
            ),
            Param(
                "timezone",
                "string",
                False,
                "e.g. Europe/Berlin; stock images know only UTC.",
                constraints={"minLength": 1, "maxLength": 100, "pattern": _TIMEZONE_PATTERN},
            ),
            Param("enabled", "boolean", False, ""),
            CONFIRM_TOKEN,
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
            *BRANCH_READS,
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
        question=Ask(
            "This will change cron job {cron_id} of repository {repo_id}, which then runs on the branch the "
            "call names (or its own).",
            (_UNHELD,),
            when=BRANCH_CLAUSES,
            fields=True,
        ),
        why=_WHY,
        changes=("name", "schedule", "branch", "timezone", "enabled"),
        current=branch_sources,
    ),
    write_tool(
        "run_cron",
        group="crons",
        annotations=WRITE_STARTS_BUILD,
        guard=GuardRule(
            when="starts_past_approval",
            condition=f"Asks, for the stored cron's branch (the default branch when it names none), {STARTS_CONDITION}.",
            targets=("repo_id", "cron_id"),
            body_bound=False,
            needs_current_state=True,
        ),
        untrusted_output=True,
        description=(
            "Runs a cron job now. Not idempotent: every call, a repeat too, starts another run."
            " Asks a person when its branch has a blocked, declined or unapproved pipeline."
        ),
        params=(REPO_ID, _CRON_ID, CONFIRM_TOKEN),
        endpoints=(
            Endpoint("POST", "/api/repos/{repo_id}/cron/{cron_id}"),
            Endpoint(
                "GET",
                "/api/repos/{repo_id}/cron/{cron_id}",
                step="to decide whether it asks, first (the cron's branch)",
            ),
            *BRANCH_READS,
        ),
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
        question=Ask(
            "This will run cron job {cron_id} of repository {repo_id} now, on its branch.",
            (_UNHELD,),
            when=BRANCH_CLAUSES,
        ),
        why=_WHY,
        hints={"unavailable": MAY_HAVE_STARTED},
        current=branch_sources,
    ),
    write_tool(
        "delete_cron",
        settled=gone("cron"),
        before_asking=EXISTING,
        group="crons",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "cron_id"),
        description=("Deletes a cron job (update_cron enabled=false pauses). Always asks a person."),
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
