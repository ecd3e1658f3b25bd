"""The approval page (ADR 0063, ADR 0064, ADR 0065): the server puts the question on a page of its own
on 127.0.0.1, and only the page's form decides.

The page reaches the person in the browser the server opens itself (stdio), or through the client:
a URL-mode elicitation pushed during the call (2025-11-25), or the link in an `input_required` result
(2026-07-28). While the call waits, the page's decision is collected in a window under the clients'
60 s time-out; the guard's steps are the dialog's (ask, record, re-check, run once). A page is keyed
by the call's keyed fingerprint and the reasons it asks, so a retry of the same call waits on the
same page and no other call can collect its answer. No page can reach the person: the two-call
token. The page's link never leaves the ApprovalPages adapter but to the client that offers it to
the person, never into a result, the audit or a log.

On 2026-07-28 the retry's accept only means the person agreed to open the page: the retry's seal is
used up, the call waits one window for the page's decision, runs once on approve, and on no decision
yet answers `input_required` again with the same link and a fresh seal.
"""

from dataclasses import replace

from domain.guard import outcomes
from domain.guard.approval_page import DEFAULT_PAGE_SECONDS, OPEN_THE_PAGE
from domain.guard.policy import Decision, covers
from ports.approval_pages import ApprovalPages, Approver, Asking
from ports.asker import Answer
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.call_context import CallOutcome, Complete
from ports.use_cases.guard_steps import GuardedCall, GuardSteps
from ports.use_cases.ways.token import TokenWay

MAX_PAGE_ROUNDS = 3


def page_key(fingerprint: str, reasons: frozenset[str]) -> str:
    return fingerprint + "|" + ",".join(sorted(reasons))


def asking(steps: GuardSteps, call: GuardedCall) -> Asking:
    """Who asks (OAuth mode's page decides who may answer from it), and the audit line for a refused answer."""

    def refused(approver: Approver) -> None:
        steps.record(call, "refused", approver=approver)

    return Asking(call.spec.name, call.ctx.principal, refused, steps.line(call, "refused"))


class PageWay:
    def __init__(self, steps: GuardSteps, token: TokenWay, four_eyes: frozenset[str] = frozenset()) -> None:
        """`token`: the way taken when no page can reach the person after all, but for a `four_eyes`
        tool, which only the signed-in page may answer (the caller would redeem the token)."""
        self._steps = steps
        self._token = token
        self._four_eyes = four_eyes

    async def _no_page(self, call: GuardedCall, token: object) -> CallOutcome:
        if call.spec.name in self._four_eyes:
            return self._steps.four_eyes_refused(call.spec, call.args, call.ctx)
        return await self._token.ask(_as_token(call), token)

    async def ask(self, call: GuardedCall, token: object) -> CallOutcome:
        """Ask on the page and wait; run once on approve (2025-11-25 and the browser), or offer its link
        in `input_required` (2026-07-28)."""
        steps = self._steps
        pages, via = call.ctx.pages, call.ctx.page_opener
        if pages is not None and via is None and call.ctx.reached == "url_elicitation":
            return await self._in_results(call, pages, token)
        if pages is None or (via is None and not await pages.available()):
            return await self._no_page(call, token)
        life = steps.life(call, DEFAULT_PAGE_SECONDS)
        decision: Decision = call.decision
        for _ in range(MAX_PAGE_ROUNDS):
            key = page_key(call.fingerprint, decision.reasons)
            question = await steps.asking(call, decision)
            steps.record(call, "asked")
            collected = "pending"
            with steps.closing(call):
                shown = await pages.show(key, question, life, via, asking(steps, call))
                if shown == "shown":
                    collected = await pages.wait(key, pages.window_seconds, call.ctx.progress)
                    if collected != "pending" and via is not None:
                        await via.done()
            if shown == "refused":
                # The person would not open the page (URL mode's decline or cancel): their no.
                return steps.not_approved(call, Answer("decline"))
            if shown == "unavailable":
                # The browser could not be opened after all, or the client not asked: nobody saw this question.
                steps.record(call, "no_answer")
                return await self._no_page(call, token)
            if collected == "pending":
                steps.record(call, "pending")
                return Complete(outcomes.page_pending(life, call.ctx.reached or "browser"))
            if collected == "expired":
                steps.record(call, "expired")
                return Complete(outcomes.page_expired(call.ctx.reached or "browser"))
            approver = pages.decided_by(key)
            if collected == "declined":
                return steps.not_approved(call, Answer("decline"), approver)
            steps.record(call, "approved", approver=approver)
            applied = await steps.apply(call, decision.reasons)
            if isinstance(applied, Complete):
                return applied
            decision = applied.decision  # the object changed so that the call widens more: a new page
        return Complete(outcomes.kept_changing())

    async def _in_results(self, call: GuardedCall, pages: ApprovalPages, token: object) -> CallOutcome:
        """2026-07-28: the page's link in an `input_required` result; the retry collects its decision."""
        steps, ctx = self._steps, call.ctx
        if ctx.request_state is None:
            return await self._offer(call, pages, call.decision, token)
        opened = steps.sealed.open(
            ctx.request_state, tool=call.spec.name, fingerprint=call.fingerprints, principal=ctx.principal
        )
        if opened is None:
            # Likeliest cause: a gateway that slept while the person read. No answer, not an error.
            steps.record(call, "seal_rejected")
            return await self._offer(call, pages, call.decision, token)
        if ctx.answer is None:
            # Our state and no answer to its request: a fresh one (the same page while it is pending).
            steps.record(call, "no_answer")
            return await self._offer(call, pages, call.decision, token)
        key = page_key(call.fingerprint, opened.reasons)
        if not ctx.answer.answered or ctx.answer.action != "accept":
            # The person would not open the page (or what came back is no answer): nothing runs, and
            # the page, if they open it after all, says so.
            await pages.withdraw(key)
            return steps.not_approved(call, ctx.answer)
        if not covers(opened.reasons, call.decision.reasons):
            # This retry widens something its page did not show: that page's answer does not cover it.
            return await self._offer(call, pages, call.decision, token)
        try:
            first = await steps.sealed.consume(opened, ctx.owner)
        except TokenStoreUnavailable as e:
            steps.record(call, "failed")
            return Complete(outcomes.store_unavailable(e))
        if not first:
            # At most once (guard.md §7): this retry was acted on already (a replayed gateway leg, a loop).
            steps.record(call, "seal_rejected")
            return await self._offer(call, pages, call.decision, token)
        with steps.closing(call):
            collected = await pages.wait(key, pages.window_seconds, ctx.progress)
        if collected == "pending":
            # No decision in this window: the same page again, under a fresh seal.
            steps.record(call, "pending")
            return await self._offer(call, pages, call.decision, token)
        if collected == "expired":
            steps.record(call, "expired")
            return Complete(outcomes.page_expired("url_elicitation"))
        approver = pages.decided_by(key)
        if collected == "declined":
            return steps.not_approved(call, Answer("decline"), approver)
        steps.record(call, "approved", approver=approver)
        applied = await steps.apply(call, opened.reasons)
        if isinstance(applied, Complete):
            return applied
        # The object changed so that the call widens more than the page showed: a new page.
        return await self._offer(call, pages, applied.decision, token)

    async def _offer(
        self, call: GuardedCall, pages: ApprovalPages, decision: Decision, token: object
    ) -> CallOutcome:
        """A sealed question whose request is the page's link; the two-call token when no page can be served."""
        steps = self._steps
        question = await steps.asking(call, decision)
        offered = await pages.offer(
            page_key(call.fingerprint, decision.reasons),
            question,
            steps.life(call, DEFAULT_PAGE_SECONDS),
            asking(steps, call),
        )
        if offered is None:
            return await self._no_page(call, token)
        asked = await steps.question(call, decision)
        return replace(asked, message=asked.message + OPEN_THE_PAGE, page=offered)


def _as_token(call: GuardedCall) -> GuardedCall:
    return replace(
        call,
        ctx=replace(
            call.ctx, channel="token", no_dialog="client", pages=None, page_opener=None, reached=None
        ),
    )
