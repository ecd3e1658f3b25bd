"""The guard's audit lines: one per decision, and the lines a guarded call may not go on without.

A line that opens a question (a dialog's or a sealed question's `asked`, a token's or a view's
issue) or lets a write go ahead (`approved`) is written with the sink's `require`, which raises
AuditUnwritable when the configured file cannot take it: the call then does not go on (guard.md §8,
ADR 0081). A closing line is written as it can be: the call has happened or ended by then.
"""

from collections.abc import Mapping
from typing import Any

from domain.guard.audit import Outcome, Path, audit_event
from domain.guard.fingerprint import audit_fingerprint
from domain.tools import ToolSpec
from ports.approval_pages import Approver
from ports.audit import AuditSink
from ports.clock import Clock
from ports.use_cases.call_context import CallContext, Channel

REQUIRED: frozenset[Outcome] = frozenset({"asked", "approved", "token_issued", "ticket_issued"})
PATHS: Mapping[Channel, Path] = {
    "push": "dialog",
    "mrtr": "sealed",
    "token": "token",
    "app": "app",
    "page": "page",
}


class GuardAudit:
    def __init__(self, sink: AuditSink, clock: Clock) -> None:
        self._sink = sink
        self._clock = clock

    def write(
        self,
        spec: ToolSpec,
        args: Mapping[str, Any],
        ctx: CallContext,
        outcome: Outcome,
        rule: str | None,
        read_back: str | None = None,
        approver: Approver | None = None,
    ) -> None:
        # A line that opens a question or lets a write go ahead must be written, or nothing goes ahead
        # (guard.md §8): `require` raises AuditUnwritable. A closing line is written as it can be.
        write = self._sink.require if outcome in REQUIRED else self._sink.record
        write(self.event(spec, args, ctx, outcome, rule, read_back, approver))

    def event(
        self,
        spec: ToolSpec,
        args: Mapping[str, Any],
        ctx: CallContext,
        outcome: Outcome,
        rule: str | None,
        read_back: str | None = None,
        approver: Approver | None = None,
    ) -> dict[str, object]:
        """The line `write` writes, as of now."""
        names = spec.guard.targets if spec.guard is not None else ()
        return audit_event(
            now=self._clock.now(),
            tool=spec.name,
            targets={name: args.get(name) for name in names if name in args},
            # Not the call's own fingerprint: that one digests body values (a new secret value,
            # a password), and even a short prefix of it would let a reader of the audit trail
            # test guesses of them.
            fingerprint=audit_fingerprint(spec, args, ctx.principal),
            path=PATHS[ctx.channel],
            outcome=outcome,
            principal=ctx.principal,
            policy=rule,
            read_back=read_back,
            reached=ctx.reached if ctx.channel == "page" else None,
            approver=(approver.subject, approver.name) if approver is not None else None,
            four_eyes=approver.other_than_caller if approver is not None else None,
        )
