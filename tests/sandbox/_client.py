"""Small helpers for talking to the sandbox over real loopback HTTP in tests."""

from typing import Any

import httpx

from sandbox.server import Sandbox

TIMEOUT = httpx.Timeout(10.0)


def client(sb: Sandbox, token: str | None = None) -> httpx.Client:
    """An httpx client on the sandbox root; `token` is sent as a Bearer token when given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # Plain HTTP on loopback: skipping the CA bundle load makes a client ~100x cheaper to create.
    return httpx.Client(
        base_url=sb.url, headers=headers, timeout=TIMEOUT, follow_redirects=False, verify=False
    )


def admin(sb: Sandbox) -> httpx.Client:
    return client(sb, sb.admin_token)


def user(sb: Sandbox) -> httpx.Client:
    return client(sb, sb.user_token)


def outsider(sb: Sandbox) -> httpx.Client:
    return client(sb, sb.outsider_token)


def anonymous(sb: Sandbox) -> httpx.Client:
    return client(sb)


def json_of(response: httpx.Response) -> Any:
    """The JSON body, asserting it really is JSON (an unrouted path answers 200 text/html)."""
    assert response.headers.get("content-type", "").startswith("application/json"), (
        response.status_code,
        response.headers.get("content-type"),
        response.text[:200],
    )
    return response.json()
