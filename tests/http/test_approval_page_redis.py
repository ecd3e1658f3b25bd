"""The signed-in pages over one real Redis, two replicas in process (ADR 0085): a person refused on a
page another replica asked is audited by the replica that served it, with the asking call's line;
two replicas' posts race and one decides; the waiting call collects that decision once."""

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from adapters.oauth_resource import ApprovalPageApp, SignedInApprovalPages
from adapters.oauth_resource.gate import oauth_principal
from adapters.oauth_resource.page_store import RedisPageStore
from domain.guard.approvers import Approvers, SignedIn
from ports.approval_pages import Asking
from tests.fixtures.http import EchoApp
from tests.http.test_approval_page_app import ALICE, KEY, ORIGIN, FakeSignIn, signed_in

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

LINE = {"event": "guard", "tool": "delete_secret", "outcome": "refused", "path": "page", "principal": "p"}


class Sink:
    def __init__(self) -> None:
        self.lines: list[dict[str, object]] = []

    def record(self, event: Any) -> None:
        self.lines.append(dict(event))

    def require(self, event: Any) -> None:
        self.lines.append(dict(event))


@asynccontextmanager
async def replica(
    redis_url: str, prefix: str, person: SignedIn, sink: Sink
) -> AsyncIterator[tuple[httpx.AsyncClient, SignedInApprovalPages]]:
    store = RedisPageStore(redis_url, prefix=prefix, now=time.time)
    pages = SignedInApprovalPages(
        public_origin=ORIGIN, store=store, link_key=b"l" * 32, audit=sink, now=time.time, poll_seconds=0.05
    )
    app = ApprovalPageApp(
        EchoApp(), pages=pages, sign_in=FakeSignIn(person), principal_key=KEY, approvers=Approvers()
    )
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
            yield client, pages
    finally:
        await store.aclose()


async def ask(pages: SignedInApprovalPages, refused: list[Any]) -> str:
    asking = Asking(
        "delete_secret", oauth_principal("https://sso.example.org", "alice", KEY), refused.append, LINE
    )
    offered = await pages.offer("k1", "Delete secret 4?", 600, asking)
    assert offered is not None
    return offered.url.removeprefix(ORIGIN)


async def test_a_person_refused_on_another_replica_is_audited_there_with_the_asking_calls_line(
    redis_url: str, redis_prefix: str
) -> None:
    asked_on_one: list[Any] = []
    one_sink, two_sink = Sink(), Sink()
    mallory = SignedIn("mallory", None, "mallory", frozenset())
    async with (
        replica(redis_url, redis_prefix, ALICE, one_sink) as (_one, one_pages),
        replica(redis_url, redis_prefix, mallory, two_sink) as (two, _two_pages),
    ):
        path = await ask(one_pages, asked_on_one)
        to_provider = await two.get(path)
        state = to_provider.headers["location"].rsplit("=", 1)[1]
        await two.get(f"/approve/signed-in?code=c&state=state-{state}")
        for _ in range(2):
            page = await two.get(path)
            assert page.status_code == 403 and "<form" not in page.text
        assert await one_pages.wait("k1", 0.1, None) == "pending"
    assert asked_on_one == [] and one_sink.lines == []
    assert [(line["outcome"], line["approver"], line["four_eyes"]) for line in two_sink.lines] == [
        ("refused", {"sub": "mallory", "name": "mallory"}, True)
    ]


async def test_posts_on_two_replicas_decide_once_and_the_decision_is_collected_once(
    redis_url: str, redis_prefix: str
) -> None:
    async with (
        replica(redis_url, redis_prefix, ALICE, Sink()) as (one, one_pages),
        replica(redis_url, redis_prefix, ALICE, Sink()) as (two, two_pages),
    ):
        path = await ask(one_pages, [])
        forms = []
        for client in (one, two):
            page = await signed_in(client, path)
            csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
            public = page.text.split('name="page" value="')[1].split('"')[0]
            forms.append((client, {"page": public, "csrf": csrf}))
        answers: list[str] = []

        async def post(client: httpx.AsyncClient, form: dict[str, str], decision: str) -> None:
            answer = await client.post(path, data={**form, "decision": decision}, headers={"origin": ORIGIN})
            answers.append(answer.text.split('data-outcome="')[1].split('"')[0])

        async with anyio.create_task_group() as group:
            group.start_soon(post, *forms[0], "approve")
            group.start_soon(post, *forms[1], "decline")
        assert len(set(answers)) == 1  # both see the one decision that was made
        taken = await one_pages.wait("k1", 1.0, None)
        assert taken == answers[0]
        assert one_pages.decided_by("k1") is not None
        assert await two_pages.wait("k1", 0.1, None) == "expired"  # no key points at it any more
