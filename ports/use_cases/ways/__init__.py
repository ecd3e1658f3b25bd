"""The ways a guarded call reaches the person, one module each, behind one port (`Way`).

domain/guard/reach.py picks the way for each request; GuardedCalls hands the call to it. Every way
goes through the same GuardSteps (record, re-check, run once), and reaches the person through its
own port: the dialog through the `Asker`, the sealed question through the client's retry, the page
through `ApprovalPages` (and a `PageOpener`), the Apps view through its tickets, the token through
`Confirmations`.
"""

from typing import Protocol

from ports.use_cases.call_context import CallOutcome
from ports.use_cases.guard_steps import GuardedCall


class Way(Protocol):
    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        """Put `call`'s question to the person this way, and run it once on a yes. `token`: the
        confirm_token the call carried, if any (only the token reads it)."""
        ...
