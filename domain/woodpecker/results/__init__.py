"""Woodpecker answers shaped into tool results: open schemas, untrusted markers, a byte budget, no secrets.

Modules by concern: `envelope` (the result type, untrusted markers), `kinds` (how list entries are cleaned),
`schema` (outputSchema), `text` (terminal-safe text), `budget` (the byte budget), `redaction` (secret
material), `configs` (pipeline config files), `shaping` (successful calls), `logs` (step log windows),
`errors` (error results), `render` (the text content, from the result's shape). Import from here; the modules are this package's own layout.
"""

from domain.logs import LogLine, LogMatch
from domain.woodpecker.results.budget import LOG_BUDGET, RESULT_BUDGET, fit_object, fit_prefix, size
from domain.woodpecker.results.config_check import NO_WORKFLOW_READER, shape_config_check
from domain.woodpecker.results.configs import CONFIG_FILE_BYTES, CONFIG_FILES, decode_configs
from domain.woodpecker.results.envelope import CALLER_WARNING, UNTRUSTED_WARNING, ShapeError
from domain.woodpecker.results.errors import (
    MAY_HAVE_HAPPENED,
    SETUP,
    SETUP_WITHOUT_LOGIN,
    failed_repos,
    failure,
    no_such_organization,
    one_line,
    unreadable,
)
from domain.woodpecker.results.failures import (
    AFTER_LINES,
    ERROR_LINES,
    ERROR_PATTERN,
    ERROR_SIGNS,
    READ_SECONDS,
    TAIL_LINES,
    StepFailure,
    failed_steps,
    not_read_in_time,
    shape_failure_summary,
)
from domain.woodpecker.results.history import Reading, shape_history
from domain.woodpecker.results.logs import LINE_CAP, shape_logs, shape_search
from domain.woodpecker.results.redaction import AGENT_TOKEN_MARKER, REDACTED, redact, target
from domain.woodpecker.results.render import TEXT_MODES, Summarised, TextMode, fit, is_untrusted, render
from domain.woodpecker.results.resolved import Resolved, shape_resolved
from domain.woodpecker.results.schema import output_schema
from domain.woodpecker.results.shaping import NEW_AGENT_NOTE, health_failed, shape, shape_server_info
from domain.woodpecker.results.text import log_text, strip_terminal
from domain.woodpecker.results.unknown import unknown_outcome
from domain.woodpecker.results.waiting import shape_wait

__all__ = [
    "unknown_outcome",
    "no_such_organization",
    "MAY_HAVE_HAPPENED",
    "ERROR_LINES",
    "ERROR_PATTERN",
    "ERROR_SIGNS",
    "READ_SECONDS",
    "AFTER_LINES",
    "TAIL_LINES",
    "StepFailure",
    "Resolved",
    "shape_resolved",
    "failed_steps",
    "not_read_in_time",
    "shape_failure_summary",
    "AGENT_TOKEN_MARKER",
    "CALLER_WARNING",
    "CONFIG_FILES",
    "CONFIG_FILE_BYTES",
    "LINE_CAP",
    "LOG_BUDGET",
    "LogMatch",
    "LogLine",
    "NEW_AGENT_NOTE",
    "REDACTED",
    "RESULT_BUDGET",
    "SETUP",
    "SETUP_WITHOUT_LOGIN",
    "Summarised",
    "TEXT_MODES",
    "TextMode",
    "ShapeError",
    "UNTRUSTED_WARNING",
    "decode_configs",
    "failed_repos",
    "failure",
    "one_line",
    "unreadable",
    "fit_object",
    "fit",
    "fit_prefix",
    "is_untrusted",
    "log_text",
    "output_schema",
    "redact",
    "render",
    "shape",
    "shape_logs",
    "shape_search",
    "shape_server_info",
    "health_failed",
    "shape_wait",
    "shape_history",
    "shape_config_check",
    "NO_WORKFLOW_READER",
    "Reading",
    "size",
    "strip_terminal",
    "target",
]
