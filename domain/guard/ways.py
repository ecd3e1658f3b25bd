"""How one guarded call reaches a person (guard.md §4b): a small pure policy over what the client
declared and what the operator set, and the approval page's decide-once record.

Not wired yet: the stdio page server, the browser opener and URL-mode elicitation (issue 33, items 1-4)
build on these. Nothing here does I/O; time comes in as a parameter (ADR 0010).
"""

import hashlib
import hmac
from dataclasses import dataclass, replace
from typing import Literal

from domain.config import ConfigError

APPROVAL_PAGE_VARIABLE = "WOODPECKER_MCP_APPROVAL_PAGE"
PAGE_SECONDS = 600
# The link's secret: at least 128 random bits (guard.md §4b); the caller draws them.
MIN_SECRET_BYTES = 16

PageMode = Literal["auto", "always", "off"]
Way = Literal["dialog", "url_elicitation", "app", "browser", "token"]
PageDecision = Literal["pending", "approved", "declined", "expired"]


def parse_approval_page(raw: str | None) -> PageMode:
    """`WOODPECKER_MCP_APPROVAL_PAGE`: trimmed and case-insensitive like ELICITATION; unset or empty is
    `auto`. Anything else stops the server rather than fall back to a way the operator did not choose.

    Raises:
        ConfigError: the value is none of auto, always, off.
    """
    value = "" if raw is None else raw.strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value in ("always", "off"):
        return "always" if value == "always" else "off"
    raise ConfigError(
        f"{APPROVAL_PAGE_VARIABLE} must be auto, always or off (unset means auto); got {value[:40]!r}"
    )


@dataclass(frozen=True, slots=True)
class Reachable:
    """What this one request can carry: the client's declarations and the server's own setting."""

    elicitation_enabled: bool  # ELICITATION (false: the token, whatever else is set; guard.md §5)
    form: bool  # a form dialog can be pushed or asked on this request
    url: bool  # the client declared `elicitation.url`
    app: bool  # the host renders MCP Apps views
    stdio: bool  # the server runs on the person's machine and may open their browser
    mode: PageMode = "auto"


def ways(r: Reachable) -> tuple[Way, ...]:
    """The ways to try for this call, best first; the token always last (guard.md §4b order)."""
    if not r.elicitation_enabled:
        return ("token",)
    page: tuple[Way, ...] = ()
    if r.mode != "off":
        page = (*(("url_elicitation",) if r.url else ()), *(("browser",) if r.stdio else ()))
    if r.mode == "always":
        return (*page, "token")
    order: list[Way] = []
    if r.form:
        order.append("dialog")
    if r.mode != "off" and r.url:
        order.append("url_elicitation")
    if r.app:
        order.append("app")
    if r.mode != "off" and r.stdio:
        order.append("browser")
    return (*order, "token")


def link_digest(secret: str) -> str:
    """What is stored of a page's link: its digest, never the secret itself."""
    return hashlib.sha256(b"approval page\0" + secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class PageRecord:
    """One pending question's page: bound like every approval (the keyed fingerprint and reasons, in
    `binding`; the principal, in `owner`), deciding once, and `no` when it expires unanswered."""

    digest: str
    binding: str
    owner: str | None
    question: str
    expires_at: float
    decision: PageDecision = "pending"
    collected: bool = False

    def state(self, now: float) -> PageDecision:
        if self.decision == "pending" and now >= self.expires_at:
            return "expired"
        return self.decision

    def decide(self, approve: bool, now: float) -> "PageRecord":
        """One POST decides once: a later POST, a reload or another tab changes nothing."""
        if self.state(now) != "pending":
            return self
        return replace(self, decision="approved" if approve else "declined")

    def collect(self, now: float) -> tuple["PageRecord", bool]:
        """The approved call may run: True at most once in all."""
        if self.state(now) != "approved" or self.collected:
            return self, False
        return replace(self, collected=True), True

    def opens(self, secret: str) -> bool:
        return hmac.compare_digest(self.digest.encode(), link_digest(secret).encode())
