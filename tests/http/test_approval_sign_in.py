"""The approver's ID token is checked as an access token is, and more: our client as its audience,
the sign-in's nonce, a published key and an allowed algorithm (ADR 0084)."""

import time

import pytest

from adapters.oauth_resource import OidcSignIn, SignInFailed
from tests.fixtures.oauth import TestAuthorizationServer, authorization_server

pytestmark = pytest.mark.anyio

CLIENT = "woodpecker-approvals"


def sign_in(idp: TestAuthorizationServer) -> OidcSignIn:
    return OidcSignIn(
        idp.issuer, client_id=CLIENT, client_secret="s" * 32, redirect_uri="https://mcp.example.org/r"
    )


async def test_a_verified_id_token_for_our_client_and_nonce_names_the_person() -> None:
    async with authorization_server() as idp:
        claims = await sign_in(idp).id_token_claims(
            idp.token(CLIENT, "alice", nonce="n-1", iat=int(time.time()), email="a@example.org"), "n-1"
        )
    assert claims["sub"] == "alice"


@pytest.mark.parametrize(
    ("audience", "nonce", "overrides"),
    [
        (
            "https://mcp.example.org/mcp",
            "n-1",
            {},
        ),  # an access token for the resource, not an ID token for us
        (CLIENT, "n-2", {}),  # the answer to another sign-in
        (CLIENT, "n-1", {"exp": int(time.time()) - 3600}),
        (CLIENT, "n-1", {"iss": "https://elsewhere.example.org"}),
    ],
)
async def test_an_id_token_that_is_not_the_answer_to_this_sign_in_is_refused(
    audience: str, nonce: str, overrides: dict[str, object]
) -> None:
    async with authorization_server() as idp:
        token = idp.token(audience, "alice", nonce="n-1", **{"iat": int(time.time()), **overrides})
        with pytest.raises(SignInFailed):
            await sign_in(idp).id_token_claims(token, nonce)


async def test_an_id_token_signed_with_an_unpublished_key_or_none_is_refused() -> None:
    async with authorization_server() as idp:
        for token in (idp.rogue_token(CLIENT, kid="rogue-1"), idp.unsigned_token(CLIENT), "not a token"):
            with pytest.raises(SignInFailed):
                await sign_in(idp).id_token_claims(token, "n-1")


@pytest.mark.parametrize(
    "email",
    ["\u212aevin@example.org", "kevin@example.org\u3000", "\u00a0kevin@example.org", "kev in@example.org"],
)
def test_a_verified_email_that_only_looks_like_an_approvers_is_no_email_at_all(email: str) -> None:
    # Found by a review: cleaned for display and lowercased, these matched `email:kevin@example.org`.
    from adapters.oauth_resource.sign_in import _person
    from domain.guard.approvers import parse_approvers, verdict

    approvers = parse_approvers(["email:kevin@example.org"])
    person = _person({"sub": "s", "email": email, "email_verified": True})
    assert person.email is None
    assert verdict(person, is_caller=False, approvers=approvers, four_eyes=True) == "not_listed"
    plain = _person({"sub": "s", "email": "Kevin@Example.org", "email_verified": True})
    assert verdict(plain, is_caller=False, approvers=approvers, four_eyes=True) == "allowed"
