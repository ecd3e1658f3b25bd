"""The approval page's form is the one guard.md §4b names, and its POST check refuses what is not it."""

from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest

from adapters.approval_page_html import CSRF_COOKIE, HEADERS, cookie, csrf_value, document, posted_decision

ORIGIN = "http://127.0.0.1:43210"
CSRF = csrf_value(b"k" * 32, "digest")
QUESTION = "Delete the secret deploy_key of octo/app (repository 7)?\n<b>not markup</b>"


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str | None]] = []
        self.inputs: list[dict[str, str | None]] = []
        self.buttons: list[dict[str, str | None]] = []
        self.outcome: str | None = None
        self._in_outcome = False
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.forms.append(a)
        elif tag == "input":
            self.inputs.append(a)
        elif tag == "button":
            self.buttons.append(a)
        elif tag == "script":
            self.scripts += 1
        self._in_outcome = a.get("id") == "outcome"

    def handle_data(self, data: str) -> None:
        if self._in_outcome:
            self.outcome = data
            self._in_outcome = False


def _parsed(state: str) -> _Form:
    p = _Form()
    p.feed(document(question=QUESTION, tool="delete_secret", action="/approve/x", state=state, csrf=CSRF))  # type: ignore[arg-type]
    return p


def test_a_pending_page_is_one_urlencoded_form_posting_to_itself() -> None:
    p = _parsed("pending")
    assert p.forms == [
        {"method": "post", "action": "/approve/x", "enctype": "application/x-www-form-urlencoded"}
    ]
    assert [(b["name"], b["value"]) for b in p.buttons] == [("decision", "approve"), ("decision", "decline")]
    assert {i["name"]: i["value"] for i in p.inputs if i["type"] == "hidden"}["csrf"] == CSRF
    assert p.outcome == "pending" and p.scripts == 0


@pytest.mark.parametrize("state", ["approved", "declined", "expired"])
def test_a_decided_page_says_so_and_offers_no_buttons(state: str) -> None:
    p = _parsed(state)
    assert p.outcome == state and p.forms == [] and p.buttons == []


def test_the_question_is_shown_as_text_and_the_page_cannot_be_framed() -> None:
    page = document(question=QUESTION, tool="delete_secret", action="/a", state="pending", csrf=CSRF)
    assert "&lt;b&gt;not markup&lt;/b&gt;" in page and "<b>" not in page
    assert "default-src 'none'" in HEADERS["content-security-policy"]
    assert "frame-ancestors 'none'" in HEADERS["content-security-policy"]
    assert "SameSite=Strict" in cookie(CSRF, "/a")


def _post(
    decision: str, *, origin: str | None = ORIGIN, jar: str | None = None, csrf: str = CSRF
) -> bool | None:
    return posted_decision(
        body=urlencode({"csrf": csrf, "tool": "delete_secret", "decision": decision}).encode(),
        content_type="application/x-www-form-urlencoded",
        origin=origin,
        own_origin=ORIGIN,
        cookie_header=f"{CSRF_COOKIE}={CSRF}" if jar is None else jar,
        csrf=CSRF,
    )


def test_approve_and_decline_from_the_page_itself_or_no_origin() -> None:
    assert _post("approve") is True
    assert _post("decline", origin=None) is False


def test_another_origin_a_missing_cookie_a_wrong_field_or_value_decide_nothing() -> None:
    assert _post("approve", origin="http://evil.example") is None
    assert _post("approve", jar="") is None
    assert _post("approve", csrf="0" * 64) is None
    assert _post("yes") is None
