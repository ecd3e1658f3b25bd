"""How a guarded call reaches the person on this request: the pushed dialog (the `Asker` port over the
session), the 2026-07-28 question's schema and answer, the progress port, and the channel choice."""

import logging
import secrets
from dataclasses import replace
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from adapters.mcp_server.application import McpApplication, identity
from adapters.mcp_server.reaching import way_of_asking
from ports.asker import Answer, no_answer
from ports.use_cases.guarded import CallContext

logger = logging.getLogger(__name__)

# The key of our one question in `inputRequests` / `inputResponses` (2026-07-28).
CONFIRM_KEY = "confirm"
CONFIRM_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Confirm",
            "description": "Yes, do this. Anything else and nothing is done.",
        }
    },
    "required": ["confirm"],
}


class McpSessionAsker:
    """The Asker port over a 2025-11-25 session: `elicitation/create` tied to the tool call's request."""

    def __init__(
        self, session: ServerSession, request_id: types.RequestId | None, timeout: float | None
    ) -> None:
        self._session = session
        self._request_id = request_id
        self._timeout = timeout

    async def ask(self, message: str) -> Answer:
        try:
            with anyio.fail_after(self._timeout):
                result = await self._session.elicit_form(
                    message, CONFIRM_SCHEMA, related_request_id=self._request_id
                )
        except TimeoutError:
            logger.info("the elicitation timed out; nobody answered, nothing is done")
            return no_answer("timeout")
        except MCPError as e:
            # The client, or a gateway between it and the person, answered with an error (no
            # back-channel, a dialog it cannot draw), or the SDK timed the request out itself.
            logger.info("the elicitation was answered with an error; nothing is done")
            return no_answer("timeout" if e.error.code == types.REQUEST_TIMEOUT else "error")
        except ValidationError:
            logger.info("the elicitation came back as no elicitation result; nothing is done")
            return no_answer("malformed")
        except Exception:
            # Any other failure on the way (a connection that broke) is no answer: never a yes.
            logger.info("the elicitation did not come back with an answer; nothing is done")
            return no_answer("error")
        return answer_of(result)


def answer_of(result: object) -> Answer:
    """Our reading of an elicitation result: only accept with `confirm` exactly true is a yes;
    anything that is no elicitation result is no answer at all."""
    if not isinstance(result, types.ElicitResult):
        return no_answer("malformed")
    if result.action != "accept":
        return Answer(result.action)
    content = result.content or {}
    return Answer("accept", confirmed=content.get("confirm") is True)


class McpUrlOpener:
    """The PageOpener port over a 2025-11-25 session: `elicitation/create` in URL mode, then
    `notifications/elicitation/complete` once the page is answered. An `accept` means only that the
    person agreed to open the page; the page's own form decides."""

    def __init__(
        self, session: ServerSession, request_id: types.RequestId | None, timeout: float | None
    ) -> None:
        self._session = session
        self._request_id = request_id
        self._timeout = timeout
        self._id = secrets.token_hex(16)

    async def open(self, url: str, message: str) -> Literal["opened", "refused", "unavailable"]:
        try:
            with anyio.fail_after(self._timeout):
                result = await self._session.elicit_url(
                    message, url, self._id, related_request_id=self._request_id
                )
        except Exception:
            # An error, a time-out, no back-channel: the client could not offer the link.
            logger.info("the URL elicitation was not answered; nothing is done")
            return "unavailable"
        if not isinstance(result, types.ElicitResult):
            return "unavailable"
        return "opened" if result.action == "accept" else "refused"

    async def done(self) -> None:
        try:
            await self._session.send_elicit_complete(self._id, related_request_id=self._request_id)
        except Exception:
            logger.debug("the elicitation's completion could not be sent", exc_info=True)


class McpProgress:
    """The Progress port over the request's own session: `notifications/progress` against the
    client's progressToken (the SDK sends nothing when the request carried none)."""

    def __init__(self, session: ServerSession) -> None:
        self._session = session

    async def report(self, progress: float, total: float | None, message: str) -> None:
        try:
            await self._session.report_progress(progress, total, message)
        except Exception:
            # A client that cannot be told (gone, no back-channel) must not fail the call.
            logger.debug("a progress notification could not be sent", exc_info=True)


def _input_answer(params: types.CallToolRequestParams) -> Answer | None:
    responses = params.input_responses or {}
    if CONFIRM_KEY not in responses:
        return None
    return answer_of(responses[CONFIRM_KEY])


def call_context(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, app: McpApplication
) -> CallContext:
    """The way of asking for this one request (domain/guard/reach.py picks it from the request's
    facts), with the port that carries it out."""
    principal, credential = identity(ctx, app)
    session = ctx.session
    way = way_of_asking(ctx, app, params.name)
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    base = CallContext(principal, credential, way.channel)
    if way.channel == "token":
        return replace(base, no_dialog=way.no_dialog or "client")
    if way.channel == "push":
        return replace(base, asker=McpSessionAsker(session, ctx.request_id, app.ask_timeout_seconds))
    if way.channel == "mrtr" or (way.reached == "url_elicitation" and modern):
        base = replace(base, answer=_input_answer(params), request_state=params.request_state)
    if way.channel != "page":
        return base
    page = replace(base, pages=app.pages, reached=way.reached)
    if way.reached == "url_elicitation" and not modern:
        # URL-mode elicitation pushed during the call: the client offers the page's link to the person (ADR 0064).
        return replace(page, page_opener=McpUrlOpener(session, ctx.request_id, app.ask_timeout_seconds))
    return page
