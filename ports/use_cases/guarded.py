"""One guarded tool call on any way of asking: nothing that changes state runs until a valid approval for exactly this call exists.

It knows no forge: the forge comes in as a `Forge` record (catalogue, widening rules, the
function writing its questions, and the `ForgeCalls` port that validates, reads and runs).

Every call validates first and decides from data; a call that asks is handed to the way of asking
its request was given (domain/guard/reach.py picks it; one module each in ports/use_cases/ways/,
ADR 0065): `push` (a 2025-11-25 dialog while the call waits), `mrtr` (2026-07-28: the call returns
a question with a sealed state and the retry carries the answer), `page` (the approval page, in the
person's browser or offered through the client; ADRs 0063, 0064), `app` (an MCP Apps view whose
button calls an app-only tool with a single-use ticket; ADR 0049) and `token` (the two-call token,
last). Every way asks, re-checks the stored object right before the write, and only then runs the
tool, through the same GuardSteps.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from domain.guard import outcomes
from domain.guard.fingerprint import CONFIRM_TOKEN_ARG, fingerprint
from domain.guard.policy import Decision, decide, denied, needs_current
from ports.audit import AuditSink, AuditUnwritable
from ports.clock import Clock
from ports.fingerprint_keys import FingerprintKeys
from ports.forge import Forge, ForgeError, InvalidArguments, ToolResult
from ports.use_cases.bindings import ticket_binding, token_binding
from ports.use_cases.call_context import CallContext, CallOutcome, Channel, Complete, NeedInput
from ports.use_cases.confirmations import Confirmations
from ports.use_cases.earlier_attempts import EarlierAttempts
from ports.use_cases.guard_audit import GuardAudit
from ports.use_cases.guard_steps import GuardedCall, GuardSteps
from ports.use_cases.sealed_questions import SealedQuestions
from ports.use_cases.view_tickets import ViewTickets
from ports.use_cases.ways import Way
from ports.use_cases.ways.dialog import DialogWay
from ports.use_cases.ways.page import PageWay
from ports.use_cases.ways.sealed import SealedWay
from ports.use_cases.ways.token import TokenWay
from ports.use_cases.ways.view import ViewWay

__all__ = [
    "CallContext",
    "CallOutcome",
    "Channel",
    "Complete",
    "GuardedCalls",
    "NeedInput",
    "ticket_binding",
    "token_binding",
]


class GuardedCalls:
    def __init__(
        self,
        forge: Forge,
        confirmations: Confirmations,
        sealed: SealedQuestions,
        audit: AuditSink,
        clock: Clock,
        *,
        keys: FingerprintKeys,
        elicitation_enabled: bool,
        local_token_store: str | None = None,
        view_uri: str,
        four_eyes: frozenset[str] = frozenset(),
    ) -> None:
        """`elicitation_enabled=False` (ELICITATION=false): every guarded call takes the token path.

        `keys` keys every fingerprint before it leaves the process.

        `local_token_store`: None when pending tokens are shared by every process of this server
        (Redis); when they live in this process's memory, the setting that would share them, for
        the rejected-token answer to name (a second call that reaches another process never fits).

        `four_eyes`: the tools whose approver must be someone other than the caller: only the signed-in
        approval page may answer them (ADR 0084); on any other way nothing is asked or run.

        `view_uri`: the forge's approval view (a `ui://` resource), named by a guarded call's result for a
        client that shows MCP Apps but no dialog (ADR 0049).
        """
        self._forge = forge
        self._keys = keys
        self._calls = forge.calls
        self._audit = GuardAudit(audit, clock)
        self._elicitation_enabled = elicitation_enabled
        self._four_eyes = four_eyes
        self._steps = GuardSteps(forge, sealed, self._audit, clock, EarlierAttempts(confirmations))
        token = TokenWay(self._steps, confirmations, local_token_store)
        self._view = ViewWay(self._steps, ViewTickets(confirmations, clock), forge.calls, view_uri)
        self._ways: Mapping[Channel, Way] = {
            "push": DialogWay(self._steps),
            "mrtr": SealedWay(self._steps),
            "page": PageWay(self._steps, token, four_eyes),
            "app": self._view,
            "token": token,
        }

    async def call(self, tool: str, arguments: Mapping[str, Any] | None, ctx: CallContext) -> CallOutcome:
        """Run `tool` if it needs no approval, or once a valid approval for exactly this call exists.

        Invalid arguments, an unknown tool, a no, a bad token: a result saying so, never a write. An
        `asked` or `approved` line (or a token's or a view's issue) the audit file cannot take: nothing
        is asked or run (guard.md §8, ADR 0081).
        """
        try:
            return await self._call(tool, arguments, ctx)
        except AuditUnwritable as e:
            return Complete(outcomes.audit_unwritable(e.reason, e.named))

    async def _call(self, tool: str, arguments: Mapping[str, Any] | None, ctx: CallContext) -> CallOutcome:
        if tool not in self._forge.catalogue or (ctx.listed is not None and tool not in ctx.listed):
            return Complete(outcomes.unknown_tool(tool))
        if denied(self._forge.catalogue.get(tool)):
            # The operator's policy: refused whatever the arguments, before any question or request.
            return Complete(self._denied(tool, arguments, ctx))
        try:
            valid = self._calls.prepare(tool, arguments)
        except InvalidArguments as e:
            return Complete(outcomes.error_result("invalid_arguments", str(e)))
        token = valid.args.get(CONFIRM_TOKEN_ARG)
        valid = valid.without(CONFIRM_TOKEN_ARG)
        spec, args, rules = valid.spec, valid.args, self._forge.rules
        if spec.guard is None or self._calls.setup_for(ctx.credential) is not None:
            # Nothing can reach the forge: say how to set it up rather than ask about a call
            # that could never run.
            return Complete(await self._calls.execute(valid, ctx.credential, ctx.progress))
        refused = await self._calls.check(valid, ctx.credential)
        if refused is not None:
            # Nobody is asked about a call that would reach another object than the one it names.
            return Complete(refused)

        reads = needs_current(spec, args, rules)
        current: Mapping[str, Any] | None = None
        if reads:
            try:
                current = await self._calls.current(valid, ctx.credential)
            except ForgeError as e:
                return Complete(outcomes.read_failed(e))
        decision = decide(spec, args, current, rules)
        if decision.ask:
            # One read before anyone is asked (issue 37): a call that leaves nothing to decide (its
            # target is not there, or its effect is in place already) ends here, unasked and unsent;
            # otherwise its facts join the reasons, so the question says them and an approval covers
            # only a question that did. A request that carries an answer (a sealed retry, a token, a
            # view's button) is past its question: its write meets Woodpecker's own checks.
            prelude = await self._calls.before_asking(valid, ctx.credential)
            if prelude.refusal is not None:
                return Complete(prelude.refusal)
            if prelude.answer is not None and ctx.answer is None and token is None:
                self._audit.write(spec, args, self._path_of(ctx), "nothing_to_decide", None)
                return Complete(prelude.answer)
            decision = Decision(ask=True, reasons=decision.reasons | prelude.facts)
        if ctx.channel == "app" and ctx.ticket is not None and ctx.answer is not None:
            # The approval view's answer: whatever the call now is, its ticket decides whether
            # anything may run, at most once (ADR 0066). Never for a four-eyes tool: the caller's view.
            if spec.name in self._four_eyes:
                return self._steps.four_eyes_refused(spec, args, ctx)
            keyed = self._keys.keyed(fingerprint(spec, args, ctx.principal))
            return await self._view.answer(
                GuardedCall(valid, keyed, decision, reads, ctx), ctx.ticket, ctx.answer
            )
        if not decision.ask and ctx.answer is not None and not ctx.answer.is_yes:
            # This request carries a person's no to this call's question (the view's Decline, a
            # 2026-07-28 retry's decline), their dismissal or no answer, and the object changed
            # meanwhile so that the call no longer asks: nothing runs all the same. They refused the
            # whole call, every field of it, not only what the question named. (When it still asks,
            # its channel closes the question, using up the view's ticket.)
            keyed = self._keys.keyed(fingerprint(spec, args, ctx.principal))
            return self._steps.not_approved(GuardedCall(valid, keyed, decision, reads, ctx), ctx.answer)
        if not decision.ask:
            # The harmless direction applies at once: asking about it teaches people to click through.
            return Complete(await self._calls.execute(valid, ctx.credential))

        if not self._elicitation_enabled:
            ctx = CallContext(
                ctx.principal, ctx.credential, "token", no_dialog="server", quota_owner=ctx.quota_owner
            )
        call = GuardedCall(
            valid, self._keys.keyed(fingerprint(spec, args, ctx.principal)), decision, reads, ctx
        )
        if spec.name in self._four_eyes and ctx.channel != "page":
            # A dialog, a view or a token would be answered by the caller: only the page may (ADR 0084).
            return self._steps.four_eyes_refused(spec, args, ctx)
        # A confirm_token is never a ticket: a call carrying one on the `app` way still gets a view.
        return await self._ways[ctx.channel].ask(call, token)

    async def view_state(self, ticket: object, ctx: CallContext) -> ToolResult:
        """What the approval view is told when it is shown (ADR 0066); reads only."""
        return await self._view.state(ticket, ctx)

    def _path_of(self, ctx: CallContext) -> CallContext:
        """The context as recorded: the path a question would have taken."""
        return ctx if self._elicitation_enabled else replace(ctx, channel="token")

    def _denied(self, tool: str, arguments: Mapping[str, Any] | None, ctx: CallContext) -> ToolResult:
        """The answer for a tool the policy denies, recorded with the rule that refused it. The
        arguments are validated only for the record's targets; nothing else is done with them."""
        spec = self._forge.catalogue.get(tool)
        try:
            args: Mapping[str, Any] = self._calls.prepare(tool, arguments).without(CONFIRM_TOKEN_ARG).args
        except InvalidArguments:
            args = {}
        self._audit.write(spec, args, self._path_of(ctx), "denied", f"tools.{tool}.deny")
        return outcomes.denied_by_policy()
