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

_STEP_ID = id_param("step_id", "The step's id as get_pipeline lists it (its database id, not its pid).")

_FROM_LINE = Param(
    "from_line",
    "integer",
    False,
    "Read lines numbered from this one on (Woodpecker's numbers, from 0, as results and "
    "search_step_logs show them); the first `limit` of them.",
    constraints={"minimum": 0, "maximum": MAX_ID},
)

_TO_LINE = Param(
    "to_line",
    "integer",
    False,
    "Read lines numbered up to this one (included); alone, the last `limit` lines up to it.",
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
            "Returns a step's console output as text, with its exit code. By default the last 200 "
            "lines, where errors usually are; from=head reads from the top and limit sets the number "
            "of lines. Every answer states which lines it shows and the total line count."
        ),
        params=(
            REPO_ID,
            NUMBER,
            _STEP_ID,
            Param(
                "limit",
                "integer",
                False,
                "How many lines to return.",
                constraints={"minimum": 1, "maximum": 5000, "default": 200},
            ),
            Param(
                "from",
                "enum",
                False,
                "tail (default): the last lines; head: the first.",
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
            "Deletes what one step wrote to its log; the step and its result stay. Meant for a log "
            "that exposed a secret: rotate that secret as well, since anyone with read access may "
            "already have seen it. Always asks a person first."
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
        description=(
            "Deletes the logs of every step of a pipeline. The step results stay visible; only the "
            "output behind them is gone. Always asks a person first."
        ),
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
        untrusted_output=True,
        description=(
            "Searches every line of a step's log for a regular expression (RE2: no look-around or "
            "back-references) and returns the matching lines with their numbers and context lines, "
            "however long the log. Says how many lines matched in all and which are shown; "
            "get_step_logs with from_line reads around a match."
        ),
        params=(
            REPO_ID,
            NUMBER,
            _STEP_ID,
            Param(
                "pattern",
                "string",
                True,
                "The regular expression, matched within each line, e.g. 'FAIL|panic:|error:'.",
                constraints={"minLength": 1, "maxLength": 500},
            ),
            Param(
                "ignore_case",
                "boolean",
                False,
                "Match letters in either case.",
                constraints={"default": False},
            ),
            Param(
                "context",
                "integer",
                False,
                "Lines to show before and after each match.",
                constraints={"minimum": 0, "maximum": 20, "default": 2},
            ),
            Param(
                "max_matches",
                "integer",
                False,
                "How many matches to show (all are counted).",
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
