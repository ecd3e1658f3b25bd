"""The signed-in approval page's own refusals, in process (ADR 0084): a sign-in's return must match its
state and cookie, once; a post needs the page's own origin and a sign-in for that page; a sign-in
answers the one page it was made for; an unknown page is not found. The real flow is in
test_approval_page_signed_in.py."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from adapters.oauth_resource import ApprovalPageApp, OidcSignIn, SignedInApprovalPages
from adapters.oauth_resource.gate import oauth_principal
from adapters.oauth_resource.sign_in import Started
from domain.guard.approvers import Approvers, SignedIn
from ports.approval_pages import Approver, Asking
from tests.fixtures.http import EchoApp

pytestmark = pytest.mark.anyio

ORIGIN = "https://mcp.example.org"
KEY = b"k" * 32
ALICE = SignedIn("alice", "alice@example.org", "alice", frozenset())


class FakeSignIn(OidcSignIn):
    """The provider's part done by hand: every code names `person`."""

    def __init__(self, person: SignedIn) -> None:
        super().__init__("https://sso.example.org", client_id="c", client_secret="s", redirect_uri="r")
        self.person = person
        self.started = 0

    async def start(self) -> Started:
        self.started += 1
        return Started(f"https://sso.example.org/auth?n={self.started}", f"state-{self.started}", "v", "n")

    async def finish(self, code: str, started: Started) -> SignedIn:
        return self.person


@asynccontextmanager
async def page_app(
    person: SignedIn = ALICE,
) -> AsyncIterator[tuple[httpx.AsyncClient, SignedInApprovalPages, list[Approver]]]:
    pages = SignedInApprovalPages(public_origin=ORIGIN)
    refused: list[Approver] = []
    app = ApprovalPageApp(
        EchoApp(), pages=pages, sign_in=FakeSignIn(person), principal_key=KEY, approvers=Approvers()
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
        yield client, pages, refused


async def offer(pages: SignedInApprovalPages, key: str, caller: str, refused: list[Approver]) -> str:
    asking = Asking("delete_secret", oauth_principal("https://sso.example.org", caller, KEY), refused.append)
    offered = await pages.offer(key, "Delete secret 4?", 600, asking)
    assert offered is not None
    return offered.url.removeprefix(ORIGIN)


async def signed_in(client: httpx.AsyncClient, path: str) -> httpx.Response:
    to_provider = await client.get(path)
    assert to_provider.status_code == 303 and to_provider.headers["location"].startswith(
        "https://sso.example.org/"
    )
    assert "SameSite=Lax" in to_provider.headers["set-cookie"]
    state = to_provider.headers["location"].rsplit("=", 1)[1]
    back = await client.get(f"/approve/signed-in?code=c&state=state-{state}")
    assert back.status_code == 303 and back.headers["location"] == path
    page = await client.get(path)
    assert page.status_code == 200 and "SameSite=Strict" in page.headers["set-cookie"]
    return page


async def test_a_return_whose_state_does_not_match_the_browsers_cookie_signs_nobody_in() -> None:
    async with page_app() as (client, pages, refused):
        path = await offer(pages, "k1", "alice", refused)
        assert (await client.get(path)).status_code == 303
        client.cookies.clear()
        client.cookies.set("mcp_approval_sign_in", "state-forged", domain="mcp.example.org")
        back = await client.get("/approve/signed-in?code=c&state=state-1")
        assert back.status_code == 400 and "mcp_approval_session" not in back.headers.get("set-cookie", "")


async def test_a_return_with_more_fields_than_a_providers_is_unrecognised_not_a_server_error() -> None:
    # Found by a review: nine fields made parse_qs raise, answered 500 with a traceback in the log.
    async with page_app() as (client, pages, refused):
        path = await offer(pages, "k1", "alice", refused)
        assert (await client.get(path)).status_code == 303
        padding = "&".join(f"a{i}=1" for i in range(9))
        back = await client.get(f"/approve/signed-in?code=c&state=state-1&{padding}")
        assert back.status_code == 400 and "Sign-in not recognised" in back.text


async def test_a_state_is_used_once() -> None:
    async with page_app() as (client, pages, refused):
        path = await offer(pages, "k1", "alice", refused)
        await signed_in(client, path)
        client.cookies.set("mcp_approval_sign_in", "state-1", domain="mcp.example.org")
        assert (await client.get("/approve/signed-in?code=c&state=state-1")).status_code == 400


async def test_a_post_from_another_origin_or_without_a_sign_in_decides_nothing() -> None:
    async with page_app() as (client, pages, refused):
        path = await offer(pages, "k1", "alice", refused)
        page = await signed_in(client, path)
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        public = page.text.split('name="page" value="')[1].split('"')[0]
        body = {"page": public, "csrf": csrf, "decision": "approve"}
        foreign = await client.post(path, data=body, headers={"origin": "https://evil.example"})
        assert foreign.status_code == 403
        client.cookies.delete("mcp_approval_session")
        anonymous = await client.post(path, data=body, headers={"origin": ORIGIN})
        assert anonymous.status_code == 403
        assert await pages.wait("k1", 0.01, None) == "pending"


async def test_a_sign_in_answers_only_the_page_it_was_made_for() -> None:
    async with page_app() as (client, pages, refused):
        first = await offer(pages, "k1", "alice", refused)
        second = await offer(pages, "k2", "alice", refused)
        await signed_in(client, first)
        again = await client.get(second)
        assert again.status_code == 303  # to the provider: no answer on this page with that sign-in


async def test_a_person_not_allowed_is_refused_and_audited_once() -> None:
    async with page_app(SignedIn("mallory", None, "mallory", frozenset())) as (client, pages, refused):
        path = await offer(pages, "k1", "alice", refused)
        to_provider = await client.get(path)
        state = to_provider.headers["location"].rsplit("=", 1)[1]
        await client.get(f"/approve/signed-in?code=c&state=state-{state}")
        for _ in range(2):
            page = await client.get(path)
            assert page.status_code == 403 and "Nothing was done" in page.text and "<form" not in page.text
        assert refused == [Approver("mallory", "mallory", other_than_caller=True)]


async def test_an_unknown_page_is_not_found_and_other_paths_pass_through() -> None:
    async with page_app() as (client, _pages, _refused):
        assert (await client.get("/approve/nothing-here")).status_code == 404
        assert (await client.get("/mcp")).status_code == 200
