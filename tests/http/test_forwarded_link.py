"""A linking URL forwarded to someone else (docs/adr/0059): the page says whose sign-in it is for, and
the sign-in's side is told which Woodpecker account it got. Over real HTTP, through the OAuth gate."""

from pathlib import Path

import anyio
import httpx
import pytest

from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client
from tests.fixtures.oauth import authorization_server
from tests.http.test_token_linking import link_through_page, linking_server, notices, open_page

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

WARNING = "Paste your token only if that sign-in is yours."


def before_the_field(page: httpx.Response) -> str:
    head, field, _ = page.text.partition('name="token"')
    assert field, page.text
    return head


@pytest.mark.parametrize(
    ("claims", "shown"),
    [
        # The first of preferred_username, email, name that the access token carries, then sub.
        (
            {"preferred_username": "bob\u202e<i>\u200bfdp.exe", "email": "bob@example.org", "name": "Bob"},
            "bob\\u{202E}&lt;i&gt;\\u{200B}fdp.exe",
        ),
        ({"email": "bob@example.org", "name": "Bob B"}, "bob@example.org"),
        ({"name": "Bob  B\n<script>"}, "Bob B &lt;script&gt;"),
        ({}, "bob-subject"),
    ],
    ids=["preferred_username", "email", "name", "sub"],
)
async def test_the_page_names_the_sign_in_that_asked_for_the_link_before_the_paste_field(
    sandbox: Sandbox, tmp_path: Path, claims: dict[str, str], shown: str
) -> None:
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        with anyio.fail_after(60):
            async with mcp_client(url, idp.token(f"{url}/mcp", "bob-subject", **claims)) as bob:
                offer = await bob.call_tool("list_repositories", {})
            link_url = offer.structured_content["link_url"]
            page, _, _ = await open_page(link_url)
            # The URL carries no name: a query that names someone else changes nothing.
            queried, _, _ = await open_page(link_url + "?sign_in=alice&preferred_username=alice")
    assert page.status_code == 200
    head = before_the_field(page)
    assert f"This link is for the sign-in <strong>{shown}</strong>" in head
    assert WARNING in head and "Nobody else needs your token" in head
    assert "\u202e" not in page.text and "\u200b" not in page.text and "<script>" not in page.text
    assert "alice" not in queried.text and f"<strong>{shown}</strong>" in before_the_field(queried)


async def test_a_forwarded_link_says_whose_it_is_and_the_senders_next_answer_names_the_account_linked(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Bob sends his link to the admin; if she pastes anyway, both sides read which account went where."""
    async with authorization_server() as idp, linking_server(sandbox, idp, tmp_path) as url:
        with anyio.fail_after(90):
            async with mcp_client(url, idp.token(f"{url}/mcp", "bob", preferred_username="bob")) as bob:
                offer = await bob.call_tool("list_repositories", {})
                form, _, _ = await open_page(offer.structured_content["link_url"])
                done = await link_through_page(offer.structured_content["link_url"], sandbox.admin_token)
                first = await bob.call_tool("list_repositories", {})
                second = await bob.call_tool("list_repositories", {})
                link = await bob.call_tool("get_woodpecker_link", {})
    assert "This link is for the sign-in <strong>bob</strong>" in before_the_field(form)
    assert done.status_code == 200
    assert (
        f"The sign-in <strong>bob</strong> is now linked to the Woodpecker account "
        f"<strong>{sandbox.admin_login}</strong>" in done.text
    )
    assert not first.is_error and not second.is_error
    [notice] = notices(first)
    assert f"linked to the Woodpecker account {sandbox.admin_login} " in notice
    assert "unlink_woodpecker_token" in notice
    assert notices(second) == [] and notices(link) == []
    assert link.structured_content["woodpecker_login"] == sandbox.admin_login
    assert "if it is not your own account, call unlink_woodpecker_token" in link.content[0].text
