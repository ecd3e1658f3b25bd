"""How a guarded call reaches a person on one request: a small pure policy over what the client
declared on that request, what its protocol revision can carry, and what the operator set.

The order (issue 33, guard.md §4b): a form dialog; the approval page offered through the client
(URL-mode elicitation); the MCP Apps view; the page the server opens in the person's browser itself
(stdio); the two-call token last. The approval-page setting `always` puts the page first, for hosts
whose hooks answer dialogs unattended; `off` leaves it out. `ELICITATION=false` keeps the seed's
meaning whatever the rest says: the token, announced as the server's choice.

Nothing here does I/O: the adapter reads the facts off the request, and the way chosen is carried out
by the guard (ports/use_cases/guarded.py) with the port of that way.
"""

from dataclasses import dataclass
from typing import Literal

from domain.config import ApprovalPageMode
from domain.guard.audit import Reached
from domain.guard.outcomes import NoDialog

# The ways of asking: `push` (a 2025-11-25 form dialog while the call waits), `mrtr` (2026-07-28:
# `input_required` with a form question and a sealed state), `page` (the approval page: see `Route.reached`
# for how it reaches the person), `app` (an MCP Apps view), `token` (the two-call token).
Channel = Literal["push", "mrtr", "token", "app", "page"]

# What the negotiated revision can carry: `input_required` (2026-07-28: questions travel in results),
# `push_url` (2025-11-25: a pushed `elicitation/create` with a URL mode), `push` (2025-06-18: pushed
# form questions only), `none` (earlier revisions: no question at all).
Revision = Literal["input_required", "push_url", "push", "none"]


@dataclass(frozen=True, slots=True)
class Facts:
    """What one request says about how a person can be reached."""

    elicitation_enabled: bool  # ELICITATION (false: the token, whatever else)
    page_mode: ApprovalPageMode  # the approval-page setting (auto, always, off)
    pages: bool  # this server can put a question on a page (stdio, and not `off`)
    form: bool  # the client declared form elicitation
    url: bool  # the client declared URL elicitation
    apps: bool  # the client renders MCP Apps views
    revision: Revision
    back_channel: bool  # the connection can carry a request from the server during a call
    # The call's tool needs a second person (ADR 0084): only the signed-in page may answer it, so the
    # page offered through the client comes before a dialog, which the caller would answer.
    four_eyes: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    """The way chosen. `reached` on the `page` channel only: how the page reaches the person (the
    client offers its link, or the server opens it in the browser). `no_dialog` on the token only:
    whom its answer names for the missing dialog."""

    channel: Channel
    reached: Reached | None = None
    no_dialog: NoDialog | None = None

    @property
    def pushed(self) -> bool:
        """Whether this way sends the client a request during the call (it needs a back-channel)."""
        return self.channel == "push" or (self.channel == "page" and self.reached == "url_elicitation")


TOKEN_BY_SERVER = Route("token", no_dialog="server")
BROWSER_PAGE = Route("page", reached="browser")
URL_PAGE = Route("page", reached="url_elicitation")


def route(facts: Facts) -> Route:
    """The one way this request asks, in the order the module names."""
    if not facts.elicitation_enabled:
        return TOKEN_BY_SERVER
    page = facts.pages and facts.page_mode != "off"
    url_carried = facts.revision == "input_required" or (facts.revision == "push_url" and facts.back_channel)
    if (
        page
        and facts.url
        and url_carried
        and (facts.page_mode == "always" or not facts.form or facts.four_eyes)
    ):
        return URL_PAGE
    if page and facts.page_mode == "always":
        return BROWSER_PAGE
    if facts.apps and (
        not facts.form
        or (facts.revision != "input_required" and (facts.revision == "none" or not facts.back_channel))
    ):
        # A host that renders MCP Apps views, where no dialog reaches the person (ADR 0049).
        return Route("app")
    if not facts.form:
        return BROWSER_PAGE if page else Route("token", no_dialog="client")
    if facts.revision == "none":
        # The negotiated revision has no dialog to carry (docs/clients.md lists what each serves).
        return BROWSER_PAGE if page else Route("token", no_dialog="connection")
    if facts.revision == "input_required":
        return Route("mrtr")
    if not facts.back_channel:
        # A handshake-era connection without a back-channel (stateless or JSON-response HTTP) cannot
        # carry a dialog. The client declared it can show one, so the fallback must not blame it.
        return BROWSER_PAGE if page else Route("token", no_dialog="connection")
    return Route("push")
