"""Waiting for a pipeline to finish: which states end the wait, how often to look, and for how long (ADR 0027).

Pure arithmetic: the use case reads the time from the Clock port and sleeps on it; nothing here
knows what time it is.
"""

# Woodpecker's pipeline states that no longer change without someone restarting the pipeline.
FINISHED_STATES = frozenset({"success", "failure", "killed", "error", "canceled", "declined", "skipped"})
# A blocked pipeline waits for a person's approval (approve_pipeline): waiting longer cannot finish it.
BLOCKED = "blocked"

DEFAULT_WINDOW = 45  # seconds one call waits unless it asks for less or more
# The most one call may wait: under the 60 s after which common clients (the TypeScript SDK's
# default request timeout) give up on a request, with room for the last poll and the answer.
MAX_WINDOW = 55

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
