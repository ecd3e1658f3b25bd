"""Linking a person's Woodpecker token once, in OAuth mode: over MCP with the SDK client, through the real page, against the sandbox."""

import base64
import json
import os
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx
import mcp_types as types
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.linked_token_vault import MemoryBackend, RedisBackend, SealedLinkedTokens, TokenCipher
from adapters.mcp_server import tool_definition
from adapters.token_link_page import TokenLinkPage, TokenLinks
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.domain.test_catalogue import DOCUMENTED_ADDITIONS
from tests.fixtures.http import (
    EchoApp,
    ServerProcess,
    free_port,
    mcp_client,
    serve_asgi,
    stop_together,
    team_server,
)
from tests.fixtures.oauth import TestAuthorizationServer, authorization_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def link_env(sandbox: Sandbox, issuer: str, resource: str, audit: Path, **extra: str) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "oauth",
        "WOODPECKER_MCP_RESOURCE_URL": resource,
        "WOODPECKER_MCP_OAUTH_ISSUERS": issuer,
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
        **extra,
    }


@asynccontextmanager
async def linking_server(
    sandbox: Sandbox, idp: TestAuthorizationServer, tmp_path: Path, **extra: str
) -> AsyncIterator[str]:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    async with team_server(
        link_env(sandbox, idp.issuer, resource, tmp_path / "audit.jsonl", **extra), port=port
    ) as url:
        yield url


async def open_page(url: str) -> tuple[httpx.Response, str, str]:
    """GET the link page like a browser; answers the response, the CSRF field and the cookie."""
    async with httpx.AsyncClient(timeout=30) as client:
        page = await client.get(url)
    match = CSRF.search(page.text)
    return page, match.group(1) if match else "", page.cookies.get("woodpecker_mcp_link_csrf", "")


async def submit(
    url: str, token: str, *, csrf: str, cookie: str, origin: str | None = None
) -> httpx.Response:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = origin
    else:
        headers["Origin"] = url.split("/link/")[0]
    async with httpx.AsyncClient(timeout=30, cookies={"woodpecker_mcp_link_csrf": cookie}) as client:
        return await client.post(url, content=f"csrf={csrf}&token={token}", headers=headers)


async def link_through_page(url: str, token: str) -> httpx.Response:
    page, csrf, cookie = await open_page(url)
    assert page.status_code == 200, page.text
    return await submit(url, token, csrf=csrf, cookie=cookie)


class PageFiller:
    """An elicitation callback that answers a URL elicitation by filling in the page with `token`."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen: list[types.ElicitRequestURLParams] = []
        self.answers: list[int] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        if not isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="decline")
        self.seen.append(params)
        self.answers.append((await link_through_page(params.url, self.token)).status_code)
        return types.ElicitResult(action="accept")


def redis_value(client: redis.Redis, key: bytes) -> bytes | None:
    """A key's content whatever its type (strings as stored; the token store's index is a sorted set)."""
    kind = client.type(key)
    if kind == b"string":
        value: bytes | None = client.get(key)
        return value
    if kind == b"zset":
        return b" ".join(member for member, _ in client.zrange(key, 0, -1, withscores=True))
    return None


def redis_values(url: str) -> dict[bytes, bytes | None]:
    client = redis.Redis.from_url(url)
    try:
        return {k: redis_value(client, k) for k in client.scan_iter(match="woodpecker-mcp:*")}
    finally:
        client.close()


def notices(result: types.CallToolResult) -> list[str]:
    """The lines that name a newly linked Woodpecker account (the first answer after a link carries one)."""
    return [
        c.text
        for c in result.content
        if isinstance(c, types.TextContent) and c.text.startswith("Newly linked")
    ]


def logins(sandbox: Sandbox) -> list[str | None]:
    return [r.login for r in sandbox.requests]


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_url_elicitation_links_the_persons_token_and_the_call_runs_as_them(
    sandbox: Sandbox, tmp_path: Path, mode: str
) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        filler = PageFiller(sandbox.user_token)
        with anyio.fail_after(90):
            async with mcp_client(
                url, idp.token(f"{url}/mcp"), mode=mode, elicitation_callback=filler
            ) as alice:
                me = await alice.call_tool("get_current_user", {})
                again = await alice.call_tool("get_current_user", {})
                link = await alice.call_tool("get_woodpecker_link", {})
    assert len(filler.seen) == 1 and filler.answers == [200]
    assert filler.seen[0].url.startswith(f"{url}/link/")
    assert not me.is_error, me.content
    assert me.structured_content["user"]["login"] == sandbox.user_login
    assert again.structured_content["user"]["login"] == sandbox.user_login
    # The call that waited for (2025-11-25) or followed (2026-07-28) the link names the account, once.
    assert [sandbox.user_login in n for n in notices(me)] == [True]
    assert notices(again) == notices(link) == []
    assert link.structured_content == {
        "linked": True,
        "woodpecker_login": sandbox.user_login,
        "linked_at": link.structured_content["linked_at"],
    }
    # Woodpecker saw the person's own token: once from the page's check, then for each call.
    assert set(logins(sandbox)) == {sandbox.user_login}


async def test_a_client_without_elicitation_gets_the_link_in_the_result_and_can_unlink(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        token = idp.token(f"{url}/mcp")
        with anyio.fail_after(90):
            async with mcp_client(url, token) as alice:
                first = await alice.call_tool("list_repositories", {})
                assert sandbox.requests == []
                assert first.is_error
                link_url = first.structured_content["link_url"]
                assert first.structured_content["error"] == "woodpecker_token_not_linked"
                assert link_url in first.content[0].text
                assert (await link_through_page(link_url, sandbox.user_token)).status_code == 200
                listed = await alice.call_tool("list_repositories", {})
                unlinked = await alice.call_tool("unlink_woodpecker_token", {})
                after = await alice.call_tool("list_repositories", {})
                status = await alice.call_tool("get_woodpecker_link", {})
    assert not listed.is_error
    assert unlinked.structured_content == {"unlinked": True}
    assert after.structured_content["error"] == "woodpecker_token_not_linked"
    assert after.structured_content["link_url"] != link_url
    assert status.structured_content == {"linked": False}


async def test_a_second_person_never_runs_with_the_first_persons_token(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        alice_filler = PageFiller(sandbox.user_token)
        with anyio.fail_after(90):
            async with mcp_client(
                url, idp.token(f"{url}/mcp", "alice"), elicitation_callback=alice_filler
            ) as alice:
                assert not (await alice.call_tool("get_current_user", {})).is_error
            sandbox.reset()
            # Same issuer, another subject: another principal, with no token of its own.
            async with mcp_client(url, idp.token(f"{url}/mcp", "bob")) as bob:
                bobs = await bob.call_tool("get_current_user", {})
                bobs_link = await bob.call_tool("get_woodpecker_link", {})
    assert bobs.structured_content["error"] == "woodpecker_token_not_linked"
    assert bobs_link.structured_content["linked"] is False
    assert sandbox.requests == []


async def test_a_used_link_and_a_forged_form_are_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        async with mcp_client(url, idp.token(f"{url}/mcp")) as alice:
            offer = await alice.call_tool("get_current_user", {})
        link_url = offer.structured_content["link_url"]
        page, csrf, cookie = await open_page(link_url)
        headers = page.headers
        foreign = await submit(
            link_url, sandbox.user_token, csrf=csrf, cookie=cookie, origin="https://evil.test"
        )
        no_cookie = await submit(link_url, sandbox.user_token, csrf=csrf, cookie="")
        wrong_csrf = await submit(link_url, sandbox.user_token, csrf="0" * 64, cookie="0" * 64)
        bad_token = await submit(link_url, "not-a-woodpecker-token", csrf=csrf, cookie=cookie)
        done = await submit(link_url, sandbox.user_token, csrf=csrf, cookie=cookie)
        reused = await submit(link_url, sandbox.admin_token, csrf=csrf, cookie=cookie)
        reopened, _, _ = await open_page(link_url)
        unknown, _, _ = await open_page(f"{url}/link/{secrets.token_urlsafe(32)}")
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "same-origin"
    assert "samesite=strict" in headers["set-cookie"].lower() and "httponly" in headers["set-cookie"].lower()
    assert (foreign.status_code, no_cookie.status_code, wrong_csrf.status_code) == (403, 403, 403)
    assert bad_token.status_code == 400 and "did not accept" in bad_token.text
    assert done.status_code == 200 and sandbox.user_login in done.text
    assert sandbox.user_token not in done.text
    assert (reused.status_code, reopened.status_code, unknown.status_code) == (410, 410, 410)
    # Woodpecker was asked about the one good submission and the one bad token only.
    assert [r.path for r in sandbox.requests] == ["/api/user", "/api/user"]
    assert sandbox.admin_login not in logins(sandbox)


@pytest.mark.redis
async def test_two_processes_sharing_redis_see_the_same_link_and_token_and_the_canary_stays_secret(
    sandbox: Sandbox, tmp_path: Path, redis_url: str
) -> None:
    canary = sandbox.user_token  # a real token, random for this sandbox start
    keys = ",".join(base64.b64encode(secrets.token_bytes(32)).decode() for _ in range(2))
    async with authorization_server() as idp:
        port = free_port()  # process A's: links name its origin, whichever process offers them
        resource = f"http://127.0.0.1:{port}/mcp"
        env = link_env(
            sandbox,
            idp.issuer,
            resource,
            tmp_path / "audit.jsonl",
            WOODPECKER_MCP_TOKEN_STORE=redis_url,
            WOODPECKER_MCP_SEAL_KEYS=keys.split(",")[0],
            WOODPECKER_MCP_LINK_KEYS=keys,
        )
        a = ServerProcess(env, tmp_path, "a", port=port)
        b = ServerProcess(env, tmp_path, "b")
        results: list[types.CallToolResult] = []
        try:
            a.wait_until_live()
            b.wait_until_live()
            with anyio.fail_after(90):
                async with mcp_client(b.url, idp.token(resource)) as alice_on_b:
                    offer = await alice_on_b.call_tool("get_current_user", {})
                    results.append(offer)
                link_url = offer.structured_content["link_url"]
                assert link_url.startswith(a.url + "/link/")
                linked = await link_through_page(link_url, canary)
                async with mcp_client(b.url, idp.token(resource)) as alice_on_b:
                    results.append(await alice_on_b.call_tool("get_current_user", {}))
                    results.append(await alice_on_b.call_tool("get_woodpecker_link", {}))
                async with mcp_client(a.url, idp.token(resource)) as alice_on_a:
                    results.append(await alice_on_a.call_tool("list_repositories", {}))
                    stored = redis_values(redis_url)
                    # Unlinked through B: A, which just used the token, no longer has it (no cache).
                    async with mcp_client(b.url, idp.token(resource)) as alice_on_b:
                        results.append(await alice_on_b.call_tool("unlink_woodpecker_token", {}))
                    calls_before = len(sandbox.requests)
                    results.append(await alice_on_a.call_tool("list_repositories", {}))
        finally:
            stop_together(a, b)
    assert linked.status_code == 200
    assert results[1].structured_content["user"]["login"] == sandbox.user_login
    # Announced once for the fleet (in Redis): B's first answer names the account, A's does not.
    assert [sandbox.user_login in n for n in notices(results[1])] == [True]
    assert notices(results[2]) == notices(results[3]) == []
    assert not results[3].is_error
    assert results[4].structured_content == {"unlinked": True}
    assert results[5].structured_content["error"] == "woodpecker_token_not_linked"
    assert len(sandbox.requests) == calls_before
    assert stored, "the sealed token should be in Redis"
    for key, value in stored.items():
        assert canary.encode() not in key and canary.encode() not in (value or b"")
    sealed = [v for k, v in stored.items() if k.startswith(b"woodpecker-mcp:linked:token:")]
    assert sealed and all(v is not None and v.startswith(b"v1.") for v in sealed)
    assert not {k for k in stored if k.startswith(b"woodpecker-mcp:linked:token:")} & set(
        redis_values(redis_url)
    )
    texts = [
        a.output(),
        b.output(),
        (tmp_path / "audit.jsonl").read_text() if (tmp_path / "audit.jsonl").exists() else "",
    ]
    texts += [json.dumps(r.model_dump(mode="json")) for r in results]
    for text in texts:
        assert canary not in text


async def test_oauth_mode_lists_the_catalogue_tools_unchanged_plus_only_the_documented_additions(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        async with mcp_client(url, idp.token(f"{url}/mcp")) as alice:
            listed = {t.name: t for t in (await alice.list_tools()).tools}
    expected = {spec.name: tool_definition(spec) for spec in WOODPECKER_TOOLS}
    assert set(listed) - set(expected) == set(DOCUMENTED_ADDITIONS)
    for name, tool in expected.items():
        got = listed[name]
        assert (got.input_schema, got.annotations) == (tool.input_schema, tool.annotations), name


async def test_an_expired_link_is_refused_by_the_page_before_woodpecker_is_asked() -> None:
    clock = [1_000.0]
    checked: list[Credential] = []

    async def check(credential: Credential) -> str | None:
        checked.append(credential)
        return "bob"

    vault = SealedLinkedTokens(MemoryBackend(), TokenCipher([secrets.token_bytes(32)], os.urandom))
    links = TokenLinks(
        vault,
        public_origin="http://127.0.0.1",
        random_token=lambda: secrets.token_urlsafe(32),
        now=lambda: clock[0],
    )
    page = TokenLinkPage(
        EchoApp(), links=links, check=check, csrf_key=secrets.token_bytes(32), now=lambda: clock[0]
    )
    offer = await links.new_link("alice", "alice")
    async with serve_asgi(page) as url:
        link = offer.url.replace("http://127.0.0.1", url)
        fresh, csrf, cookie = await open_page(link)
        clock[0] += links.link_seconds
        expired = await submit(link, "a-token", csrf=csrf, cookie=cookie, origin="http://127.0.0.1")
        reopened, _, _ = await open_page(link)
    assert fresh.status_code == 200
    assert (expired.status_code, reopened.status_code) == (410, 410)
    assert checked == [] and await vault.token("alice") is None


def memory_page(
    check: Any,
    vault: SealedLinkedTokens | None = None,
    *,
    csrf_key: bytes | None = None,
    link_id: str | None = None,
) -> tuple[TokenLinkPage, TokenLinks]:
    vault = vault or SealedLinkedTokens(MemoryBackend(), TokenCipher([secrets.token_bytes(32)], os.urandom))
    links = TokenLinks(
        vault,
        public_origin="http://127.0.0.1",
        random_token=(lambda: link_id) if link_id else (lambda: secrets.token_urlsafe(32)),
    )
    page = TokenLinkPage(EchoApp(), links=links, check=check, csrf_key=csrf_key or secrets.token_bytes(32))
    return page, links


async def never_asked(credential: Credential) -> str | None:
    raise AssertionError("Woodpecker must not be asked")


@given(
    csrf=st.text(max_size=80),
    cookie=st.text(
        alphabet=st.characters(min_codepoint=0x21, max_codepoint=0xFF, exclude_characters=";"), max_size=80
    ),
)
@settings(max_examples=80, deadline=None)
async def test_whatever_csrf_field_and_cookie_arrive_the_page_refuses_without_failing(
    csrf: str, cookie: str
) -> None:
    page, links = memory_page(never_asked)
    offer = await links.new_link("alice", "alice")
    transport = httpx.ASGITransport(app=page)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answer = await client.post(
            offer.url,
            content=urlencode({"csrf": csrf, "token": "a-token"}),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": "http://127.0.0.1",
                "Cookie": f"woodpecker_mcp_link_csrf={cookie}".encode("latin-1"),  # type: ignore[dict-item]
            },
        )
    assert answer.status_code == 403
    assert await links.linked("alice") is None


@given(fields=st.lists(st.tuples(st.sampled_from(["csrf", "token", "x"]), st.text(max_size=20)), max_size=8))
@settings(max_examples=60, deadline=None)
async def test_whatever_form_is_posted_without_the_pages_csrf_value_is_refused_without_failing(
    fields: list[tuple[str, str]],
) -> None:
    page, links = memory_page(never_asked)
    offer = await links.new_link("alice", "alice")
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://127.0.0.1"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=page), base_url="http://127.0.0.1"
    ) as client:
        answer = await client.post(offer.url, content=urlencode(fields), headers=form)
    assert answer.status_code in (400, 403)
    assert await links.linked("alice") is None


async def test_a_linked_token_store_that_cannot_be_reached_is_a_retryable_page_not_a_crash() -> None:
    # One page with a working store hands out the form; its twin (same keys) has lost its store.
    key, link_id = secrets.token_bytes(32), secrets.token_urlsafe(32)
    working, links = memory_page(never_asked, csrf_key=key, link_id=link_id)
    offer = await links.new_link("alice", "alice")
    unreachable = SealedLinkedTokens(
        RedisBackend(f"redis://:store-password@127.0.0.1:{free_port()}/0", timeout_seconds=5),
        TokenCipher([secrets.token_bytes(32)], os.urandom),
    )
    lost, _ = memory_page(never_asked, unreachable, csrf_key=key, link_id=link_id)
    base = "http://127.0.0.1"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=working), base_url=base) as client:
        form = await client.get(offer.url)
    csrf, cookie = CSRF.search(form.text).group(1), form.cookies["woodpecker_mcp_link_csrf"]  # type: ignore[union-attr]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=lost), base_url=base) as client:
        shown = await client.get(offer.url)
        posted = await client.post(
            offer.url,
            content=f"csrf={csrf}&token=a-token",
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": base,
                "Cookie": f"woodpecker_mcp_link_csrf={cookie}",
            },
        )
    for answer in (shown, posted):
        assert answer.status_code == 503
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["cache-control"] == "no-store"
        assert "store-password" not in answer.text


YES = types.ElicitResult(action="accept", content={"confirm": True})
SECRET = {"scope": "repository", "repo_id": 4, "name": "dotfiles_token"}
REGISTRY = {"scope": "repository", "repo_id": 4, "address": "registry.example.org:5000"}
OTHER_SECRET = {"scope": "repository", "repo_id": 1, "name": "docker_password"}


class Person(PageFiller):
    """Links `token` through the page when sent a link, and says yes to every confirmation question."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.questions: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            return await super().__call__(context, params)
        self.questions.append(params)
        return YES


async def test_in_oauth_mode_questions_answers_and_confirm_tokens_stay_with_the_sign_in(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Alice and Mallory link the same Woodpecker token: only the sign-in tells them apart, and it is what binds."""
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        alice_jwt, mallory_jwt = idp.token(f"{url}/mcp", "alice"), idp.token(f"{url}/mcp", "mallory")
        alice_person, mallory_person, alice_at_dialog = (Person(sandbox.admin_token) for _ in range(3))
        with anyio.fail_after(120):
            async with (
                mcp_client(url, alice_jwt, elicitation_callback=alice_person) as alice,
                mcp_client(url, mallory_jwt, elicitation_callback=mallory_person) as mallory,
                mcp_client(url, alice_jwt) as alice_plain,
                mcp_client(url, mallory_jwt) as mallory_plain,
                mcp_client(
                    url, alice_jwt, mode="legacy", elicitation_callback=alice_at_dialog
                ) as alice_legacy,
            ):
                for person in (alice, mallory):
                    assert not (await person.call_tool("get_current_user", {})).is_error
                assert alice_person.answers == mallory_person.answers == [200]

                # 2026-07-28: Alice's sealed question, answered yes by Mallory, is no answer for Mallory.
                question = await alice.session.call_tool("delete_secret", SECRET, allow_input_required=True)
                assert isinstance(question, types.InputRequiredResult)
                retry = {"input_responses": {"confirm": YES}, "request_state": question.request_state}
                stolen = await mallory.session.call_tool(
                    "delete_secret", SECRET, allow_input_required=True, **retry
                )
                writes_after_stolen_state = sandbox.state_changing_requests()
                own = await alice.session.call_tool(
                    "delete_secret", SECRET, allow_input_required=True, **retry
                )

                # Two calls: Alice's confirm token is refused to Mallory and stays hers to redeem, once.
                first = await alice_plain.call_tool("delete_registry", REGISTRY)
                token = first.structured_content["confirm_token"]
                refused = await mallory_plain.call_tool(
                    "delete_registry", {**REGISTRY, "confirm_token": token}
                )
                writes_after_stolen_token = sandbox.state_changing_requests()
                redeemed = await alice_plain.call_tool(
                    "delete_registry", {**REGISTRY, "confirm_token": token}
                )

                # 2025-11-25 with a dialog: the question is pushed to Alice's own stream and acted on.
                pushed = await alice_legacy.call_tool("delete_secret", OTHER_SECRET)
    # Mallory is asked afresh (a question of their own): not an error, not Alice's approval, nothing written.
    assert isinstance(stolen, types.InputRequiredResult), stolen
    assert stolen.request_state != question.request_state
    assert writes_after_stolen_state == []
    assert isinstance(own, types.CallToolResult) and not own.is_error, own
    assert refused.is_error and refused.structured_content["error"]["kind"] == "token_rejected"
    assert [r.path for r in writes_after_stolen_token] == ["/api/repos/4/secrets/dotfiles_token"]
    assert not redeemed.is_error and not pushed.is_error
    assert len(alice_at_dialog.questions) == 1 and alice_at_dialog.answers == []  # linked already: no page
    assert [(r.method, r.path, r.login) for r in sandbox.state_changing_requests()] == [
        ("DELETE", "/api/repos/4/secrets/dotfiles_token", sandbox.admin_login),
        ("DELETE", "/api/repos/4/registries/registry.example.org%3A5000", sandbox.admin_login),
        ("DELETE", "/api/repos/1/secrets/docker_password", sandbox.admin_login),
    ]
    # The audit trail tells the two sign-ins apart although Woodpecker saw one account.
    events = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    principals: dict[str, set[str]] = {}
    for event in events:
        principals.setdefault(event["outcome"], set()).add(event["principal"])
    (alice_digest,) = principals["executed"]
    (mallory_digest,) = principals["token_rejected"]
    assert mallory_digest != alice_digest and principals["asked"] == {alice_digest, mallory_digest}
