"""The steps every way of asking shares: the call being guarded, its question, its audit lines, the
re-check right before the write and the run, and the words of a question that ended without a yes.

GuardedCalls (ports/use_cases/guarded.py) decides whether a call asks; each way of asking
(ports/use_cases/ways/) puts the question to the person through its own port and goes through
these steps, so that every way asks, records, re-checks and runs alike.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from domain.calls import ValidCall
from domain.guard import outcomes
from domain.guard.audit import Outcome, Path
from domain.guard.policy import POLICY_ASK, Decision, covers, decide, lifetime
from domain.tools import ToolSpec
from ports.approval_pages import Approver
from ports.asker import Answer
from ports.clock import Clock
from ports.forge import Forge, ForgeError, ToolResult
from ports.use_cases.call_context import CallContext, Complete, NeedInput
from ports.use_cases.earlier_attempts import EarlierAttempts
from ports.use_cases.guard_audit import PATHS, GuardAudit
from ports.use_cases.sealed_questions import SEALED_TTL_SECONDS, SealedQuestions

# The audit's rule for a four-eyes call refused because no signed-in page could reach a second person.
FOUR_EYES_RULE = "four_eyes"


@dataclass(frozen=True, slots=True)
class Reask:
    """The stored object changed after the approval so that the call widens something not shown."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class GuardedCall:
    """One call that asks: validated, decided, with who calls and how the person is reached."""

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
        return PATHS[self.ctx.channel]

    @property
    def spec(self) -> ToolSpec:
        return self.valid.spec

    @property
    def args(self) -> Mapping[str, Any]:
        return self.valid.args


class GuardSteps:
    def __init__(
        self,
        forge: Forge,
        sealed: SealedQuestions,
        audit: GuardAudit,
        clock: Clock,
        earlier: EarlierAttempts,
    ) -> None:
        self._forge = forge
        self._calls = forge.calls
        self.sealed = sealed
        self._audit = audit
        self._clock = clock
        self._earlier = earlier

    def now(self) -> float:
        return self._clock.now()

    async def apply(self, call: GuardedCall, approved: frozenset[str]) -> Complete | Reask:
        """Re-check at apply time, then run. The approval covers only the reasons it was shown."""
        with self.closing(call):
            return await self._recheck_and_run(call, approved)

    async def _recheck_and_run(self, call: GuardedCall, approved: frozenset[str]) -> Complete | Reask:
        if call.needs_current:
            try:
                current = await self._calls.current(call.valid, call.ctx.credential)
            except ForgeError as e:
                self.record(call, "failed")
                return Complete(outcomes.read_failed(e, again=True))
            now = decide(call.spec, call.args, current, self._forge.rules)
            if now.ask and not covers(approved, now.reasons):
                return Reask(now)
        result = await self._calls.execute(call.valid, call.ctx.credential)
        if result.unknown is not None:
            # The write may have reached the forge and no answer said how it went: never "failed"
            # (a person who reads that says yes again, and it runs twice), and the next question says so.
            self.record(call, "unknown", read_back=result.unknown)
            await self._earlier.remember(call.fingerprint, result.unknown, call.ctx.owner)
        else:
            self.record(call, "failed" if result.is_error else "executed")
        return Complete(result)

    async def asking(self, call: GuardedCall, decision: Decision) -> str:
        """The question for this call: the forge's, with a note when an earlier approved attempt of
        the same call ended with an unknown outcome (guard.md §2, §7)."""
        question = self._forge.question(call.spec, call.args, decision)
        if await self._earlier.unknown(call.fingerprints, call.ctx.owner):
            return outcomes.with_earlier_unknown(question)
        return question

    async def question(self, call: GuardedCall, decision: Decision) -> NeedInput:
        """A 2026-07-28 question for this call under a fresh seal, recorded as asked."""
        state = self.sealed.issue(
            call.spec.name,
            call.fingerprint,
            call.ctx.principal,
            decision.reasons,
            ttl=self.life(call, int(SEALED_TTL_SECONDS)),
        )
        question = await self.asking(call, decision)
        self.record(call, "asked")
        return NeedInput(question, state)

    def not_approved(self, call: GuardedCall, answer: Answer, approver: Approver | None = None) -> Complete:
        """The question's closing line and result when it ended without a yes: the person's no, their
        dismissal, or no answer at all (never worded or recorded as the person's no)."""
        if answer.no_answer is not None:
            self.record(call, "no_answer")
            return Complete(self.on_path(call, outcomes.no_answer(answer.no_answer)))
        cancelled = answer.action == "cancel"
        self.record(call, "cancelled" if cancelled else "declined", approver=approver)
        return Complete(self.on_path(call, outcomes.declined(cancelled=cancelled)))

    @staticmethod
    def on_path(call: GuardedCall, result: ToolResult) -> ToolResult:
        """The guard's own answer names the way the person was asked in the audit's words (`path`,
        and `reached` on the page), so a client and the audit trail say one thing."""
        said: dict[str, Any] = {"path": call.path}
        if call.ctx.channel == "page" and call.ctx.reached is not None:
            said["reached"] = call.ctx.reached
        return replace(result, structured={**result.structured, **said})

    @contextmanager
    def closing(self, call: GuardedCall) -> Iterator[None]:
        """While a question is open or an approved call runs: if the call ends here without a result
        (the client cancelled it or went away, which cancels this task; or a fault), the audit
        says so, so that no `asked` or `approved` line is left without its closing line."""
        try:
            yield
        except Exception:
            self.record(call, "failed")
            raise
        except BaseException:  # cancellation: the request was cancelled, timed out or its client left
            self.record(call, "abandoned")
            raise

    @staticmethod
    def life(call: GuardedCall, default: int) -> int:
        """How long this call's question, seal, ticket or token lives: `default`, or the operator's
        shorter `expires_in` for the tool (ADR 0079)."""
        return lifetime(call.spec, default)

    def late(self, call: GuardedCall, asked_at: float) -> bool:
        """A pushed question's life is the client's and the adapter's time-out; a policy's shorter
        `expires_in` is checked here, when the answer comes (the dialog may stay open until then)."""
        policy = call.spec.policy
        expires_in = policy.expires_in if policy is not None else None
        return expires_in is not None and self._clock.now() > asked_at + expires_in

    def four_eyes_refused(self, spec: ToolSpec, args: Mapping[str, Any], ctx: CallContext) -> Complete:
        """A four-eyes call no signed-in page can reach (ADR 0086): refused, nothing asked or sent, and
        recorded as the operator's rule that refused it."""
        self._audit.write(spec, args, ctx, "denied", FOUR_EYES_RULE)
        return Complete(outcomes.four_eyes_unreachable())

    def record(
        self,
        call: GuardedCall,
        outcome: Outcome,
        *,
        read_back: str | None = None,
        approver: Approver | None = None,
    ) -> None:
        # The rule that added this call's question, when the policy did (ADR 0079).
        rule = f"tools.{call.spec.name}.ask" if POLICY_ASK in call.decision.reasons else None
        self._audit.write(call.spec, call.args, call.ctx, outcome, rule, read_back, approver)

    def line(self, call: GuardedCall, outcome: Outcome) -> dict[str, object]:
        """The audit line `record` would write for `outcome` now, without an approver (not written)."""
        rule = f"tools.{call.spec.name}.ask" if POLICY_ASK in call.decision.reasons else None
        return self._audit.event(call.spec, call.args, call.ctx, outcome, rule)
