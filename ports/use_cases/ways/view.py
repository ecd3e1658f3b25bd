"""The MCP Apps approval view, for a host that renders views but shows no dialog (ADR 0049): the
call returns the view with a single-use ticket; the view's button sends the ticket back (through the
app-only tool) with the person's answer, and the ticket's record says what it came to (ADR 0066)."""

from domain.guard import outcomes
from domain.guard.policy import Decision
from domain.guard.tokens import TOKEN_TTL_SECONDS
from domain.guard.view_ticket import ended
from ports.asker import Answer
from ports.audit import AuditUnwritable
from ports.forge import ForgeCalls, ToolResult
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.bindings import ticket_binding
from ports.use_cases.call_context import CallContext, CallOutcome, Complete
from ports.use_cases.confirmations import RedeemOutcome
from ports.use_cases.guard_steps import GuardedCall, GuardSteps
from ports.use_cases.view_tickets import ViewTickets


class ViewWay:
    def __init__(self, steps: GuardSteps, tickets: ViewTickets, calls: ForgeCalls, view_uri: str) -> None:
        """`view_uri`: the forge's approval view (a `ui://` resource) a guarded call's result names."""
        self._steps = steps
        self._tickets = tickets
        self._calls = calls
        self._view_uri = view_uri

    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        """The model's own call: the view with a fresh ticket (a confirm_token is never a ticket)."""
        try:
            return Complete((await self._view(call, call.decision))[0])
        except TokenStoreUnavailable as e:
            self._steps.record(call, "failed")
            return Complete(outcomes.store_unavailable(e))

    async def answer(self, call: GuardedCall, ticket: str, answer: Answer) -> CallOutcome:
        """The view's Approve or Decline. An open ticket is used up by the answer, whatever it is;
        a closed one (answered in this showing of the view or another, expired, another caller's)
        runs nothing and asks nothing again: its answer says what the ticket came to."""
        steps, owner = self._steps, call.ctx.owner
        try:
            fits = False
            if call.decision.ask:
                bindings = tuple(ticket_binding(fp, call.decision.reasons) for fp in call.fingerprints)
                fits = await self._tickets.redeem(bindings, ticket, owner) is RedeemOutcome.ACCEPTED
                if not fits:
                    steps.record(call, "ticket_rejected")
            # A ticket that does not fit may still be open: issued for this call before what it would
            # do changed (or the view sent other arguments), or the call no longer asks at all. The
            # answer still closes it, once; a closed one runs nothing.
            if not fits and not await self._tickets.retire(
                ticket, await self._tickets.record(ticket, owner), owner
            ):
                return Complete(await self._tickets.closed(ticket, owner))
            if not answer.is_yes:
                await self._tickets.settle(ticket, "declined", owner)
                return steps.not_approved(call, answer)
            if not call.decision.ask:
                result = await self._calls.execute(call.valid, call.ctx.credential)
                await self._tickets.settle(ticket, ended(result), owner)
                return Complete(result)
            if not fits:
                # A yes to another question than this call now asks: a new question.
                return Complete(await self._replaced(call, ticket, call.decision))
            try:
                steps.record(call, "approved")
            except AuditUnwritable:
                await self._tickets.settle(ticket, "not_run", owner)  # used up, and nothing sent
                raise
            # Recorded before the write: a view shown while it runs, or after this server stopped
            # in the middle, says it was approved rather than offering the question again.
            await self._tickets.settle(ticket, "approved", owner)
            applied = await steps.apply(call, call.decision.reasons)
            if isinstance(applied, Complete):
                await self._tickets.settle(ticket, ended(applied.result), owner)
                return applied
            # The object changed since the view was shown so that the call widens more: ask again.
            return Complete(await self._replaced(call, ticket, applied.decision))
        except TokenStoreUnavailable as e:
            steps.record(call, "failed")
            return Complete(outcomes.store_unavailable(e))

    async def state(self, ticket: object, ctx: CallContext) -> ToolResult:
        """What the approval view is told when it is shown (ADR 0066); reads only."""
        return await self._tickets.told(ticket, ctx.owner)

    async def _replaced(self, call: GuardedCall, ticket: str, decision: Decision) -> ToolResult:
        """A new question in place of `ticket`'s, whose record points at it."""
        fresh, new = await self._view(call, decision, changed=True)
        await self._tickets.settle(ticket, "changed", call.ctx.owner, then=new)
        return fresh

    async def _view(
        self, call: GuardedCall, decision: Decision, *, changed: bool = False
    ) -> tuple[ToolResult, str]:
        steps = self._steps
        life = steps.life(call, TOKEN_TTL_SECONDS)
        ticket = await self._tickets.issue(
            ticket_binding(call.fingerprint, decision.reasons), call.ctx.owner, ttl=life
        )
        steps.record(call, "ticket_issued")
        shown = outcomes.view_issued(
            ticket,
            tool=call.spec.name,
            question=await steps.asking(call, decision),
            ttl_seconds=life,
            resource_uri=self._view_uri,
            changed=changed,
        )
        return steps.on_path(call, shown), ticket
