"""For every tool of the catalogue, an echo of the token generated into any one of its answers, at any place and in any encoding an echoing system writes, never reaches the result or a question (docs/adr/0047).

Each example calls the tool's sandbox success case (tests/use_cases/test_tools_sandbox.py) through
a real MCP client, twice on a re-seeded sandbox: once as it is, to count the answers the call reads
(requests and logs), then with `EchoingGateway` putting `before + encoded token + after` into one
of them, chosen by the example, at a generated place (a string, a new member, a new list item, the
whole value, a log line). What the client receives (the result, every question the person was
asked) holds neither the token nor the echoed text, and says that the answer carried the token.
"""

import json

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.domain.test_echoes import ENCODINGS, SAFE_AROUND
from tests.fakes.echoing import EchoingGateway
from tests.fixtures.mcp import MODES, Person, build_harness_on, gateway_to
from tests.use_cases.test_tools_sandbox import SUCCESS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# The first success case of each tool: its arguments and whose token it goes with.
CASE = {tool: (who, args) for tool, who, args, _ in reversed(SUCCESS)}
REFUSAL = "contained the token"
# Tools that read no answer at all, so none can echo the token (validate_pipeline_config sends nothing).
READS_NOTHING = {"validate_pipeline_config"}


async def _call(
    sandbox: Sandbox, tool: str, mode: str, gateway: EchoingGateway, token: str, person: Person
) -> str:
    who, args = CASE[tool]
    sandbox.reset()
    harness = build_harness_on(gateway, Credential(token), web_root=sandbox.url)
    with anyio.fail_after(30):
        async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool(tool, args)
    await gateway.aclose()
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


def test_every_tool_has_a_case() -> None:
    assert set(CASE) == set(WOODPECKER_TOOLS.names)


@pytest.mark.parametrize("tool", sorted(set(CASE) - READS_NOTHING))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
async def test_an_echo_of_the_token_in_any_answer_of_the_tool_never_reaches_the_client(
    sandbox_session: Sandbox, tool: str, data: st.DataObject
) -> None:
    sandbox = sandbox_session
    who = CASE[tool][0] or sandbox.admin_login
    token = sandbox.tokens[who]
    mode = data.draw(st.sampled_from(MODES), label="mode")
    counting = EchoingGateway(gateway_to(sandbox, Credential(token)))
    plain = await _call(sandbox, tool, mode, counting, token, Person("accept"))
    assert counting.answers > 0 and REFUSAL not in plain, plain[:300]

    encoding = data.draw(st.sampled_from(sorted(ENCODINGS)), label="encoding")
    before, after = data.draw(SAFE_AROUND, label="before"), data.draw(SAFE_AROUND, label="after")
    echo = ENCODINGS[encoding](before, token, after)
    answer = data.draw(st.integers(0, counting.answers - 1), label="answer")
    place = data.draw(st.integers(0, 10_000), label="place")
    person = Person("accept")
    echoing = EchoingGateway(gateway_to(sandbox, Credential(token)), answer=answer, place=place, echo=echo)
    seen = await _call(sandbox, tool, mode, echoing, token, person)
    assert echoing.echoed
    for shown in (seen, *person.questions):
        assert token not in shown and echo not in shown, (encoding, shown[:300])
    assert REFUSAL in seen, seen[:300]
