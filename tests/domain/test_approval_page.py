"""The approval page's rules (domain/guard/approval_page.py): only the first valid post decides, a
decision is collected once, a forged or cross-site post decides nothing, and the page shows the
question exactly, escaped, with no script."""

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from domain.guard.approval_page import Page, read_form, render

QUESTION = 'Delete secret "deploy_token" of repository 1?\n<script>alert(1)</script> & more'


def page(**kwargs: object) -> Page:
    return Page(public_id="pid", csrf="c" * 43, question=QUESTION, expires_at=100.0, **kwargs)  # type: ignore[arg-type]


def good(decision: str) -> dict[str, str]:
    return {"page": "pid", "csrf": "c" * 43, "decision": decision}


FIELD = st.text(alphabet=st.characters(codec="ascii"), max_size=50)
FORM = st.fixed_dictionaries(
    {},
    optional={
        "page": st.one_of(st.just("pid"), FIELD),
        "csrf": st.one_of(st.just("c" * 43), FIELD),
        "decision": st.one_of(st.sampled_from(["approve", "decline", "Approve", "yes", ""]), FIELD),
    },
)


@given(posts=st.lists(st.tuples(FORM, st.one_of(st.none(), st.just("c" * 43), FIELD)), max_size=6))
def test_only_the_first_valid_post_decides_and_it_is_collected_once(
    posts: list[tuple[dict[str, str], str | None]],
) -> None:
    p = page()
    first_valid = next(
        (
            form["decision"]
            for form, cookie in posts
            if form.get("page") == "pid"
            and form.get("csrf") == "c" * 43
            and cookie == "c" * 43
            and form.get("decision") in ("approve", "decline")
        ),
        None,
    )
    for form, cookie in posts:
        p.post(form, cookie, now=1.0)
    expected = {"approve": "approved", "decline": "declined", None: "pending"}[first_valid]
    assert p.outcome == expected
    collected = [p.collect(now=2.0), p.collect(now=3.0)]
    assert collected == ([expected, "pending"] if first_valid else ["pending", "pending"])


def test_a_post_without_the_cookie_or_after_the_page_expired_decides_nothing() -> None:
    p = page()
    assert p.post(good("approve"), None, now=1.0) == "pending"
    assert p.post(good("approve"), "x" * 43, now=1.0) == "pending"
    assert p.post(good("approve"), "c" * 43, now=100.0) == "expired"
    assert p.collect(now=101.0) == "expired" and p.collect(now=102.0) == "pending"


def test_a_form_field_given_twice_or_a_body_that_is_not_a_form_is_no_form() -> None:
    assert read_form(b"decision=approve&decision=decline&page=pid") is None
    assert read_form("decision=é".encode()) is None
    # More fields than any form of ours holds: not one of ours, never an error (found by a review).
    assert read_form(b"&".join(b"a%d=1" % i for i in range(9))) is None
    assert read_form(b"page=pid&csrf=x&decision=approve") == {
        "page": "pid",
        "csrf": "x",
        "decision": "approve",
    }


def test_the_page_shows_the_question_exactly_escaped_and_runs_no_script() -> None:
    shown = render(page(), "/approve/s", "pending", server="server", forge="Forge")
    (question,) = re.findall(r'<pre id="question">(.*?)</pre>', shown, re.S)
    assert html.unescape(question) == QUESTION
    assert "<script" not in shown.replace(html.escape("<script>"), "")
    assert 'name="decision" value="approve"' in shown and 'name="decision" value="decline"' in shown
    assert 'id="outcome" data-outcome="pending"' in shown
    decided = render(page(), "/approve/s", "approved", server="server", forge="Forge")
    assert "<form" not in decided and 'data-outcome="approved"' in decided
