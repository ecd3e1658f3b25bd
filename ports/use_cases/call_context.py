"""What a guarded call is given (who calls, and how a person can be reached) and what it answers."""

from dataclasses import dataclass

from domain.guard.audit import Reached
from domain.guard.outcomes import NoDialog
from domain.guard.reach import Channel as Channel
from ports.approval_pages import ApprovalPages, Offered, PageOpener
from ports.asker import Answer, Asker
from ports.credential import Credential
from ports.forge import ToolResult
from ports.progress import Progress


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
    # The `app` channel only: the ticket the approval view's button sent (None: the model's own
    # call, which gets a view). The view's answer is in `answer`.
    ticket: str | None = None
    # Whose quota of pending tokens and used nonces this call's entries count against (ADR 0046):
    # per-client HTTP puts the Woodpecker account the bearer belongs to here, so an account that
    # rotates its token is still one owner. None: the principal (stdio, shared token, OAuth).
    quota_owner: str | None = None
    # The `page` channel only (stdio): the pages the server puts in front of the person itself.
    pages: ApprovalPages | None = None
    # URL-mode elicitation pushed during the call (2025-11-25): the client offers the page's link to
    # the person. None with `reached == "url_elicitation"`: 2026-07-28, where the link travels in an
    # `input_required` result and the retry collects the page's decision.
    page_opener: PageOpener | None = None
    # The `page` channel only: how the page reaches the person (the audit's and the result's `reached`).
    reached: Reached | None = None

    @property
    def owner(self) -> str | None:
        """The token store's owner for this call's entries: the account when known, else the principal."""
        return self.quota_owner if self.quota_owner is not None else self.principal


@dataclass(frozen=True, slots=True)
class Complete:
    """The call is over: this is its result (which may say nothing was done)."""

    result: ToolResult


@dataclass(frozen=True, slots=True)
class NeedInput:
    """2026-07-28 only: show `message` with one boolean `confirm`, then retry with `request_state`.

    With `page`: offer the person the approval page's link instead (a URL-mode request); its accept
    only means they agreed to open it, and the retry collects the page's decision.
    """

    message: str
    request_state: str
    page: Offered | None = None


CallOutcome = Complete | NeedInput
