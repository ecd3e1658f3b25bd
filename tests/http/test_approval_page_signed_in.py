"""The approval page over HTTP behind a sign-in (OAuth mode, ADR 0084), with real parts: a real OpenID
provider on loopback (npm oidc-provider), real headless Chromium signing in on its login form and
clicking the page's buttons, the real team server in front of the simulated Woodpecker. Each test
fails without its rule: who may answer, four eyes, one post decides once, a page's life."""

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from sandbox.server import Sandbox
from tests.fixtures.chromium import Chromium, chromium_binary
from tests.fixtures.http import free_port, mcp_client, team_server
from tests.fixtures.oidc_provider import CLIENT_ID, CLIENT_SECRET, OpenIdProvider, openid_provider
from tests.http.test_token_linking import PageFiller, link_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser]

SECRET = {"scope": "repository", "repo_id": 4, "name": "dotfiles_token"}
DELETE = ("DELETE", "/api/repos/4/secrets/dotfiles_token")
OTHER = {"scope": "repository", "repo_id": 1, "name": "docker_password"}


@asynccontextmanager
async def signed_in_server(
    sandbox: Sandbox, tmp_path: Path, **extra: str
) -> AsyncIterator[tuple[str, OpenIdProvider, Path]]:
    port = free_port()
    # The server's public name is localhost and the provider's 127.0.0.1: two sites, as in real life,
    # so a browser withholds SameSite=Strict cookies on the provider's redirect back.
    base = f"http://localhost:{port}"
    async with openid_provider(f"{base}/approve/signed-in", f"{base}/mcp") as idp:
        audit = tmp_path / "audit.jsonl"
        env = link_env(sandbox, idp.issuer, f"{base}/mcp", audit)
        env.update(
            {
                "WOODPECKER_MCP_APPROVAL_CLIENT_ID": CLIENT_ID,
                "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET": CLIENT_SECRET,
                # The page even where the client could show a dialog (the SDK client declares both).
                "WOODPECKER_MCP_APPROVAL_PAGE": "always",
                "WOODPECKER_MCP_APPROVAL_WAIT_SECONDS": "3",
                **extra,
            }
        )
        async with team_server(env, port=port) as url:
            yield url, idp, audit


def use_the_page(binary: str, profile: Path, url: str, login: str, button: str | None) -> dict[str, Any]:
    """Open `url`, sign in at the provider as `login`, then click `button` (approve, decline) if the page
    offers it; replay that post with the other decision; reload."""
    browser = Chromium(binary, profile)
    try:
        seen: dict[str, Any] = {}
        browser.navigate(url)
        seen["at_provider"] = browser.evaluate("location.href")
        browser.evaluate(
            f"document.querySelector('input[name=login]').value = {json.dumps(login)};"
            "document.querySelector('input[name=password]').value = 'any';"
        )
        browser.submit_and_load("document.querySelector('form').requestSubmit()")
        seen["href"] = browser.evaluate("location.href")
        seen["title"] = browser.evaluate("document.title")
        seen["text"] = browser.evaluate("document.body.innerText")
        seen["outcome"] = browser.evaluate("document.getElementById('outcome')?.dataset.outcome ?? null")
        seen["buttons"] = browser.evaluate("document.querySelectorAll('button').length")
        browser.screenshot(f"signed-in-page-{login}-{button}.png")
        if button is not None and seen["buttons"]:
            fields = browser.evaluate(
                "({page: document.querySelector('input[name=page]').value,"
                " csrf: document.querySelector('input[name=csrf]').value})"
            )
            browser.submit_and_load(f"document.querySelector('button[value={button}]').click()")
            seen["after"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
            other = "approve" if button == "decline" else "decline"
            replay = {**fields, "decision": other}
            # The same post again, from the page's own origin with its cookies, the other way round (a
            # form, as the page's policy allows no fetch).
            browser.send(
                "Runtime.evaluate",
                session=True,
                expression=(
                    "const f = document.createElement('form'); f.method = 'post'; f.action = location.href;"
                    f"for (const [k, v] of Object.entries({json.dumps(replay)})) {{"
                    " const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v;"
                    " f.appendChild(i); }"
                    "document.body.appendChild(f); f.submit();"
                ),
            )
            browser.wait_for("Page.loadEventFired")
            seen["replayed"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
            browser.navigate(url)
            seen["reloaded"] = browser.evaluate("document.getElementById('outcome').dataset.outcome")
        return seen
    finally:
        browser.close()


class Approver:
    """The client's person: links Alice's Woodpecker token, then brings each approval link to a browser
    where `login` signs in and clicks `button`; a link offered again is dismissed."""

    def __init__(self, sandbox: Sandbox, tmp_path: Path, login: str, button: str | None) -> None:
        self.linker = PageFiller(sandbox.admin_token)
        self.tmp_path = tmp_path
        self.login = login
        self.button = button
        self.pages: list[dict[str, Any]] = []
        self.offered: list[str] = []
        self.before_opening: float = 0.0

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams) and "/link/" in params.url:
            return await self.linker(context, params)
        if not isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="decline")
        self.offered.append(params.url)
        if self.pages:  # each person opens one page; a link offered again is dismissed
            return types.ElicitResult(action="cancel")
        await anyio.sleep(self.before_opening)
        seen = await anyio.to_thread.run_sync(
            use_the_page,
            chromium_binary(),
            self.tmp_path / f"profile-{len(self.pages)}",
            params.url,
            self.login,
            self.button,
        )
        self.pages.append(seen)
        return types.ElicitResult(action="accept")


def audit_lines(audit: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in audit.read_text().splitlines()
        if json.loads(line).get("event") == "guard"
    ]


def deletes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in sandbox.state_changing_requests() if r.method == "DELETE"]


async def call_as(
    url: str, idp: OpenIdProvider, caller: str, person: Approver, mode: str = "2026-07-28"
) -> types.CallToolResult:
    access = await idp.access_token(caller)
    with anyio.fail_after(120):
        async with mcp_client(url, access, mode=mode, elicitation_callback=person) as client:
            assert not (await client.call_tool("get_current_user", {})).is_error
            result: types.CallToolResult = await client.call_tool("delete_secret", SECRET)
    return result


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_caller_signs_in_at_the_provider_and_approves_and_the_call_runs_once(
    sandbox: Sandbox, tmp_path: Path, mode: str
) -> None:
    """2026-07-28: the link in `input_required`; legacy (2025-11-25): a pushed URL-mode elicitation."""
    async with signed_in_server(sandbox, tmp_path) as (url, idp, audit):
        person = Approver(sandbox, tmp_path, "alice", "approve")
        result = await call_as(url, idp, "alice", person, mode)
    seen = person.pages[0]
    assert seen["at_provider"].startswith(idp.issuer)  # the page sent the browser to sign in first
    assert seen["title"].startswith("Approve a Woodpecker CI action")
    assert "Signed in as alice@example.org" in seen["text"]
    assert (seen["outcome"], seen["after"], seen["replayed"], seen["reloaded"]) == (
        "pending",
        "approved",
        "approved",
        "approved",
    )
    assert not result.is_error, result
    assert deletes(sandbox) == [DELETE]
    approved = [line for line in audit_lines(audit) if line["outcome"] == "approved"]
    assert approved == [
        {
            **approved[0],
            "path": "page",
            "approver": {"sub": "alice", "name": "alice@example.org"},
            "four_eyes": False,
        }
    ]


async def test_a_decline_is_a_no_and_a_replayed_approve_post_changes_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with signed_in_server(sandbox, tmp_path) as (url, idp, audit):
        person = Approver(sandbox, tmp_path, "alice", "decline")
        result = await call_as(url, idp, "alice", person)
    seen = person.pages[0]
    assert (seen["after"], seen["replayed"], seen["reloaded"]) == ("declined", "declined", "declined")
    assert "declined" in result.content[0].text.lower()  # type: ignore[union-attr]
    assert deletes(sandbox) == []
    declined = [line for line in audit_lines(audit) if line["outcome"] == "declined"]
    assert [line["approver"]["sub"] for line in declined] == ["alice"]


async def test_a_person_not_allowed_sees_who_may_answer_and_nothing_is_done(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with signed_in_server(sandbox, tmp_path, WOODPECKER_MCP_APPROVERS="group:ci-approvers") as (
        url,
        idp,
        audit,
    ):
        person = Approver(sandbox, tmp_path, "carol", "approve")
        result = await call_as(url, idp, "alice", person)
    seen = person.pages[0]
    assert seen["title"] == "Not yours to answer" and seen["buttons"] == 0
    assert "Nothing was done" in seen["text"]
    assert "the person whose call asks it" in seen["text"] and "ci-approvers" in seen["text"]
    assert deletes(sandbox) == []
    assert not any(line["outcome"] == "approved" for line in audit_lines(audit))
    refused = [line for line in audit_lines(audit) if line["outcome"] == "refused"]
    assert [(line["approver"]["sub"], line["four_eyes"]) for line in refused] == [("carol", True)]
    assert "nothing was done" in result.content[0].text.lower()  # type: ignore[union-attr]


@pytest.mark.parametrize("where", ["variable", "policy"])
async def test_four_eyes_refuses_the_callers_own_answer_and_takes_a_listed_approvers(
    sandbox: Sandbox, tmp_path: Path, where: str
) -> None:
    """Four eyes named by WOODPECKER_MCP_FOUR_EYES, or by `four_eyes = true` in the policy file."""
    extra = {"WOODPECKER_MCP_APPROVERS": "group:ci-approvers"}
    if where == "variable":
        extra["WOODPECKER_MCP_FOUR_EYES"] = "delete_secret"
    else:
        policy = tmp_path / "policy.toml"
        policy.write_text("[tools.delete_secret]\nfour_eyes = true\n")
        extra["WOODPECKER_MCP_POLICY"] = str(policy)
    async with signed_in_server(sandbox, tmp_path, **extra) as (url, idp, audit):
        own = Approver(sandbox, tmp_path / "alice", "alice", "approve")
        refused_result = await call_as(url, idp, "alice", own)
        assert deletes(sandbox) == []
        second = Approver(sandbox, tmp_path / "bob", "bob", "approve")
        approved_result = await call_as(url, idp, "alice", second)
    seen = own.pages[0]
    assert seen["title"] == "Not yours to answer" and seen["buttons"] == 0
    assert "needs a second person" in seen["text"]
    assert (
        not refused_result.structured_content or "nothing was done" in refused_result.content[0].text.lower()
    )  # type: ignore[union-attr]
    assert second.pages[0]["after"] == "approved"
    assert not approved_result.is_error, approved_result
    assert deletes(sandbox) == [DELETE]
    lines = audit_lines(audit)
    refused = [line for line in lines if line["outcome"] == "refused"]
    assert [(line["approver"]["sub"], line["four_eyes"]) for line in refused] == [("alice", False)]
    approved = [line for line in lines if line["outcome"] == "approved"]
    assert [(line["approver"]["sub"], line["four_eyes"]) for line in approved] == [("bob", True)]


async def test_a_page_past_its_life_takes_no_answer(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[tools.delete_secret]\nexpires_in = "10s"\n')
    async with signed_in_server(sandbox, tmp_path, WOODPECKER_MCP_POLICY=str(policy)) as (url, idp, audit):
        person = Approver(sandbox, tmp_path, "alice", "approve")
        person.before_opening = 11.0
        started = time.monotonic()
        await call_as(url, idp, "alice", person)
    seen = person.pages[0]
    assert time.monotonic() - started > 10
    assert seen["outcome"] == "expired" and seen["buttons"] == 0
    assert deletes(sandbox) == []
    assert not any(line["outcome"] == "approved" for line in audit_lines(audit))


async def test_four_eyes_asks_on_the_page_where_a_dialog_could_and_refuses_where_no_page_reaches(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """With the page setting `auto` the client (which declares form and URL elicitation) would get a
    dialog its caller answers; a four-eyes call gets the page. With ELICITATION=false (the token) it
    is refused unasked: nothing the caller can answer approves it."""
    extra = {
        "WOODPECKER_MCP_APPROVERS": "group:ci-approvers",
        "WOODPECKER_MCP_FOUR_EYES": "delete_secret",
        "WOODPECKER_MCP_APPROVAL_PAGE": "auto",
    }
    (tmp_path / "auto").mkdir()
    async with signed_in_server(sandbox, tmp_path / "auto", **extra) as (url, idp, audit):
        second = Approver(sandbox, tmp_path / "bob", "bob", "approve")
        approved = await call_as(url, idp, "alice", second)
    assert second.pages and second.pages[0]["after"] == "approved"
    assert not approved.is_error, approved
    assert deletes(sandbox) == [DELETE]
    assert [line["path"] for line in audit_lines(audit) if line["outcome"] == "approved"] == ["page"]
    (tmp_path / "off").mkdir()
    async with signed_in_server(sandbox, tmp_path / "off", ELICITATION="false", **extra) as (url, idp, audit):
        caller = Approver(sandbox, tmp_path / "alice", "alice", "approve")
        access = await idp.access_token("alice")
        async with mcp_client(url, access, elicitation_callback=caller) as client:
            assert not (await client.call_tool("get_current_user", {})).is_error
            refused = await client.call_tool("delete_secret", OTHER)
            again = await client.call_tool("delete_secret", {**OTHER, "confirm_token": "0" * 32})
    for result in (refused, again):
        assert result.structured_content is not None, result
        assert result.structured_content["error"]["kind"] == "four_eyes_unreachable", result
    assert caller.pages == []
    assert deletes(sandbox) == [DELETE]  # nothing more
