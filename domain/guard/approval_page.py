"""The approval page's rules, with no I/O: one page per pending question, decided by one form post.

The page shows the question byte for byte as the dialog shows it (HTML-escaped, nothing added to
it) and one plain urlencoded form whose action is the page's own URL: a `decision` button valued
`approve` and one valued `decline`, a hidden `page` field (the page's public id) and a hidden
`csrf` field that must equal the `SameSite=Strict` cookie the page set. No script: it works in a
text browser and with a screen reader, under `default-src 'none'`. The element `id="outcome"`
says `pending`, `approved`, `declined` or `expired`. The first valid post decides, once; a second
post, a reload or another tab shows what was decided and changes nothing (guard.md §4b, ADR 0063).
"""

import hmac
import html
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qs

PageOutcome = Literal["pending", "approved", "declined", "expired"]
# What a waiting call collects: the decision once, or that none came (yet).
Collected = Literal["approved", "declined", "expired", "pending"]

PAGE_PATH = "/approve/"
DEFAULT_PAGE_SECONDS = 600
CSRF_COOKIE = "mcp_approval_csrf"
MAX_FORM_BYTES = 4096
# What a client that offers the page's link (URL-mode elicitation) shows under the question.
OPEN_THE_PAGE = "\n\nOpen the page to approve or decline; nothing is done until you answer there."

_SAID: dict[PageOutcome, str] = {
    "pending": "Waiting for your answer. Nothing has been done.",
    "approved": "Approved. The call runs once; the tool's result tells how it went.",
    "declined": "Declined. Nothing was done.",
    "expired": "This question expired unanswered. Nothing was done.",
}


@dataclass(slots=True)
class Page:
    """One pending question's page. `public_id` names it in the form; the link's secret is never kept."""

    public_id: str
    csrf: str
    question: str
    expires_at: float
    outcome: PageOutcome = "pending"
    collected: bool = False
    decided_at: float | None = field(default=None)

    def seen_at(self, now: float) -> PageOutcome:
        """The outcome as of `now`: a pending page past its life has expired (no answer is a no)."""
        if self.outcome == "pending" and now >= self.expires_at:
            self.outcome = "expired"
        return self.outcome

    def post(self, form: dict[str, str], cookie: str | None, now: float) -> PageOutcome:
        """Apply one form post; returns the outcome to show. Only the first valid post decides."""
        if self.seen_at(now) != "pending":
            return self.outcome
        if not valid_post(self, form, cookie):
            return self.outcome
        self.outcome = "approved" if form["decision"] == "approve" else "declined"
        self.decided_at = now
        return self.outcome

    def withdraw(self, now: float) -> None:
        """The person would not open the page (they declined or dismissed the offer of its link):
        a page still pending says declined from now on, and no call collects it."""
        if self.seen_at(now) == "pending":
            self.outcome = "declined"
            self.decided_at = now
        self.collected = True

    def collect(self, now: float) -> Collected:
        """What the waiting call takes: a decision exactly once, then `pending` for anyone else."""
        outcome = self.seen_at(now)
        if outcome == "pending":
            return "pending"
        if self.collected:
            return "pending"
        self.collected = True
        return outcome


def valid_post(page: Page, form: dict[str, str], cookie: str | None) -> bool:
    """Whether a post carries this page's id, a CSRF value equal to the page's and to its cookie,
    and one of the two decisions."""
    if form.get("decision") not in ("approve", "decline"):
        return False
    if not hmac.compare_digest(form.get("page", ""), page.public_id):
        return False
    sent = form.get("csrf", "")
    if cookie is None or not hmac.compare_digest(sent, page.csrf):
        return False
    return hmac.compare_digest(cookie, page.csrf)


def read_form(body: bytes) -> dict[str, str] | None:
    """An urlencoded body's fields (each once), or None when it is not one."""
    if len(body) > MAX_FORM_BYTES:
        return None
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return None
    try:
        fields = parse_qs(text, keep_blank_values=True, strict_parsing=False, max_num_fields=8)
    except ValueError:  # more fields than any form of ours has: not one of ours
        return None
    if any(len(values) != 1 for values in fields.values()):
        return None
    return {name: values[0] for name, values in fields.items()}


def render(
    page: Page,
    action: str,
    outcome: PageOutcome,
    *,
    server: str,
    forge: str,
    signed_in: str | None = None,
) -> str:
    """The page's HTML: the question, the outcome, and the form while it is pending. `server` and
    `forge` are the program's and the forge's names, ours (never a forge-written text). `signed_in`:
    over HTTP, the name of the person signed in to answer (escaped here)."""
    question = html.escape(page.question, quote=True)
    form = ""
    if outcome == "pending":
        form = (
            f'<form method="post" action="{html.escape(action, quote=True)}">'
            f'<input type="hidden" name="page" value="{html.escape(page.public_id, quote=True)}">'
            f'<input type="hidden" name="csrf" value="{html.escape(page.csrf, quote=True)}">'
            '<button type="submit" name="decision" value="approve">Approve</button> '
            '<button type="submit" name="decision" value="decline">Decline</button>'
            "</form>"
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Approve a {html.escape(forge)} action?</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
        "line-height:1.45}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:1rem;"
        "border-radius:.4rem}button{font-size:1.1rem;padding:.5rem 1.2rem;margin:.3rem .6rem .3rem 0}"
        "</style></head><body>"
        f"<h1>An AI client asks to do this on {html.escape(forge)}</h1>"
        f"{_intro(server, signed_in)}"
        f'<pre id="question">{question}</pre>'
        f'<p id="outcome" data-outcome="{outcome}"><strong>{outcome}</strong>: {_SAID[outcome]}</p>'
        f"{form}</body></html>"
    )


def _intro(server: str, signed_in: str | None) -> str:
    if signed_in is None:
        return (
            f"<p>The MCP server {html.escape(server)}, run by you on this machine, puts this question to you, "
            "not to the model. Nothing is done unless you approve it here.</p>"
        )
    return (
        f"<p>The MCP server {html.escape(server)} puts this question to a signed-in person, not to the "
        "model. Nothing is done unless you approve it here.</p>"
        f'<p id="signed-in">Signed in as <strong>{html.escape(signed_in, quote=True)}</strong>.</p>'
    )


def render_refused(question: str, *, who: list[str], signed_in: str, four_eyes: bool, forge: str) -> str:
    """The page for a signed-in person who may not answer: who may, and that nothing was done."""
    reason = (
        "This question needs a second person: the one whose call asks it may not approve it."
        if four_eyes
        else "You are not among the people who may answer this question."
    )
    listed = "".join(f"<li>{html.escape(w, quote=True)}</li>" for w in who) or "<li>nobody else</li>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Not yours to answer</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
        "line-height:1.45}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:1rem;"
        "border-radius:.4rem}</style></head><body>"
        f"<h1>You may not answer this {html.escape(forge)} question</h1>"
        f'<p id="signed-in">Signed in as <strong>{html.escape(signed_in, quote=True)}</strong>.</p>'
        f'<p id="refused" data-four-eyes="{str(four_eyes).lower()}">{reason} Nothing was done.</p>'
        f'<p>Who may answer:</p><ul id="who">{listed}</ul>'
        f'<pre id="question">{html.escape(question, quote=True)}</pre>'
        "</body></html>"
    )
