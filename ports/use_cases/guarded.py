"""One guarded tool call on any channel: nothing that changes state runs until a valid approval for exactly this call exists.

Channels: `push` (a 2025-11-25 dialog while the call waits), `mrtr` (2026-07-28: the call
returns a question with a sealed state and the retry carries the answer) and `token` (a
client that cannot show a dialog, or a server started with ELICITATION=false). Every path
validates first, decides from data, asks, re-checks the stored object right before the
write, and only then runs the tool.
"""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from domain.arguments import ArgumentError
from domain.guard.audit import Outcome, Path, audit_event
from domain.guard.fingerprint import CONFIRM_TOKEN_ARG, audit_fingerprint, canonical_json, fingerprint
from domain.guard.policy import Decision, WideningRule, covers, decide, needs_current
from domain.guard.question import flatten
from domain.guard.tokens import TOKEN_TTL_SECONDS
from domain.tools import Catalogue, ToolSpec
from domain.woodpecker.questions import question_for
from ports.asker import Answer, Asker
from ports.audit import AuditSink
from ports.clock import Clock
from ports.progress import Progress
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from ports.use_cases.sealed_questions import SealedQuestions
from ports.use_cases.tools import InvalidArguments, ToolResult, ToolRunner
from ports.woodpecker import Credential, WoodpeckerError

Channel = Literal["push", "mrtr", "token"]
# Who did not ask, on the token path: the client (it declared no dialog), this server (started with
# ELICITATION=false), or this server's connection (the client can show a dialog, but this connection
# has no way to reach it during the call). Only the first blames the client.
NoDialog = Literal["client", "server", "connection"]

# A push dialog re-asks when the object changed while the person read; past this, give up.
MAX_PUSH_ROUNDS = 3

_PATHS: Mapping[Channel, Path] = {"push": "dialog", "mrtr": "sealed", "token": "token"}


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who calls and how a person can be reached for this one call.

    `answer` and `request_state` are the 2026-07-28 retry's answer to our `confirm` question
    (already read out of `inputResponses`) and its opaque state; both None on a first call.
    """

    principal: str | None
    credential: Credential | None
    channel: Channel
    asker: Asker | None = None
    answer: Answer | None = None
    request_state: str | None = None
    no_dialog: NoDialog = "client"
    # The tools this caller was listed (an HTTP toolset header narrowed them); None: the whole
    # catalogue. A tool outside it is unknown to this caller, as it is absent from its list.
    listed: frozenset[str] | None = None
    # Where a long unguarded call (wait_for_pipeline) reports how it goes; None: the client did not ask.
    progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class Complete:
    """The call is over: this is its result (which may say nothing was done)."""

    result: ToolResult


@dataclass(frozen=True, slots=True)
class NeedInput:
    """2026-07-28 only: show `message` with one boolean `confirm`, then retry with `request_state`."""

    message: str
    request_state: str


CallOutcome = Complete | NeedInput


@dataclass(frozen=True, slots=True)
class _Reask:
    """The stored object changed after the approval so that the call widens something not shown."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class _Call:
    spec: ToolSpec
    args: dict[str, Any]
    fingerprint: str
    decision: Decision
    needs_current: bool
    ctx: CallContext

    @property
    def path(self) -> Path:
        return _PATHS[self.ctx.channel]


def error_result(kind: str, message: str, **extra: Any) -> ToolResult:
    """An error result in the runner's shape: `{"error": {"kind", "message"}}` plus `extra`."""
    return ToolResult(
        structured={"error": {"kind": kind, "message": message}, **extra}, text=message, is_error=True
    )


def token_binding(fp: str, reasons: frozenset[str]) -> str:
    """What a two-call token is bound to: the call's fingerprint and the reasons its first call showed.

    If the stored object changes between the two calls so that the call widens differently,
    the token no longer fits and the caller must ask for a new one (fail closed).
    """
    material = canonical_json([fp, sorted(reasons)])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class GuardedCalls:
    def __init__(
        self,
        catalogue: Catalogue,
        rules: Mapping[str, WideningRule],
        runner: ToolRunner,
        confirmations: Confirmations,
        sealed: SealedQuestions,
        audit: AuditSink,
        clock: Clock,
        *,
        elicitation_enabled: bool,
    ) -> None:
        self._catalogue = catalogue
        self._rules = rules
        self._runner = runner
        self._confirmations = confirmations
        self._sealed = sealed
        self._audit = audit
        self._clock = clock
        self._elicitation_enabled = elicitation_enabled

    @property
    def elicitation_enabled(self) -> bool:
        return self._elicitation_enabled

    async def call(self, tool: str, arguments: Mapping[str, Any] | None, ctx: CallContext) -> CallOutcome:
        """Run `tool` if it needs no approval, or once a valid approval for exactly this call exists.

        Invalid arguments, an unknown tool, a no, a bad token: a result saying so, never a write.
        """
        if tool not in self._catalogue or (ctx.listed is not None and tool not in ctx.listed):
            return Complete(
                error_result(
                    "unknown_tool", f"Unknown tool: {flatten(tool, 60)}. Call tools/list to see the tools."
                )
            )
        spec = self._catalogue.get(tool)
        try:
            args = self._runner.validate(tool, arguments)
        except (InvalidArguments, ArgumentError) as e:
            return Complete(error_result("invalid_arguments", str(e)))
        token = args.pop(CONFIRM_TOKEN_ARG, None)
        if spec.guard is None or self._runner.setup_for(ctx.credential) is not None:
            # Nothing can reach Woodpecker: say how to set it up rather than ask about a call
            # that could never run.
            return Complete(await self._runner.run(tool, args, ctx.credential, ctx.progress))

        reads = needs_current(spec, args, self._rules)
        current: Mapping[str, Any] | None = None
        if reads:
            try:
                current = await self._runner.read_current(tool, args, ctx.credential)
            except WoodpeckerError as e:
                return Complete(
                    error_result("read_failed", f"Nothing was done: reading the current state failed. {e}")
                )
        decision = decide(spec, args, current, self._rules)
        if not decision.ask:
            # The harmless direction applies at once: asking about it teaches people to click through.
            return Complete(await self._runner.run(tool, args, ctx.credential))

        if not self._elicitation_enabled:
            ctx = CallContext(ctx.principal, ctx.credential, "token", no_dialog="server")
        call = _Call(spec, args, fingerprint(spec, args, ctx.principal), decision, reads, ctx)
        if ctx.channel == "push":
            return await self._push(call)
        if ctx.channel == "mrtr":
            return await self._mrtr(call)
        return await self._token(call, token)

    # ------------------------------------------------------------------ channels

    async def _push(self, call: _Call) -> CallOutcome:
        asker = call.ctx.asker
        if asker is None:
            raise ValueError("the push channel needs an Asker")
        decision = call.decision
        for _ in range(MAX_PUSH_ROUNDS):
            self._record(call, "asked")
            answer = await asker.ask(question_for(call.spec, call.args, decision))
            if not answer.is_yes:
                return self._declined(call, answer)
            self._record(call, "approved")
            applied = await self._apply(call, decision.reasons)
            if isinstance(applied, Complete):
                return applied
            decision = applied.decision
        return Complete(
            error_result(
                "changed",
                f"Nothing was done: what {call.spec.name} would change kept changing while the "
                "question was open. Check the object and call again.",
            )
        )

    async def _mrtr(self, call: _Call) -> CallOutcome:
        ctx = call.ctx
        if ctx.request_state is None:
            return self._question(call, call.decision)
        opened = self._sealed.open(
            ctx.request_state, tool=call.spec.name, fingerprint=call.fingerprint, principal=ctx.principal
        )
        if opened is None:
            # Likeliest cause: a gateway that slept while the person read. No answer, not an error.
            self._record(call, "seal_rejected")
            return self._question(call, call.decision)
        if ctx.answer is None:
            return self._question(call, call.decision)
        if not ctx.answer.is_yes:
            return self._declined(call, ctx.answer)
        if not covers(opened.reasons, call.decision.reasons):
            # This retry widens something its question did not show (possible only when a deciding
            # argument is left out of the fingerprint): the old answer does not cover it.
            return self._question(call, call.decision)
        try:
            first = await self._sealed.consume(opened)
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(error_result("token_store_unavailable", str(e), done=False))
        if not first:
            # At most once (guard.md §7): this answer was acted on already (a retry whose result was
            # lost, a replayed gateway leg, a loop). The world may have moved since: ask again.
            self._record(call, "seal_rejected")
            return self._question(call, call.decision)
        self._record(call, "approved")
        applied = await self._apply(call, opened.reasons)
        if isinstance(applied, Complete):
            return applied
        return self._question(call, applied.decision)

    async def _token(self, call: _Call, token: object) -> CallOutcome:
        binding = token_binding(call.fingerprint, call.decision.reasons)
        try:
            if token is None:
                issued = await self._confirmations.issue(binding)
                self._record(call, "token_issued")
                return Complete(self._token_issued(call, issued))
            outcome = await self._confirmations.redeem(binding, token)
        except TokenStoreUnavailable as e:
            self._record(call, "failed")
            return Complete(error_result("token_store_unavailable", str(e), done=False))
        if outcome is RedeemOutcome.REJECTED:
            self._record(call, "token_rejected")
            return Complete(self._token_rejected(call))
        self._record(call, "approved")
        applied = await self._apply(call, call.decision.reasons)
        if isinstance(applied, Complete):
            return applied
        self._record(call, "token_rejected")
        return Complete(
            error_result(
                "changed",
                f"Nothing was done: the object changed since the token was issued, and {call.spec.name} "
                "would now change more than its first call described. Call it again without "
                "confirm_token to see what it would do now and get a new token.",
                done=False,
            )
        )

    # ------------------------------------------------------------------ steps

    async def _apply(self, call: _Call, approved: frozenset[str]) -> Complete | _Reask:
        """Re-check at apply time, then run. The approval covers only the reasons it was shown."""
        if call.needs_current:
            try:
                current = await self._runner.read_current(call.spec.name, call.args, call.ctx.credential)
            except WoodpeckerError as e:
                self._record(call, "failed")
                return Complete(
                    error_result("read_failed", f"Nothing was done: re-reading the current state failed. {e}")
                )
            now = decide(call.spec, call.args, current, self._rules)
            if now.ask and not covers(approved, now.reasons):
                return _Reask(now)
        result = await self._runner.run(call.spec.name, call.args, call.ctx.credential)
        self._record(call, "failed" if result.is_error else "executed")
        return Complete(result)

    def _question(self, call: _Call, decision: Decision) -> NeedInput:
        state = self._sealed.issue(call.spec.name, call.fingerprint, call.ctx.principal, decision.reasons)
        self._record(call, "asked")
        return NeedInput(question_for(call.spec, call.args, decision), state)

    def _declined(self, call: _Call, answer: Answer) -> Complete:
        cancelled = answer.action == "cancel"
        self._record(call, "cancelled" if cancelled else "declined")
        how = "Cancelled" if cancelled else "Declined"
        why = "the dialog was dismissed" if cancelled else "the person did not approve it"
        text = f"{how}, nothing was done: {why}, so {call.spec.name} was not run."
        return Complete(
            ToolResult(
                structured={
                    "done": False,
                    "outcome": "cancelled" if cancelled else "declined",
                    "message": text,
                },
                text=text,
            )
        )

    def _token_issued(self, call: _Call, token: str) -> ToolResult:
        if call.ctx.no_dialog == "server":
            who = "This server was started with ELICITATION=false, so it shows no dialog: nobody was asked."
        elif call.ctx.no_dialog == "connection":
            who = (
                "This server cannot reach the client during a call on this connection, so it could not "
                "show the client's dialog: nobody was asked."
            )
        else:
            who = (
                "This client did not declare the elicitation capability, so it cannot show a "
                "dialog: nobody was asked."
            )
        minutes = TOKEN_TTL_SECONDS // 60
        question = question_for(call.spec, call.args, call.decision)
        text = (
            f"Nothing was done yet. {who}\n\n"
            f"To go ahead, call {call.spec.name} again with exactly the same arguments plus "
            f'confirm_token: "{token}". The token works once, only for these arguments, for '
            f"{minutes} minutes.\n\n"
            f"What the second call will do:\n{question}\n\n"
            "The token proves only that the call was made twice with the same arguments. It "
            "does not show that a person saw or approved anything."
        )
        return ToolResult(
            structured={
                "done": False,
                "outcome": "confirmation_required",
                "confirm_token": token,
                "expires_in_seconds": TOKEN_TTL_SECONDS,
                "not_asked_by": "client" if call.ctx.no_dialog == "client" else "server",
                "message": text,
            },
            text=text,
        )

    def _token_rejected(self, call: _Call) -> ToolResult:
        return error_result(
            "token_rejected",
            "Nothing was done: that confirm_token is not valid for this call (wrong, expired, "
            "already used, or issued for other arguments). No new token was issued. Call "
            f"{call.spec.name} again without confirm_token to get one.",
            done=False,
        )

    def _record(self, call: _Call, outcome: Outcome) -> None:
        guard = call.spec.guard
        names = guard.targets if guard is not None else ()
        self._audit.record(
            audit_event(
                now=self._clock.now(),
                tool=call.spec.name,
                targets={name: call.args.get(name) for name in names if name in call.args},
                # Not the call's own fingerprint: that one digests body values (a new secret value,
                # a password), and even a short prefix of it would let a reader of the audit trail
                # test guesses of them.
                fingerprint=audit_fingerprint(call.spec, call.args, call.ctx.principal),
                path=call.path,
                outcome=outcome,
                principal=call.ctx.principal,
            )
        )
