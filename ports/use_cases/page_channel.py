"""The `page` channel (stdio, ADR 0063): the server puts the question on a page in the person's browser
itself, and the call waits for the page's decision in a window under the clients' 60 s time-out.

The guard's steps are the push dialog's (ask, record, re-check, run once); only the asking differs.
A page is keyed by the call's keyed fingerprint and the reasons it asks, so a retry of the same call
waits on the same page and no other call can collect its answer. No browser: the two-call token,
as today. The page's link never leaves the ApprovalPages adapter.
"""

from dataclasses import replace
from typing import Any, Protocol

from domain.guard import outcomes
from domain.guard.approval_page import DEFAULT_PAGE_SECONDS
from domain.guard.audit import Outcome
from domain.guard.policy import Decision
from ports.asker import Answer
from ports.use_cases.call_context import CallOutcome, Complete

MAX_PAGE_ROUNDS = 3


def page_key(fingerprint: str, reasons: frozenset[str]) -> str:
    return fingerprint + "|" + ",".join(sorted(reasons))


class _Guard(Protocol):
    """The guard's steps the page channel goes through (GuardedCalls has them)."""

    def _record(self, call: Any, outcome: Outcome) -> None: ...
    async def _asking(self, call: Any, decision: Decision) -> str: ...
    async def _apply(self, call: Any, approved: frozenset[str]) -> Any: ...
    def _not_approved(self, call: Any, answer: Answer) -> Complete: ...
    async def _token(self, call: Any, token: object) -> CallOutcome: ...
    def _closing(self, call: Any) -> Any: ...
    @staticmethod
    def _life(call: Any, default: int) -> int: ...


async def ask_on_a_page(guard: _Guard, call: Any, token: object) -> CallOutcome:
    """Ask on the page and wait; run once on approve. `call` is the guard's `_Call`."""
    pages, via = call.ctx.pages, call.ctx.page_opener
    as_token = replace(
        call, ctx=replace(call.ctx, channel="token", no_dialog="client", pages=None, page_opener=None)
    )
    if pages is None or (via is None and not await pages.available()):
        return await guard._token(as_token, token)
    life = guard._life(call, DEFAULT_PAGE_SECONDS)
    decision: Decision = call.decision
    for _ in range(MAX_PAGE_ROUNDS):
        key = page_key(call.fingerprint, decision.reasons)
        question = await guard._asking(call, decision)
        guard._record(call, "asked")
        collected = "pending"
        with guard._closing(call):
            shown = await pages.show(key, question, life, via)
            if shown == "shown":
                collected = await pages.wait(key, pages.window_seconds, call.ctx.progress)
                if collected != "pending" and via is not None:
                    await via.done()
        if shown == "refused":
            # The person would not open the page (URL mode's decline or cancel): their no.
            return guard._not_approved(call, Answer("decline"))
        if shown == "unavailable":
            # The browser could not be opened after all, or the client not asked: nobody saw this question.
            guard._record(call, "no_answer")
            return await guard._token(as_token, token)
        if collected == "pending":
            guard._record(call, "pending")
            return Complete(outcomes.page_pending(life))
        if collected == "expired":
            guard._record(call, "expired")
            return Complete(outcomes.page_expired())
        if collected == "declined":
            return guard._not_approved(call, Answer("decline"))
        guard._record(call, "approved")
        applied = await guard._apply(call, decision.reasons)
        if isinstance(applied, Complete):
            return applied
        decision = applied.decision  # the object changed so that the call widens more: a new page
    return Complete(outcomes.kept_changing())
