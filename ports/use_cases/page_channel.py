"""The `page` channel (stdio, ADR 0063): the server puts the question on a page in the person's browser
itself, and the call waits for the page's decision in a window under the clients' 60 s time-out.

The guard's steps are the push dialog's (ask, record, re-check, run once); only the asking differs.
A page is keyed by the call's keyed fingerprint and the reasons it asks, so a retry of the same call
waits on the same page and no other call can collect its answer. No browser: the two-call token,
as today. The page's link never leaves the ApprovalPages adapter but to the client that offers it to
the person (URL-mode elicitation), never into a result, the audit or a log.

On 2026-07-28 (`in_results`) the link travels in an `input_required` result with a sealed state, as
the form question does; the retry's accept only means the person agreed to open the page: the call
then waits one window for the page's decision, runs once on approve, and on no decision yet answers
`input_required` again with the same link and a fresh seal.
"""

from dataclasses import replace
from typing import Any, Protocol

from domain.guard import outcomes
from domain.guard.approval_page import DEFAULT_PAGE_SECONDS, OPEN_THE_PAGE
from domain.guard.audit import Outcome
from domain.guard.policy import Decision, covers
from ports.asker import Answer
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.call_context import CallOutcome, Complete, NeedInput
from ports.use_cases.sealed_questions import SealedQuestions

MAX_PAGE_ROUNDS = 3


def page_key(fingerprint: str, reasons: frozenset[str]) -> str:
    return fingerprint + "|" + ",".join(sorted(reasons))


class _Guard(Protocol):
    """The guard's steps the page channel goes through (GuardedCalls has them)."""

    _sealed: SealedQuestions

    def _record(self, call: Any, outcome: Outcome) -> None: ...
    async def _question(self, call: Any, decision: Decision) -> NeedInput: ...
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
    as_token = _as_token(call)
    if pages is not None and via is None and call.ctx.reached == "url_elicitation":
        return await _in_results(guard, call, token)
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
            return Complete(outcomes.page_pending(life, call.ctx.reached or "browser"))
        if collected == "expired":
            guard._record(call, "expired")
            return Complete(outcomes.page_expired(call.ctx.reached or "browser"))
        if collected == "declined":
            return guard._not_approved(call, Answer("decline"))
        guard._record(call, "approved")
        applied = await guard._apply(call, decision.reasons)
        if isinstance(applied, Complete):
            return applied
        decision = applied.decision  # the object changed so that the call widens more: a new page
    return Complete(outcomes.kept_changing())


def _as_token(call: Any) -> Any:
    return replace(
        call,
        ctx=replace(
            call.ctx, channel="token", no_dialog="client", pages=None, page_opener=None, reached=None
        ),
    )


async def _in_results(guard: _Guard, call: Any, token: object) -> CallOutcome:
    """2026-07-28: the page's link in an `input_required` result; the retry collects its decision."""
    ctx = call.ctx
    if ctx.request_state is None:
        return await _offer(guard, call, call.decision, token)
    opened = guard._sealed.open(
        ctx.request_state, tool=call.spec.name, fingerprint=call.fingerprints, principal=ctx.principal
    )
    if opened is None:
        # Likeliest cause: a gateway that slept while the person read. No answer, not an error.
        guard._record(call, "seal_rejected")
        return await _offer(guard, call, call.decision, token)
    if ctx.answer is None:
        # Our state and no answer to its request: a fresh one (the same page while it is pending).
        guard._record(call, "no_answer")
        return await _offer(guard, call, call.decision, token)
    key = page_key(call.fingerprint, opened.reasons)
    if not ctx.answer.answered or ctx.answer.action != "accept":
        # The person would not open the page (or what came back is no answer): nothing runs, and
        # the page, if they open it after all, says so.
        ctx.pages.withdraw(key)
        return guard._not_approved(call, ctx.answer)
    if not covers(opened.reasons, call.decision.reasons):
        # This retry widens something its page did not show: that page's answer does not cover it.
        return await _offer(guard, call, call.decision, token)
    try:
        first = await guard._sealed.consume(opened, ctx.owner)
    except TokenStoreUnavailable as e:
        guard._record(call, "failed")
        return Complete(outcomes.store_unavailable(e))
    if not first:
        # At most once (guard.md §7): this retry was acted on already (a replayed gateway leg, a loop).
        guard._record(call, "seal_rejected")
        return await _offer(guard, call, call.decision, token)
    with guard._closing(call):
        collected = await ctx.pages.wait(key, ctx.pages.window_seconds, ctx.progress)
    if collected == "pending":
        # No decision in this window: the same page again, under a fresh seal.
        guard._record(call, "pending")
        return await _offer(guard, call, call.decision, token)
    if collected == "expired":
        guard._record(call, "expired")
        return Complete(outcomes.page_expired("url_elicitation"))
    if collected == "declined":
        return guard._not_approved(call, Answer("decline"))
    guard._record(call, "approved")
    applied = await guard._apply(call, opened.reasons)
    if isinstance(applied, Complete):
        return applied
    # The object changed so that the call widens more than the page showed: a new page.
    return await _offer(guard, call, applied.decision, token)


async def _offer(guard: _Guard, call: Any, decision: Decision, token: object) -> CallOutcome:
    """A sealed question whose request is the page's link; the two-call token when no page can be served."""
    pages = call.ctx.pages
    question = await guard._asking(call, decision)
    offered = await pages.offer(
        page_key(call.fingerprint, decision.reasons), question, guard._life(call, DEFAULT_PAGE_SECONDS)
    )
    if offered is None:
        return await guard._token(_as_token(call), token)
    asked = await guard._question(call, decision)
    return replace(asked, message=asked.message + OPEN_THE_PAGE, page=offered)
