"""Each tool's outputSchema: open objects (a field a new Woodpecker release adds never breaks a tool), no key required.

Every property has one `type`, never a list such as `["string", "null"]`: a value Woodpecker did not
give is left out of the result, not null (`envelope.known`), so clients that map schemas onto a
single-type dialect (the OpenAPI subset behind Gemini's function declarations) read every tool
(docs/adr/0051)."""

from typing import Any

from domain.tools import ToolSpec
from domain.woodpecker.answers import (
    Analysed,
    Done,
    FailedSteps,
    Glance,
    Ids,
    Listed,
    LogLines,
    LogMatches,
    One,
    Validated,
    Value,
    Waited,
)
from domain.woodpecker.results.config_check import CONFIG_CHECK_PROPERTIES
from domain.woodpecker.tool import woodpecker

_OPEN_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


def output_schema(tool: ToolSpec) -> dict[str, Any]:
    """The tool's outputSchema. Woodpecker's objects stay open (a field a new release adds never breaks
    a tool) and no key is required, so the guard's own answers (a question, a token) fit it too."""
    props: dict[str, Any] = {}
    answer = woodpecker(tool).answer
    if isinstance(answer, Listed):
        item = (
            {"type": "string"}
            if tool.name == "list_repository_branches"
            else _glance_schema(answer.glance)
            if answer.glance is not None
            else dict(_OPEN_OBJECT)
        )
        props[answer.key] = {"type": "array", "items": item}
        props["count"] = {"type": "integer", "description": "Entries in this result."}
        props["dropped"] = {
            "type": "integer",
            "description": "Entries left out to stay under the size budget.",
        }
        if any(p.name == "page" for p in tool.params):
            props["page"] = {"type": "integer"}
            props["per_page"] = {"type": "integer"}
            props["next_page"] = {"type": "integer", "description": "Present when another page may follow."}
    elif isinstance(answer, One):
        props[answer.key] = {"type": "object", "additionalProperties": True}
        if answer.filtered:
            props[answer.key]["description"] = "Absent when no pipeline was created."
            props["created"] = {
                "type": "boolean",
                "description": "false when the config filtered everything out.",
            }
        props["trimmed"] = {
            "type": "array",
            "items": dict(_OPEN_OBJECT),
            "description": "Parts left out to stay under the size budget.",
        }
    elif isinstance(answer, Value):
        props[answer.key] = {"type": "string"}
    elif isinstance(answer, Done):
        props["done"] = {"type": "boolean"}
        props["target"] = dict(_OPEN_OBJECT)
    elif isinstance(answer, LogLines):
        props.update(_LOG_PROPERTIES)
    elif isinstance(answer, LogMatches):
        props.update(_SEARCH_PROPERTIES)
    elif isinstance(answer, FailedSteps):
        props.update(_SUMMARY_PROPERTIES)
    elif isinstance(answer, Ids):
        props.update(_RESOLVE_PROPERTIES)
    elif isinstance(answer, Waited):
        props.update(_WAIT_PROPERTIES)
    elif isinstance(answer, Analysed):
        props.update(_HISTORY_PROPERTIES)
    elif isinstance(answer, Validated):
        props.update(CONFIG_CHECK_PROPERTIES)
    props["note"] = {"type": "string"}
    if tool.untrusted_output:
        props["untrusted"] = {"type": "boolean", "const": True}
        source = "caller" if isinstance(answer, Validated) else "woodpecker"
        props["source"] = {"type": "string", "const": source}
    return {"type": "object", "properties": props, "additionalProperties": True}


_KIND_TYPES = {"id": "integer", "time": "integer", "boolean": "boolean", "flag": "boolean"}


def _glance_schema(glance: Glance) -> dict[str, Any]:
    """A list entry as its glance keeps it: exactly these fields, each with one type."""
    props: dict[str, Any] = {}
    for kept in glance.fields:
        props[kept.name] = {"type": _KIND_TYPES.get(kept.kind, "string")}
        if kept.kind == "time":
            props[kept.name]["description"] = "Unix seconds; absent when not yet."
            props[f"{kept.name}_at"] = {"type": "string", "description": f"{kept.name} in ISO 8601 UTC."}
        if kept.description:
            props[kept.name]["description"] = kept.description
    for key, inner in glance.nested:
        props[key] = _glance_schema(inner)
    return {"type": "object", "properties": props, "additionalProperties": False}


_LOG_PROPERTIES: dict[str, Any] = {
    "lines": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"line": {"type": "integer"}, "text": {"type": "string"}},
            "required": ["line", "text"],
        },
    },
    "first_line": {
        "type": "integer",
        "description": "Woodpecker's number (from 0) of the first line shown; absent when none is.",
    },
    "last_line": {"type": "integer"},
    "total_lines": {"type": "integer"},
    "from": {"type": "string", "enum": ["head", "tail"]},
    "limit": {"type": "integer"},
    "cut_lines": {
        "type": "integer",
        "description": "Lines of the window left out to stay under the size budget.",
    },
    "step": {"type": "object", "additionalProperties": True},
    "exit_code": {"type": "integer", "description": "The step's exit code (absent when not known)."},
    "state": {"type": "string", "description": "The step's state, e.g. running or failure."},
}
_LOG_PROPERTIES["from_line"] = {"type": "integer", "description": "The from_line asked for, when one was."}
_LOG_PROPERTIES["to_line"] = {"type": "integer", "description": "The to_line asked for, when one was."}

_LINE: dict[str, Any] = {
    "type": "object",
    "properties": {"line": {"type": "integer"}, "text": {"type": "string"}},
    "required": ["line", "text"],
}
# A matched line with the lines around it (a search's match; a failure summary's error line, after only).
_MATCH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "line": {"type": "integer"},
        "text": {"type": "string"},
        "before": {"type": "array", "items": _LINE},
        "after": {"type": "array", "items": _LINE},
    },
    "required": ["line", "text"],
}
_SEARCH_PROPERTIES: dict[str, Any] = {
    "matches": {
        "type": "array",
        "description": "Matching lines in log order, each with the lines before and after it.",
        "items": _MATCH,
    },
    "total_matches": {"type": "integer", "description": "Lines that matched, shown or not."},
    "shown_matches": {"type": "integer"},
    "cut_matches": {"type": "integer", "description": "Matches left out to stay under the size budget."},
    "total_lines": {"type": "integer"},
    "pattern": {"type": "string"},
    "step": {"type": "object", "additionalProperties": True},
    "exit_code": {"type": "integer"},
    "state": {"type": "string"},
}

# A failed step as the failure summary and wait_for_pipeline name it.
_FAILED_STEP: dict[str, Any] = {
    "workflow": {"type": "string"},
    "step_id": {"type": "integer"},
    "pid": {
        "type": "integer",
        "description": "The step's number in its pipeline, as in its web link.",
    },
    "name": {"type": "string"},
    "state": {"type": "string"},
    "exit_code": {"type": "integer"},
}
_SUMMARY_PROPERTIES: dict[str, Any] = {
    "pipeline": {"type": "object", "additionalProperties": True},
    "failed_step_count": {"type": "integer"},
    "error_signs": {
        "type": "array",
        "items": {"type": "string"},
        "description": "What counts as an error-looking line.",
    },
    "failed_steps": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                **_FAILED_STEP,
                "total_lines": {"type": "integer"},
                "error_lines_found": {"type": "integer"},
                "error_lines": {
                    "type": "array",
                    "description": "Error-looking lines, each with the lines after it that explain it.",
                    "items": _MATCH,
                },
                "last_lines": {"type": "array", "items": _LINE},
                "left_out": {"type": "object", "additionalProperties": True},
                "read_more": {"type": "string", "description": "The call that reads what was left out."},
                "log_unreadable": {"type": "string"},
            },
        },
    },
}

_RESOLVE_PROPERTIES: dict[str, Any] = {
    "kind": {"type": "string", "enum": ["repository", "pipeline", "step"], "description": "What was named."},
    "repo_id": {"type": "integer"},
    "full_name": {"type": "string"},
    "number": {"type": "integer", "description": "The pipeline's number, when one was named."},
    "pipeline_status": {"type": "string"},
    "step_id": {"type": "integer", "description": "The step's id, what the log tools take."},
    "step_pid": {"type": "integer"},
    "step_name": {"type": "string"},
    "step_state": {"type": "string"},
    "workflow": {"type": "string"},
    "web_url": {"type": "string", "description": "The web UI's link to what was named."},
    "next": {"type": "string", "description": "The call that goes on from here."},
}

_WAIT_PROPERTIES: dict[str, Any] = {
    "finished": {
        "type": "boolean",
        "description": "true: the pipeline has finished; false: the window passed first (call again).",
    },
    "status": {"type": "string", "description": "The pipeline's status at the last look."},
    "waited_seconds": {"type": "number", "description": "How long this call waited."},
    "window_seconds": {"type": "integer", "description": "The longest this call would have waited."},
    "polls": {"type": "integer", "description": "How often Woodpecker was asked."},
    "pipeline": {"type": "object", "additionalProperties": True},
    "failed_step_count": {"type": "integer"},
    "failed_steps": {
        "type": "array",
        "description": "When it failed: the failed or killed steps (the first ten).",
        "items": {"type": "object", "properties": dict(_FAILED_STEP)},
    },
    "next": {"type": "string", "description": "The call to make next."},
}

# A step of the history, by its workflow and name (both pushed text: data, never prose).
_STEP_NAMED: dict[str, Any] = {"workflow": {"type": "string"}, "name": {"type": "string"}}
_HALF: dict[str, Any] = {
    "type": "object",
    "properties": {
        "runs": {"type": "integer"},
        "failures": {"type": "integer"},
        "median_seconds": {"type": "integer"},
    },
}
_NUMBERS: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}
_HISTORY_PROPERTIES: dict[str, Any] = {
    "read": {
        "type": "object",
        "description": "How much was read: pipelines listed and read with their steps, requests sent, "
        "and whether the call stopped before it had read all it was asked for.",
        "properties": {
            "limit": {"type": "integer"},
            "listed": {"type": "integer", "description": "List entries read."},
            "pipelines": {"type": "integer", "description": "Pipelines read with their steps."},
            "requests": {"type": "integer"},
            "stopped_early": {"type": "boolean"},
            "stopped_because": {"type": "string"},
            "oldest": {"type": "integer", "description": "The oldest pipeline number read."},
            "newest": {"type": "integer"},
            "unread": {"type": "integer", "description": "Listed pipelines whose steps could not be read."},
        },
    },
    "steps": {
        "type": "array",
        "description": "Per step (workflow and name), most failures first.",
        "items": {
            "type": "object",
            "properties": {
                **_STEP_NAMED,
                "pid": {
                    "type": "integer",
                    "description": "The step's pid in the newest pipeline that ran it.",
                },
                "runs": {"type": "integer"},
                "failures": {"type": "integer"},
                "failure_rate": {"type": "number"},
                "flaky": {
                    "type": "integer",
                    "description": "Failed runs a later run of the same commit passed.",
                },
                "median_seconds": {"type": "integer"},
                "p90_seconds": {"type": "integer"},
                "trend": {"type": "string", "enum": ["worse", "better", "steady"]},
                "older_half": _HALF,
                "newer_half": _HALF,
            },
        },
    },
    "flaky": {
        "type": "array",
        "description": "A step's failed run and the later run of the same commit that passed.",
        "items": {
            "type": "object",
            "properties": {
                **_STEP_NAMED,
                "commit": {"type": "string"},
                "failed_pipeline": {"type": "integer"},
                "passed_pipeline": {"type": "integer"},
                "via": {"type": "string", "enum": ["restart", "new pipeline"]},
            },
        },
    },
    "red_since": {
        "type": "array",
        "description": "Each branch whose newest finished pipeline failed.",
        "items": {
            "type": "object",
            "properties": {
                "branch": {"type": "string"},
                "since": {
                    "type": "integer",
                    "description": "The first failing pipeline after the last success.",
                },
                "last_success": {"type": "integer"},
                "last_success_commit": {
                    "type": "string",
                    "description": "The last success's commit: compare it with commits to see what changed.",
                },
                "failing_pipelines": _NUMBERS,
                "commits": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The failing pipelines' commit SHAs, oldest first.",
                },
            },
        },
    },
    "fail_together": {
        "type": "array",
        "description": "Pairs of steps that failed in the same pipeline at least twice.",
        "items": {
            "type": "object",
            "properties": {
                "steps": {"type": "array", "items": {"type": "object", "properties": dict(_STEP_NAMED)}},
                "count": {"type": "integer"},
                "pipelines": _NUMBERS,
            },
        },
    },
    "dropped": {
        "type": "object",
        "additionalProperties": True,
        "description": "Entries left out of each list to stay under the size budget.",
    },
}
