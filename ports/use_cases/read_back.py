"""After a write of unknown outcome: the one read its declaration names, and the result saying both
(guard.md §7: an unknown outcome is said as unknown, never "try again")."""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from domain.tools import ToolSpec
from domain.woodpecker import results
from domain.woodpecker.faults import Unsettled
from domain.woodpecker.read_back import NO_READ, Finding, unread
from domain.woodpecker.requests import Request
from domain.woodpecker.tool import woodpecker
from ports.forge import ToolResult
from ports.woodpecker import ApiResponse, NotFound, OutcomeUnknown, WoodpeckerError


async def read_back(
    spec: ToolSpec,
    args: Mapping[str, Any],
    error: OutcomeUnknown,
    send: Callable[[Request], Awaitable[ApiResponse]],
) -> ToolResult:
    """The unknown-outcome result for `error`, after reading back what Woodpecker holds where the tool
    declares a read that can tell (`send` is the runner's, which refuses an answer echoing the token)."""
    settled = woodpecker(spec).settled
    fault = error.fault
    finding: Finding = NO_READ
    if settled is not None and isinstance(fault, Unsettled):
        try:
            response = await send(settled.request(args, fault.path))
            finding = settled.judge(args, response.status, response.data)
        except NotFound:
            finding = settled.judge(args, 404, None)
        except WoodpeckerError as e:
            finding = unread(results.one_line(str(e)))
    cause = fault.cause if isinstance(fault, Unsettled) else None
    return results.unknown_outcome(spec, args, str(error), finding, cause)
