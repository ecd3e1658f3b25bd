"""Waiting for a pipeline to finish: which states end the wait, how often to look, and for how long (ADR 0027).

Pure arithmetic: the use case reads the time from the Clock port and sleeps on it; nothing here
knows what time it is.
"""

from domain.config import ConfigError

# Woodpecker's pipeline states that no longer change without someone restarting the pipeline.
FINISHED_STATES = frozenset({"success", "failure", "killed", "error", "canceled", "declined", "skipped"})
# A blocked pipeline waits for a person's approval (approve_pipeline): waiting longer cannot finish it.
BLOCKED = "blocked"

DEFAULT_WINDOW = 45  # seconds one call waits unless it asks for less or more
# The most one call may wait: under the 60 s after which common clients (the TypeScript SDK's
# default request timeout) give up on a request, with room for the answer. The use case ends the
# looks early enough that one as slow as the slowest before it still ends within the window.
MAX_WINDOW = 55
# An operator whose clients wait longer (or less) for an answer moves both (entrypoints/settings.py):
WINDOW_VARIABLE = "WOODPECKER_MCP_WAIT_SECONDS"  # the window when a call names none
CEILING_VARIABLE = "WOODPECKER_MCP_WAIT_MAX_SECONDS"  # the longest window a call may ask for
LONGEST_CEILING = 600  # ten minutes: past that, a client that waits is rarer than one that gave up

FIRST_POLL = 1.0  # seconds between the first and second look at the pipeline
POLL_GROWTH = 1.5  # each pause is this much longer than the one before ...
MAX_POLL = 5.0  # ... up to this: at most one request every 5 s per waiting call


def finished(status: object) -> bool:
    return status in FINISHED_STATES


def stops_waiting(status: object) -> bool:
    """Whether to answer now: the pipeline finished, or it waits for something other than time."""
    return finished(status) or status == BLOCKED


def poll_delay(attempt: int) -> float:
    """The pause after the `attempt`-th look (from 0): 1, 1.5, 2.25, ... seconds, at most MAX_POLL."""
    return min(FIRST_POLL * POLL_GROWTH ** min(max(attempt, 0), 32), MAX_POLL)


def next_pause(attempt: int, waited: float, window: float) -> float | None:
    """How long to pause before looking again, or None when the window is over.

    The pause never reaches past the window: the last look is at its end, never after it.
    """
    left = window - waited
    if left <= 0:
        return None
    return min(poll_delay(attempt), left)


def _seconds(name: str, raw: str, most: int) -> int:
    value = raw.strip()
    if value.isascii() and value.isdigit() and 1 <= int(value) <= most:
        return int(value)
    shown = (
        f"'{value}' is not"
        if len(value) <= 12 and value.isascii() and value.isprintable()
        else "the value is not"
    )
    raise ConfigError(f"{name} must be a whole number of seconds from 1 to {most}; {shown}")


def parse_windows(window: str | None, ceiling: str | None) -> tuple[int, int]:
    """WOODPECKER_MCP_WAIT_SECONDS and WOODPECKER_MCP_WAIT_MAX_SECONDS: (default window, ceiling).

    Unset or empty means 45 and 55 (ADR 0027). A ceiling alone lowers the default to it when it is
    below 45, and a default alone raises the ceiling to it when it is above 55, so one variable says
    "wait less" or "wait longer". A default above a ceiling that is set too is refused rather than
    cut: the operator said two things that cannot both hold.

    Raises:
        ConfigError: not a whole number in range, or the default above the ceiling.
    """
    most = _seconds(CEILING_VARIABLE, ceiling, LONGEST_CEILING) if ceiling and ceiling.strip() else None
    default = _seconds(WINDOW_VARIABLE, window, LONGEST_CEILING) if window and window.strip() else None
    if default is None:
        default = min(DEFAULT_WINDOW, MAX_WINDOW if most is None else most)
    if most is None:
        most = max(MAX_WINDOW, default)  # the default alone may raise it: one variable for "wait longer"
    if default > most:
        raise ConfigError(
            f"{WINDOW_VARIABLE} ({default}) must not exceed {CEILING_VARIABLE} ({most}); "
            "lower the first or raise the second"
        )
    return default, most


def progress_message(repo_id: object, number: object, status: str, waited: float, window: float) -> str:
    """The line a waiting call's progress notification carries (`status` already made safe to show)."""
    return f"Pipeline {number} of repository {repo_id} is {status} after {waited:.0f} s of at most {window:.0f} s."
