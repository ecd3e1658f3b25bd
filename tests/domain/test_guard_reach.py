"""The way a guarded call reaches a person (domain/guard/reach.py), over every combination of facts.

There are 768 of them, so each property is checked on all, not on a sample.
"""

import functools
import inspect
import itertools
from collections.abc import Callable
from dataclasses import replace

from domain.guard.reach import BROWSER_PAGE, TOKEN_BY_SERVER, URL_PAGE, Facts, Route, route

_BOOL = (False, True)
ALL_FACTS = [
    Facts(*values)
    for values in itertools.product(
        _BOOL,
        ("auto", "always", "off"),
        _BOOL,
        _BOOL,
        _BOOL,
        _BOOL,
        ("input_required", "push_url", "push", "none"),
        _BOOL,
    )
]


def every(prop: Callable[[Facts], None]) -> Callable[[], None]:
    """The property, checked on every combination of facts (one test, naming the one that fails)."""

    @functools.wraps(prop)
    def check() -> None:
        for f in ALL_FACTS:
            try:
                prop(f)
            except AssertionError as e:
                raise AssertionError(f"{f} -> {route(f)}") from e

    check.__signature__ = inspect.Signature()  # type: ignore[attr-defined]
    return check


def test_every_combination_is_here() -> None:
    assert len(set(ALL_FACTS)) == 2 * 3 * 2 * 2 * 2 * 2 * 4 * 2


@every
def test_elicitation_false_is_the_announced_token_whatever_else_is_said(f: Facts) -> None:
    assert route(replace(f, elicitation_enabled=False)) == TOKEN_BY_SERVER
    if f.elicitation_enabled:
        assert route(f).no_dialog != "server"


@every
def test_no_page_exists_where_the_server_serves_none_or_the_operator_turned_it_off(f: Facts) -> None:
    if not f.pages or f.page_mode == "off":
        assert route(f).channel != "page"


@every
def test_nothing_is_pushed_on_a_connection_that_cannot_carry_it(f: Facts) -> None:
    way = route(f)
    if way.pushed and f.revision != "input_required":
        assert f.back_channel
    if f.revision in ("push", "none"):
        # These revisions have no URL mode; `none` has no question at all.
        assert way != URL_PAGE
        assert way.channel != "mrtr"
    if f.revision == "none":
        assert way.channel not in ("push",)


@every
def test_a_dialog_is_only_for_a_client_that_declared_one_and_only_when_the_page_is_not_asked_for(
    f: Facts,
) -> None:
    way = route(f)
    if way.channel in ("push", "mrtr"):
        assert f.form and f.elicitation_enabled
        assert not (f.pages and f.page_mode == "always")
    if way == URL_PAGE:
        assert f.url and (not f.form or f.page_mode == "always")


@every
def test_always_puts_the_page_first_where_there_is_one(f: Facts) -> None:
    f = replace(f, elicitation_enabled=True, pages=True, page_mode="always")
    assert route(f).channel == "page"


@every
def test_the_apps_view_only_where_no_dialog_reaches(f: Facts) -> None:
    if route(f).channel == "app":
        assert f.apps
        dialog = f.form and (f.revision == "input_required" or (f.revision != "none" and f.back_channel))
        assert not dialog


@every
def test_the_token_only_when_no_other_way_can_reach_the_person(f: Facts) -> None:
    way = route(f)
    if way.channel == "token" and f.elicitation_enabled:
        assert not (f.pages and f.page_mode != "off")
        assert not f.apps
        assert way.no_dialog in ("client", "connection")
        if way.no_dialog == "client":
            assert not f.form


def test_the_order_named_in_the_issue() -> None:
    dialog = Facts(True, "auto", True, True, True, True, "push_url", True)
    assert route(dialog) == Route("push")
    assert route(replace(dialog, revision="input_required")) == Route("mrtr")
    assert route(replace(dialog, form=False)) == URL_PAGE
    assert route(replace(dialog, form=False, url=False)) == Route("app")
    assert route(replace(dialog, form=False, url=False, apps=False)) == BROWSER_PAGE
    assert route(replace(dialog, form=False, url=False, apps=False, pages=False)) == Route(
        "token", no_dialog="client"
    )
    assert route(replace(dialog, page_mode="always")) == URL_PAGE
    assert route(replace(dialog, page_mode="always", url=False)) == BROWSER_PAGE
    # 2025-11-25 without a way back: the URL offer cannot be pushed either, the dialog neither.
    assert route(replace(dialog, back_channel=False)) == Route("app")
    assert route(replace(dialog, back_channel=False, apps=False)) == BROWSER_PAGE
    assert route(replace(dialog, back_channel=False, apps=False, pages=False)) == Route(
        "token", no_dialog="connection"
    )


def test_a_four_eyes_call_takes_the_page_through_the_client_wherever_that_can_reach_the_person() -> None:
    # Only the signed-in page may answer a four-eyes call (ADR 0084): it comes before a dialog the caller
    # would answer. Where it cannot reach, the way is what it would be, and the guard refuses the call.
    for f in ALL_FACTS:
        four = replace(f, four_eyes=True)
        can = (
            f.elicitation_enabled
            and f.pages
            and f.page_mode != "off"
            and f.url
            and (f.revision == "input_required" or (f.revision == "push_url" and f.back_channel))
        )
        assert route(four) == (URL_PAGE if can else route(f)), four
