"""Four eyes holds on every way of asking (ADR 0084; found by an attacker's review): a tool only a second,
signed-in person may approve asks on the approval page offered through URL-mode elicitation, or
nowhere. A client with no dialog (the two-call token), a client whose own dialog would answer
(2025-11-25 push, 2026-07-28 form), and a page that cannot be offered are each refused, with nothing
asked and nothing sent, through the SDK's client against the sandbox.
"""

from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from dependency_injector import providers
from mcp import Client

import tests.fixtures.mcp as fixtures
from adapters.mcp_server.reaching import way_of_asking
from adapters.oauth_resource import SignedInApprovalPages
from domain.guard.reach import URL_PAGE
from entrypoints.settings import read_settings
from entrypoints.settings.model import four_eyes_problems
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fixtures.mcp import Person

pytestmark = pytest.mark.anyio

FOUR_EYES = {"WOODPECKER_MCP_FOUR_EYES": "delete_secret"}
DELETE = {"scope": "repository", "repo_id": 1, "name": "deploy_token"}
OTHER = {"scope": "global", "address": "quay.io"}  # delete_registry: not a four-eyes tool


def signed_in_harness(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> fixtures.Harness:
    """The product's composition with OAuth mode's signed-in pages (as the team server builds them)."""
    original = fixtures.build_container

    def with_pages(settings: Any, **kwargs: Any) -> Any:
        container = original(settings, **kwargs)
        pages = SignedInApprovalPages(
            public_origin="https://mcp.example.org", four_eyes=frozenset({"delete_secret"})
        )
        container.pages.override(providers.Object(pages))
        return container

    monkeypatch.setattr(fixtures, "build_container", with_pages)
    return fixtures.build_harness(sandbox, sandbox.admin_token, principal="alice", environ=FOUR_EYES)


class Opens(Person):
    """A person who opens a page's link (URL mode: the accept only opens it) and says yes to a dialog."""

    async def __call__(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if getattr(params, "mode", None) == "url":
            self.questions.append(params.message)
            return types.ElicitResult(action="accept")
        return await super().__call__(ctx, params)


def refused(result: Any) -> None:
    assert isinstance(result, types.CallToolResult) and result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["error"]["kind"] == "four_eyes_unreachable", result.structured_content
    assert "confirm_token" not in result.structured_content


async def test_a_client_without_a_dialog_gets_no_token_for_a_four_eyes_tool(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = signed_in_harness(sandbox, monkeypatch)
    with anyio.fail_after(30):
        async with Client(harness.server, mode="legacy") as client:
            first = await client.session.call_tool("delete_secret", dict(DELETE))
            guessed = await client.session.call_tool("delete_secret", {**DELETE, "confirm_token": "0" * 32})
    refused(first)
    refused(guessed)
    assert sandbox.state_changing_requests() == []
    assert harness.audit.outcomes() == ["denied", "denied"]
    assert [e["policy"] for e in harness.audit.events] == ["four_eyes", "four_eyes"]


async def test_the_callers_own_dialog_cannot_approve_a_four_eyes_tool_its_question_is_the_pages_link(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's client declares a form dialog and URL mode: in the page's `auto` mode a guarded call
    # asks the form dialog, whose yes is the caller's own. A four-eyes tool asks on the page instead,
    # whose link the client offers; the caller's accept only opens it, and the page decides. (On
    # 2025-11-25 the same route pushes the link: the route test below; tests/http's signed-in tests
    # carry it to a real page over HTTP.)
    mode = "2026-07-28"
    harness = signed_in_harness(sandbox, monkeypatch)
    person = Opens("accept")
    with anyio.fail_after(30):
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            result = await client.session.call_tool("delete_secret", dict(DELETE), allow_input_required=True)
            other = await client.session.call_tool("delete_registry", dict(OTHER), allow_input_required=True)
    assert isinstance(result, types.InputRequiredResult)
    (request,) = (result.input_requests or {}).values()
    assert isinstance(request, types.ElicitRequest) and request.params.mode == "url"
    # The tool beside it, not named, asks the caller's own form dialog as before.
    assert isinstance(other, types.InputRequiredResult)
    (form,) = (other.input_requests or {}).values()
    assert isinstance(form, types.ElicitRequest) and form.params.mode in (None, "form")
    assert person.questions == [] and sandbox.state_changing_requests() == []


def test_a_four_eyes_tool_prefers_the_pages_link_wherever_the_client_can_offer_it() -> None:
    # A client declaring both a form dialog and URL mode would get the dialog in the page's `auto`
    # mode; a four-eyes tool takes the page instead.
    app = SimpleNamespace(
        elicitation_enabled=True, approval_page="auto", pages=object(), four_eyes=frozenset({"delete_secret"})
    )
    session = SimpleNamespace(
        client_capabilities=types.ClientCapabilities(
            elicitation=types.ElicitationCapability(form={}, url={})
        ),
        can_send_request=False,
    )
    ctx = SimpleNamespace(session=session, protocol_version="2026-07-28")
    assert way_of_asking(ctx, app, "delete_secret") == URL_PAGE  # type: ignore[arg-type]
    assert way_of_asking(ctx, app, "delete_registry").channel == "mrtr"  # type: ignore[arg-type]
    # 2025-11-25 with a back-channel: the link pushed, never the caller's push dialog.
    session.can_send_request = True
    legacy = SimpleNamespace(session=session, protocol_version="2025-11-25")
    assert way_of_asking(legacy, app, "delete_secret") == URL_PAGE  # type: ignore[arg-type]
    assert way_of_asking(legacy, app, "delete_registry").channel == "push"  # type: ignore[arg-type]


@pytest.mark.parametrize("off", [{"WOODPECKER_MCP_APPROVAL_PAGE": "off"}, {"ELICITATION": "false"}])
def test_four_eyes_with_no_page_at_all_stops_the_server(off: dict[str, str]) -> None:
    settings = read_settings(
        {"ELICITATION": "true", **FOUR_EYES, **off}, woodpecker=("https://ci.example.com", Credential("t"))
    )
    (problem,) = four_eyes_problems(settings, None)
    assert "WOODPECKER_MCP_FOUR_EYES" in problem and next(iter(off)) in problem
