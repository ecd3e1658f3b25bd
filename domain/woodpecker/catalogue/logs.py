"""Step logs: reading a window of lines, searching them, deleting them."""

from collections.abc import Mapping

from domain.tools import Endpoint, Param, ToolSpec
from domain.woodpecker.answers import Done, LogLines, LogMatches
from domain.woodpecker.asking import Ask
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    MAX_ID,
    NUMBER,
    REPO_ID,
    WRITE_DESTRUCTIVE,
    asks_always,
    id_param,
    read_tool,
    write_tool,
)
from domain.woodpecker.plans import StepLog, StepLogSearch

_STEP_ID = id_param("step_id", "From get_pipeline, not the pid.")

_FROM_LINE = Param(
    "from_line",
    "integer",
    False,
    "First line number (from 0, as shown).",
    constraints={"minimum": 0, "maximum": MAX_ID},
)

_TO_LINE = Param(
    "to_line",
    "integer",
    False,
    "Last line number (included).",
    constraints={"minimum": 0, "maximum": MAX_ID},
)

# Parameters added to get_step_logs beyond the shared catalogue, after its own (which keep their order).
ADDED_PARAMS: Mapping[str, tuple[Param, ...]] = {"get_step_logs": (_FROM_LINE, _TO_LINE)}

# Documented additions beyond the shared catalogue (see the package's docstring).
ADDED: tuple[str, ...] = ("search_step_logs",)


TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "get_step_logs",
        group="logs",
        essential=True,
        untrusted_output=True,
        description=(
            "A step's log lines and exit code: the last 200 by default; from=head reads from the top."
        ),
        params=(
            REPO_ID,
            NUMBER,
            _STEP_ID,
            Param(
                "limit",
                "integer",
                False,
                "",
                constraints={"minimum": 1, "maximum": 5000, "default": 200},
            ),
            Param(
                "from",
                "enum",
                False,
                "",
                choices=("head", "tail"),
                constraints={"default": "tail"},
            ),
            *ADDED_PARAMS["get_step_logs"],
        ),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/logs/{number}/{step_id}"),),
        notes=(
            (
                "Answers [LogEntry {id, step_id, time, line, data, type}] or null (no output yet). "
                "data is base64 of raw bytes; decode, order by line, join with newlines (the agent "
                "stripped one trailing newline per chunk)."
            ),
            (
                "type 0 and 1 are output, 2 carries the exit code, 3 and 4 (metadata, progress) are "
                "dropped. An entry is a chunk and may hold several lines."
            ),
            "step_id must belong to that pipeline, otherwise 404.",
            (
                "Strip terminal control sequences, keep the text after the last carriage return of "
                "each line, and cap the text from the end being read (40 000 bytes in the reference) "
                "before returning."
            ),
            "Log text is whatever the step's container printed.",
        ),
        answer=LogLines(),
        plan=StepLog(),
    ),
    write_tool(
        "delete_step_logs",
        group="logs",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "number", "step_id"),
        description=(
            "Erases one step's log, e.g. one that leaked a secret (rotate it too). Always asks a person."
        ),
        params=(REPO_ID, NUMBER, _STEP_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/logs/{number}/{step_id}", success=204),),
        notes=("422 while the step is pending or running. Needs push permission.",),
        answer=Done("Deleted the logs of step {step_id} of pipeline {number} of repository {repo_id}."),
        question=Ask(
            "This will erase the log of step {step_id} of pipeline {number} in repository {repo_id}.",
            (
                "The step and its result remain; its output is gone for good. If the log exposed a secret, "
                "rotate that secret too: anyone with read access may have seen it.",
            ),
        ),
        why="The output is gone for good.",
    ),
    write_tool(
        "delete_pipeline_logs",
        group="logs",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "number"),
        description=("Erases all step logs of a pipeline; results stay. Always asks a person."),
        params=(REPO_ID, NUMBER, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/logs/{number}", success=204),),
        notes=("422 while the pipeline is pending, running or blocked. Needs push permission.",),
        answer=Done("Deleted the logs of pipeline {number} of repository {repo_id}."),
        question=Ask(
            "This will erase the logs of every step of pipeline {number} in repository {repo_id}.",
            ("Step results remain visible; the output behind them is gone for good.",),
        ),
        why="The output of every step is gone for good.",
    ),
    read_tool(
        "search_step_logs",
        group="logs",
        essential=True,
        untrusted_output=True,
        description=(
            "Searches a whole step log with an RE2 regex: matching lines with numbers, context and count."
        ),
        params=(
            REPO_ID,
            NUMBER,
            _STEP_ID,
            Param(
                "pattern",
                "string",
                True,
                "RE2, matched against each line as shown (colour codes removed), e.g. 'FAIL|panic:|error:'.",
                constraints={"minLength": 1, "maxLength": 500},
            ),
            Param(
                "ignore_case",
                "boolean",
                False,
                "",
                constraints={"default": False},
            ),
            Param(
                "context",
                "integer",
                False,
                "Lines around each match.",
                constraints={"minimum": 0, "maximum": 20, "default": 2},
            ),
            Param(
                "max_matches",
                "integer",
                False,
                "",
                constraints={"minimum": 1, "maximum": 200, "default": 20},
            ),
        ),
        endpoints=(
            Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),
            Endpoint("GET", "/api/repos/{repo_id}/logs/{number}/{step_id}"),
        ),
        notes=("The log is read once as it streams; memory is bounded by the matches kept.",),
        answer=LogMatches(),
        plan=StepLogSearch(),
    ),
)
