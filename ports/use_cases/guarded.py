"""One guarded tool call on any channel: nothing that changes state runs until a valid approval for exactly this call exists.

It knows no forge: the forge comes in as a `Forge` record (catalogue, widening rules, the
function writing its questions, and the `ForgeCalls` port that validates, reads and runs).

Channels: `push` (a 2025-11-25 dialog while the call waits), `page` (stdio: a page the server opens
in the person's browser itself, while the call waits; ports/use_cases/page_channel.py, ADR 0063), `mrtr` (2026-07-28: the call
returns a question with a sealed state and the retry carries the answer) and `token` (a
client that cannot show a dialog, or a server started with ELICITATION=false) and `app` (a host
that shows MCP Apps views but no dialog: the call returns an approval view whose button calls an
app-only tool with a single-use ticket; ADR 0049). Every path
validates first, decides from data, asks, re-checks the stored object right before the
write, and only then runs the tool.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from domain.calls import ValidCall
from domain.guard import outcomes
from domain.guard.audit import Outcome, Path
from domain.guard.fingerprint import CONFIRM_TOKEN_ARG, fingerprint
from domain.guard.policy import POLICY_ASK, Decision, covers, decide, denied, lifetime, needs_current
from domain.guard.tokens import TOKEN_TTL_SECONDS
from domain.guard.view_ticket import ended
from domain.tools import ToolSpec
from ports.asker import Answer, no_answer
from ports.audit import AuditSink, AuditUnwritable
from ports.clock import Clock
from ports.fingerprint_keys import FingerprintKeys
from ports.forge import Forge, ForgeError, InvalidArguments, ToolResult
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.bindings import ticket_binding, token_binding
from ports.use_cases.call_context import CallContext, CallOutcome, Channel, Complete, NeedInput
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from ports.use_cases.earlier_attempts import EarlierAttempts
from ports.use_cases.guard_audit import PATHS, GuardAudit
from ports.use_cases.page_channel import ask_on_a_page
from ports.use_cases.sealed_questions import SEALED_TTL_SECONDS, SealedQuestions
from ports.use_cases.view_tickets import ViewTickets

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


# A push dialog re-asks when the object changed while the person read; past this, give up.
MAX_PUSH_ROUNDS = 3

_PATHS: Mapping[Channel, Path] = PATHS


@dataclass(frozen=True, slots=True)
class _Reask:
    """The stored object changed after the approval so that the call widens something not shown."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class _Call:
    valid: ValidCall
    # The call's fingerprint under each key of the ring, the current key first: only keyed
    # fingerprints leave the process (requestState, token-store keys), so none of them can be
    # tested against guesses of a body value without the server's key.
    fingerprints: tuple[str, ...]
    decision: Decision
    needs_current: bool
    ctx: CallContext

    @property
    def fingerprint(self) -> str:
        """The one new questions and tokens are issued under."""
        return self.fingerprints[0]

    @property
    def path(self) -> Path:
        return _PATHS[self.ctx.channel]

    @property
    def spec(self) -> ToolSpec:
        return self.valid.spec

    @property
    def args(self) -> Mapping[str, Any]:
        return self.valid.args


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
    ) -> None:
        """`elicitation_enabled=False` (ELICITATION=false): every guarded call takes the token path.

        `keys` keys every fingerprint before it leaves the process.

        `local_token_store`: None when pending tokens are shared by every process of this server
        (Redis); when they live in this process's memory, the setting that would share them, for
        the rejected-token answer to name (a second call that reaches another process never fits).

        `view_uri`: the forge's approval view (a `ui://` resource), named by a guarded call's result for a
        client that shows MCP Apps but no dialog (ADR 0049).
        """
        self._forge = forge
        self._keys = keys
        self._calls = forge.calls
        self._confirmations = confirmations
        self._tickets = ViewTickets(confirmations, clock)
        self._earlier = EarlierAttempts(confirmations)
        self._sealed = sealed
        self._audit = GuardAudit(audit, clock)
        self._clock = clock
        self._elicitation_enabled = elicitation_enabled
        self._local_token_store = local_token_store
        self._view_uri = view_uri

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
        if ctx.channel == "app" and ctx.ticket is not None and ctx.answer is not None:
            # The approval view's answer: whatever the call now is, its ticket decides whether
            # anything may run, at most once (ADR 0066).
            keyed = self._keys.keyed(fingerprint(spec, args, ctx.principal))
            return await self._app_answer(_Call(valid, keyed, decision, reads, ctx), ctx.ticket, ctx.answer)
        if not decision.ask and ctx.answer is not None and not ctx.answer.is_yes:
            # This request carries a person's no to this call's question (the view's Decline, a
            # 2026-07-28 retry's decline), their dismissal or no answer, and the object changed
            # meanwhile so that the call no longer asks: nothing runs all the same. They refused the
            # whole call, every field of it, not only what the question named. (When it still asks,
            # its channel closes the question, using up the view's ticket.)
            keyed = self._keys.keyed(fingerprint(spec, args, ctx.principal))
            return self._not_approved(_Call(valid, keyed, decision, reads, ctx), ctx.answer)
        if not decision.ask:
            # The harmless direction applies at once: asking about it teaches people to click through.
            return Complete(await self._calls.execute(valid, ctx.credential))

        if not self._elicitation_enabled:
            ctx = CallContext(
                ctx.principal, ctx.credential, "token", no_dialog="server", quota_owner=ctx.quota_owner
            )
        call = _Call(valid, self._keys.keyed(fingerprint(spec, args, ctx.principal)), decision, reads, ctx)
        if ctx.channel == "push":
            return await self._push(call)
        if ctx.channel == "mrtr":
            return await self._mrtr(call)
        if ctx.channel == "app":
            # A confirm_token is never a ticket: a call carrying one still gets a view.
            return await self._app(call)
        if ctx.channel == "page":
            return await ask_on_a_page(self, call, token)
        return await self._token(call, token)

    # ------------------------------------------------------------------ channels

    async def _push(self, call: _Call) -> CallOutcome:
        asker = call.ctx.asker
        if asker is None:
            raise RuntimeError("the push channel needs an Asker")
        decision = call.decision
        for _ in range(MAX_PUSH_ROUNDS):
            question = await self._asking(call, decision)
            self._record(call, "asked")
            asked_at = self._clock.now()
            with self._closing(call):
                answer = await asker.ask(question)
            if answer.is_yes and self._late(call, asked_at):
                # A policy's shorter life (ADR 0079): a yes given after it is no answer.
                answer = no_answer("timeout")
            if not answer.is_yes:
                return self._not_approved(call, answer)
            self._record(call, "approved")
            applied = await self._apply(call, decision.reasons)
            if isinstance(applied, Complete):
                return applied
            decision = applied.decision
        return Complete(outcomes.kept_changing())

    async def _mrtr(self, call: _Call) -> CallOutcome:
        ctx = call.ctx
        if ctx.request_state is None:
            return await self._question(call, call.decision)
        opened = self._sealed.open(
            ctx.request_state, tool=call.spec.name, fingerprint=call.fingerprints, principal=ctx.principal
        )
        if opened is None:
            # Likeliest cause: a gateway that slept while the person read. No answer, not an error.
            self._record(call, "seal_rejected")
            return await self._question(call, call.decision)
        if ctx.answer is None:
            # The retry carries our state but no answer to its question: that question is closed
            # unanswered, and a fresh one is asked.
            self._record(call, "no_answer")
            return await self._question(call, call.decision)
        if not ctx.answer.is_yes:
            return self._not_approved(call, ctx.answer)
        if not covers(opened.reasons, call.decision.reasons):
            # This retry widens something its question did not show (possible only when a deciding
            # argument is left out of the fingerprint): the old answer does not cover it.
            return await self._question(call, call.decision)
        try:
            first = await self._sealed.consume(opened, call.ctx.owner)
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(outcomes.store_unavailable(e))
        if not first:
            # At most once (guard.md §7): this answer was acted on already (a retry whose result was
            # lost, a replayed gateway leg, a loop). The world may have moved since: ask again.
            self._record(call, "seal_rejected")
            return await self._question(call, call.decision)
        self._record(call, "approved")
        applied = await self._apply(call, opened.reasons)
        if isinstance(applied, Complete):
            return applied
        return await self._question(call, applied.decision)

    async def _token(self, call: _Call, token: object) -> CallOutcome:
        bindings = tuple(token_binding(fp, call.decision.reasons) for fp in call.fingerprints)
        try:
            if token is None:
                issued = await self._confirmations.issue(
                    bindings[0], call.ctx.owner, ttl=self._life(call, TOKEN_TTL_SECONDS)
                )
                self._record(call, "token_issued")
                return Complete(await self._token_issued(call, issued))
            outcome = await self._confirmations.redeem(bindings, token, call.ctx.owner)
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(outcomes.store_unavailable(e))
        if outcome is RedeemOutcome.REJECTED:
            self._record(call, "token_rejected")
            return Complete(self._on_path(call, outcomes.token_rejected(local_store=self._local_token_store)))
        self._record(call, "approved")
        applied = await self._apply(call, call.decision.reasons)
        if isinstance(applied, Complete):
            return applied
        self._record(call, "token_rejected")
        return Complete(outcomes.changed_since_token())

    async def _app(self, call: _Call) -> CallOutcome:
        """The MCP Apps view: the first call returns it with a fresh ticket; the view's button sends
        the ticket back (through the app-only tool) with the person's answer (`_app_answer`)."""
        try:
            return Complete((await self._view(call, call.decision))[0])
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(outcomes.store_unavailable(e))

    async def _app_answer(self, call: _Call, ticket: str, answer: Answer) -> CallOutcome:
        """The view's Approve or Decline. An open ticket is used up by the answer, whatever it is;
        a closed one (answered in this showing of the view or another, expired, another caller's)
        runs nothing and asks nothing again: its answer says what the ticket came to."""
        owner = call.ctx.owner
        try:
            fits = False
            if call.decision.ask:
                bindings = tuple(ticket_binding(fp, call.decision.reasons) for fp in call.fingerprints)
                fits = await self._tickets.redeem(bindings, ticket, owner) is RedeemOutcome.ACCEPTED
                if not fits:
                    self._record(call, "ticket_rejected")
            # A ticket that does not fit may still be open: issued for this call before what it would
            # do changed (or the view sent other arguments), or the call no longer asks at all. The
            # answer still closes it, once; a closed one runs nothing.
            if not fits and not await self._tickets.retire(
                ticket, await self._tickets.record(ticket, owner), owner
            ):
                return Complete(await self._tickets.closed(ticket, owner))
            if not answer.is_yes:
                await self._tickets.settle(ticket, "declined", owner)
                return self._not_approved(call, answer)
            if not call.decision.ask:
                result = await self._calls.execute(call.valid, call.ctx.credential)
                await self._tickets.settle(ticket, ended(result), owner)
                return Complete(result)
            if not fits:
                # A yes to another question than this call now asks: a new question.
                return Complete(await self._replaced(call, ticket, call.decision))
            try:
                self._record(call, "approved")
            except AuditUnwritable:
                await self._tickets.settle(ticket, "not_run", owner)  # used up, and nothing sent
                raise
            # Recorded before the write: a view shown while it runs, or after this server stopped
            # in the middle, says it was approved rather than offering the question again.
            await self._tickets.settle(ticket, "approved", owner)
            applied = await self._apply(call, call.decision.reasons)
            if isinstance(applied, Complete):
                await self._tickets.settle(ticket, ended(applied.result), owner)
                return applied
            # The object changed since the view was shown so that the call widens more: ask again.
            return Complete(await self._replaced(call, ticket, applied.decision))
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(outcomes.store_unavailable(e))

    async def _replaced(self, call: _Call, ticket: str, decision: Decision) -> ToolResult:
        """A new question in place of `ticket`'s, whose record points at it."""
        fresh, new = await self._view(call, decision, changed=True)
        await self._tickets.settle(ticket, "changed", call.ctx.owner, then=new)
        return fresh

    async def _view(
        self, call: _Call, decision: Decision, *, changed: bool = False
    ) -> tuple[ToolResult, str]:
        life = self._life(call, TOKEN_TTL_SECONDS)
        ticket = await self._tickets.issue(
            ticket_binding(call.fingerprint, decision.reasons), call.ctx.owner, ttl=life
        )
        self._record(call, "ticket_issued")
        shown = outcomes.view_issued(
            ticket,
            tool=call.spec.name,
            question=await self._asking(call, decision),
            ttl_seconds=life,
            resource_uri=self._view_uri,
            changed=changed,
        )
        return self._on_path(call, shown), ticket

    async def view_state(self, ticket: object, ctx: CallContext) -> ToolResult:
        """What the approval view is told when it is shown (ADR 0066); reads only."""
        return await self._tickets.told(ticket, ctx.owner)

    # ------------------------------------------------------------------ steps

    async def _apply(self, call: _Call, approved: frozenset[str]) -> Complete | _Reask:
        """Re-check at apply time, then run. The approval covers only the reasons it was shown."""
        with self._closing(call):
            return await self._recheck_and_run(call, approved)

    async def _recheck_and_run(self, call: _Call, approved: frozenset[str]) -> Complete | _Reask:
        if call.needs_current:
            try:
                current = await self._calls.current(call.valid, call.ctx.credential)
            except ForgeError as e:
                self._record(call, "failed")
                return Complete(outcomes.read_failed(e, again=True))
            now = decide(call.spec, call.args, current, self._forge.rules)
            if now.ask and not covers(approved, now.reasons):
                return _Reask(now)
        result = await self._calls.execute(call.valid, call.ctx.credential)
        if result.unknown is not None:
            # The write may have reached the forge and no answer said how it went: never "failed"
            # (a person who reads that says yes again, and it runs twice), and the next question says so.
            self._record(call, "unknown", read_back=result.unknown)
            await self._earlier.remember(call.fingerprint, result.unknown, call.ctx.owner)
        else:
            self._record(call, "failed" if result.is_error else "executed")
        return Complete(result)

    async def _asking(self, call: _Call, decision: Decision) -> str:
        """The question for this call: the forge's, with a note when an earlier approved attempt of
        the same call ended with an unknown outcome (guard.md §2, §7)."""
        question = self._forge.question(call.spec, call.args, decision)
        if await self._earlier.unknown(call.fingerprints, call.ctx.owner):
            return outcomes.with_earlier_unknown(question)
        return question

    async def _question(self, call: _Call, decision: Decision) -> NeedInput:
        state = self._sealed.issue(
            call.spec.name,
            call.fingerprint,
            call.ctx.principal,
            decision.reasons,
            ttl=self._life(call, int(SEALED_TTL_SECONDS)),
        )
        question = await self._asking(call, decision)
        self._record(call, "asked")
        return NeedInput(question, state)

    def _not_approved(self, call: _Call, answer: Answer) -> Complete:
        """The question's closing line and result when it ended without a yes: the person's no, their
        dismissal, or no answer at all (never worded or recorded as the person's no)."""
        if answer.no_answer is not None:
            self._record(call, "no_answer")
            return Complete(self._on_path(call, outcomes.no_answer(answer.no_answer)))
        cancelled = answer.action == "cancel"
        self._record(call, "cancelled" if cancelled else "declined")
        return Complete(self._on_path(call, outcomes.declined(cancelled=cancelled)))

    @staticmethod
    def _on_path(call: _Call, result: ToolResult) -> ToolResult:
        """The guard's own answer names the way the person was asked in the audit's words (`path`,
        and `reached` on the page), so a client and the audit trail say one thing."""
        said: dict[str, Any] = {"path": call.path}
        if call.ctx.channel == "page" and call.ctx.reached is not None:
            said["reached"] = call.ctx.reached
        return replace(result, structured={**result.structured, **said})

    @contextmanager
    def _closing(self, call: _Call) -> Iterator[None]:
        """While a question is open or an approved call runs: if the call ends here without a result
        (the client cancelled it or went away, which cancels this task; or a fault), the audit
        says so, so that no `asked` or `approved` line is left without its closing line."""
        try:
            yield
        except Exception:
            self._record(call, "failed")
            raise
        except BaseException:  # cancellation: the request was cancelled, timed out or its client left
            self._record(call, "abandoned")
            raise

    async def _token_issued(self, call: _Call, token: str) -> ToolResult:
        issued = outcomes.token_issued(
            token,
            no_dialog=call.ctx.no_dialog,
            question=await self._asking(call, call.decision),
            ttl_seconds=self._life(call, TOKEN_TTL_SECONDS),
        )
        return self._on_path(call, issued)

    @staticmethod
    def _life(call: _Call, default: int) -> int:
        """How long this call's question, seal, ticket or token lives: `default`, or the operator's
        shorter `expires_in` for the tool (ADR 0079)."""
        return lifetime(call.spec, default)

    def _late(self, call: _Call, asked_at: float) -> bool:
        """A pushed question's life is the client's and the adapter's time-out; a policy's shorter
        `expires_in` is checked here, when the answer comes (the dialog may stay open until then)."""
        policy = call.spec.policy
        expires_in = policy.expires_in if policy is not None else None
        return expires_in is not None and self._clock.now() > asked_at + expires_in

    def _denied(self, tool: str, arguments: Mapping[str, Any] | None, ctx: CallContext) -> ToolResult:
        """The answer for a tool the policy denies, recorded with the rule that refused it. The
        arguments are validated only for the record's targets; nothing else is done with them."""
        spec = self._forge.catalogue.get(tool)
        try:
            args: Mapping[str, Any] = self._calls.prepare(tool, arguments).without(CONFIRM_TOKEN_ARG).args
        except InvalidArguments:
            args = {}
        if not self._elicitation_enabled:
            ctx = replace(ctx, channel="token")  # the path a question would have taken
        self._audit.write(spec, args, ctx, "denied", f"tools.{tool}.deny")
        return outcomes.denied_by_policy()

    def _record(self, call: _Call, outcome: Outcome, *, read_back: str | None = None) -> None:
        # The rule that added this call's question, when the policy did (ADR 0079).
        rule = f"tools.{call.spec.name}.ask" if POLICY_ASK in call.decision.reasons else None
        self._audit.write(call.spec, call.args, call.ctx, outcome, rule, read_back)
