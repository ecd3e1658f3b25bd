"""The approval page in real headless Chromium (ADR 0063): Approve and Decline clicked as a person
clicks them, the SameSite=Strict cookie and the Origin check as a browser really sends them, a reload
after the answer, and a narrow window. Screenshots go to test-artefacts/."""

from pathlib import Path
from typing import Any

import anyio
import pytest

from adapters.approval_page import BrowserApprovalPages
from tests.fixtures.chromium import Chromium, chromium_binary

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser]

QUESTION = 'Delete secret "deploy_token" of repository 1? It is lost for good.\n<b>not bold</b>'


def click(binary: str, profile: Path, url: str, button: str, name: str) -> dict[str, Any]:
    browser = Chromium(binary, profile)
    try:
        seen: dict[str, Any] = {}
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=360,
            height=740,
            deviceScaleFactor=1,
            mobile=True,
        )
        browser.navigate(url)
        seen["question"] = browser.evaluate("document.getElementById('question').textContent")
        seen["before"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        seen["fits"] = browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        browser.screenshot(f"approval-page-{name}-before.png")
        browser.submit_and_load(f"document.querySelector('button[value={button}]').click()")
        seen["after"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        seen["buttons_after"] = browser.evaluate("document.querySelectorAll('button').length")
        browser.screenshot(f"approval-page-{name}-after.png")
        browser.navigate(url)  # a reload, or the same link in another tab
        seen["reloaded"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        return seen
    finally:
        browser.close()


async def ask_and_click(tmp_path: Path, button: str, name: str) -> tuple[str, dict[str, Any]]:
    opened: list[str] = []

    def opener(url: str) -> bool:
        if url:
            opened.append(url)
        return True

    pages = BrowserApprovalPages(opener=opener, window_seconds=60)
    binary = chromium_binary()
    assert await pages.show("call", QUESTION, 600)
    async with anyio.create_task_group() as group:
        collected: list[str] = []

        async def wait() -> None:
            collected.append(await pages.wait("call", 60, None))

        group.start_soon(wait)
        seen = await anyio.to_thread.run_sync(click, binary, tmp_path / "profile", opened[0], button, name)
    return collected[0], seen


async def test_approve_clicked_in_chromium_is_collected_once_and_a_reload_shows_it(tmp_path: Path) -> None:
    collected, seen = await ask_and_click(tmp_path, "approve", "approve")
    assert seen["question"] == QUESTION
    assert (seen["before"], seen["after"], seen["reloaded"]) == ("pending", "approved", "approved")
    assert seen["buttons_after"] == 0
    assert seen["fits"] is True  # a 360 px wide window needs no sideways scrolling
    assert collected == "approved"


async def test_decline_clicked_in_chromium_is_a_no(tmp_path: Path) -> None:
    collected, seen = await ask_and_click(tmp_path, "decline", "decline")
    assert (seen["before"], seen["after"], seen["reloaded"]) == ("pending", "declined", "declined")
    assert collected == "declined"
