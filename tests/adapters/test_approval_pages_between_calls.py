"""A page decided between two calls of the same question is collected by the next call, on stdio's pages
and OAuth mode's: a new page in its place lost the person's answer and opened a second tab (the retry
test of tests/mcp/test_approval_page_stdio.py failed three runs in four once each retry read its target
first, ADR 0090, and so spent longer between its waits)."""

import pytest

from adapters.approval_page import BrowserApprovalPages
from adapters.oauth_resource import SignedInApprovalPages
from ports.approval_pages import Approver

pytestmark = pytest.mark.anyio


async def test_a_stdio_page_decided_between_two_calls_is_the_next_calls_to_collect() -> None:
    opened: list[str] = []
    pages = BrowserApprovalPages(opener=lambda url: opened.append(url) or True, window_seconds=0.2)
    assert await pages.show("k", "Delete it?", 600) == "shown"
    assert await pages.wait("k", 0.2, None) == "pending"  # the first call's window passes unanswered
    (page,) = pages._by_key.values()
    page.outcome = "approved"  # the person answers while no call waits
    assert await pages.show("k", "Delete it?", 600) == "shown"  # the retry: the same page
    assert await pages.wait("k", 0.2, None) == "approved"
    assert len(opened) == 1  # no second tab


async def test_a_signed_in_page_decided_between_two_calls_is_the_next_calls_to_collect() -> None:
    pages = SignedInApprovalPages(public_origin="https://mcp.example.org", window_seconds=0.2)
    first = await pages.offer("k", "Delete it?", 600)
    assert first is not None and await pages.wait("k", 0.2, None) == "pending"
    entry = await pages.entry(first.url.rsplit("/", 1)[1])
    assert entry is not None
    form = {"page": entry.page.public_id, "csrf": entry.page.csrf, "decision": "decline"}
    await pages.decide(entry, form, entry.page.csrf, Approver("bob", "bob", other_than_caller=True))
    again = await pages.offer("k", "Delete it?", 600)  # the retry, after the approver's answer
    assert again is not None and again.url == first.url  # the same page, its decision kept
    assert await pages.wait("k", 0.2, None) == "declined"
