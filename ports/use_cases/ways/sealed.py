"""The 2026-07-28 question: the call answers `input_required` with a sealed state, and the retry
carries the person's answer (ADR 0048); a seal that does not open earns a fresh question."""

from domain.guard import outcomes
from domain.guard.policy import covers
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.call_context import CallOutcome, Complete
from ports.use_cases.guard_steps import GuardedCall, GuardSteps


class SealedWay:
    def __init__(self, steps: GuardSteps) -> None:
        self._steps = steps

    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        steps, ctx = self._steps, call.ctx
        if ctx.request_state is None:
            return await steps.question(call, call.decision)
        opened = steps.sealed.open(
            ctx.request_state, tool=call.spec.name, fingerprint=call.fingerprints, principal=ctx.principal
        )
        if opened is None:
            # Likeliest cause: a gateway that slept while the person read. No answer, not an error.
            steps.record(call, "seal_rejected")
            return await steps.question(call, call.decision)
        if ctx.answer is None:
            # The retry carries our state but no answer to its question: that question is closed
            # unanswered, and a fresh one is asked.
            steps.record(call, "no_answer")
            return await steps.question(call, call.decision)
        if not ctx.answer.is_yes:
            return steps.not_approved(call, ctx.answer)
        if not covers(opened.reasons, call.decision.reasons):
            # This retry widens something its question did not show (possible only when a deciding
            # argument is left out of the fingerprint): the old answer does not cover it.
            return await steps.question(call, call.decision)
        try:
            first = await steps.sealed.consume(opened, ctx.owner)
        except TokenStoreUnavailable as e:
            steps.record(call, "failed")
            return Complete(outcomes.store_unavailable(e))
        if not first:
            # At most once (guard.md §7): this answer was acted on already (a retry whose result was
            # lost, a replayed gateway leg, a loop). The world may have moved since: ask again.
            steps.record(call, "seal_rejected")
            return await steps.question(call, call.decision)
        steps.record(call, "approved")
        applied = await steps.apply(call, opened.reasons)
        if isinstance(applied, Complete):
            return applied
        return await steps.question(call, applied.decision)
