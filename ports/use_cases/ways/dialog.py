"""The form dialog pushed during the call (2025-11-25 `elicitation/create`, the `Asker` port)."""

from domain.guard import outcomes
from ports.asker import no_answer
from ports.use_cases.call_context import CallOutcome, Complete
from ports.use_cases.guard_steps import GuardedCall, GuardSteps

# A push dialog re-asks when the object changed while the person read; past this, give up.
MAX_PUSH_ROUNDS = 3


class DialogWay:
    def __init__(self, steps: GuardSteps) -> None:
        self._steps = steps

    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        steps, asker = self._steps, call.ctx.asker
        if asker is None:
            raise RuntimeError("the push channel needs an Asker")
        decision = call.decision
        for _ in range(MAX_PUSH_ROUNDS):
            question = await steps.asking(call, decision)
            steps.record(call, "asked")
            asked_at = steps.now()
            with steps.closing(call):
                answer = await asker.ask(question)
            if answer.is_yes and steps.late(call, asked_at):
                # A policy's shorter life (ADR 0079): a yes given after it is no answer.
                answer = no_answer("timeout")
            if not answer.is_yes:
                return steps.not_approved(call, answer)
            steps.record(call, "approved")
            applied = await steps.apply(call, decision.reasons)
            if isinstance(applied, Complete):
                return applied
            decision = applied.decision
        return Complete(outcomes.kept_changing())
