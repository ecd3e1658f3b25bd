"""The two-call token, last: a client that cannot show a dialog, or a server started with
ELICITATION=false. It proves only that the call was made twice, and its answer says so."""

from domain.guard import outcomes
from domain.guard.tokens import TOKEN_TTL_SECONDS
from ports.forge import ToolResult
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.bindings import token_binding
from ports.use_cases.call_context import CallOutcome, Complete
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from ports.use_cases.guard_steps import GuardedCall, GuardSteps


class TokenWay:
    def __init__(
        self, steps: GuardSteps, confirmations: Confirmations, local_token_store: str | None
    ) -> None:
        """`local_token_store`: see GuardedCalls."""
        self._steps = steps
        self._confirmations = confirmations
        self._local_token_store = local_token_store

    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        steps = self._steps
        bindings = tuple(token_binding(fp, call.decision.reasons) for fp in call.fingerprints)
        try:
            if token is None:
                issued = await self._confirmations.issue(
                    bindings[0], call.ctx.owner, ttl=steps.life(call, TOKEN_TTL_SECONDS)
                )
                steps.record(call, "token_issued")
                return Complete(await self._issued(call, issued))
            outcome = await self._confirmations.redeem(bindings, token, call.ctx.owner)
        except TokenStoreUnavailable as e:
            steps.record(call, "failed")
            return Complete(outcomes.store_unavailable(e))
        if outcome is RedeemOutcome.REJECTED:
            steps.record(call, "token_rejected")
            return Complete(steps.on_path(call, outcomes.token_rejected(local_store=self._local_token_store)))
        steps.record(call, "approved")
        applied = await steps.apply(call, call.decision.reasons)
        if isinstance(applied, Complete):
            return applied
        steps.record(call, "token_rejected")
        return Complete(outcomes.changed_since_token())

    async def _issued(self, call: GuardedCall, token: str) -> ToolResult:
        issued = outcomes.token_issued(
            token,
            no_dialog=call.ctx.no_dialog,
            question=await self._steps.asking(call, call.decision),
            ttl_seconds=self._steps.life(call, TOKEN_TTL_SECONDS),
        )
        return self._steps.on_path(call, issued)
