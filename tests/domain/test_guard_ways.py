"""The pure policy choosing how a call reaches a person, and the page's decide-once record."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.config import ConfigError
from domain.guard.ways import PageRecord, Reachable, link_digest, parse_approval_page, ways

reachables = st.builds(
    Reachable,
    elicitation_enabled=st.booleans(),
    form=st.booleans(),
    url=st.booleans(),
    app=st.booleans(),
    stdio=st.booleans(),
    mode=st.sampled_from(["auto", "always", "off"]),
)


@pytest.mark.parametrize(
    ("raw", "mode"), [(None, "auto"), ("", "auto"), (" Always ", "always"), ("OFF", "off")]
)
def test_the_setting_is_trimmed_and_case_insensitive(raw: str | None, mode: str) -> None:
    assert parse_approval_page(raw) == mode


@pytest.mark.parametrize("raw", ["alway", "true", "on", "0"])
def test_a_typo_stops_the_server(raw: str) -> None:
    with pytest.raises(ConfigError, match="WOODPECKER_MCP_APPROVAL_PAGE must be auto, always or off"):
        parse_approval_page(raw)


@given(reachables)
def test_the_token_is_always_last_and_the_only_way_when_elicitation_is_off(r: Reachable) -> None:
    order = ways(r)
    assert order[-1] == "token" and order.count("token") == 1
    if not r.elicitation_enabled:
        assert order == ("token",)


@given(reachables)
def test_always_never_offers_a_dialog_or_a_view_and_off_never_a_page(r: Reachable) -> None:
    order = ways(r)
    if r.mode == "always":
        assert "dialog" not in order and "app" not in order
    if r.mode == "off":
        assert "url_elicitation" not in order and "browser" not in order


def test_the_order_of_guard_md_4b() -> None:
    everything = Reachable(elicitation_enabled=True, form=True, url=True, app=True, stdio=True)
    assert ways(everything) == ("dialog", "url_elicitation", "app", "browser", "token")
    desktop = Reachable(elicitation_enabled=True, form=False, url=False, app=False, stdio=True)
    assert ways(desktop) == ("browser", "token")
    hooks = Reachable(elicitation_enabled=True, form=True, url=False, app=False, stdio=True, mode="always")
    assert ways(hooks) == ("browser", "token")


def _page(expires_at: float = 100.0) -> PageRecord:
    return PageRecord(link_digest("s" * 32), "binding", "principal", "Delete?", expires_at)


@given(st.lists(st.booleans(), min_size=1, max_size=5))
def test_the_first_post_decides_and_later_ones_change_nothing(posts: list[bool]) -> None:
    page = _page()
    for approve in posts:
        page = page.decide(approve, now=1.0)
    assert page.state(1.0) == ("approved" if posts[0] else "declined")


def test_an_approval_is_collected_at_most_once_and_expiry_is_a_no() -> None:
    page = _page().decide(True, now=1.0)
    page, first = page.collect(now=2.0)
    _, second = page.collect(now=3.0)
    assert (first, second) == (True, False)
    late = _page(expires_at=10.0)
    assert late.state(10.0) == "expired"
    assert late.decide(True, now=10.0).collect(now=10.0)[1] is False
    assert _page().decide(False, now=1.0).collect(now=1.0)[1] is False


def test_only_the_digest_is_kept_and_only_the_secret_opens_it() -> None:
    page = _page()
    assert "s" * 32 not in page.digest
    assert page.opens("s" * 32) and not page.opens("t" * 32)
