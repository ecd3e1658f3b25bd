"""`resolve` against the sandbox (in-process, ADR 0025): every web link it serves names the right ids; other servers are refused unsent."""

import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.tools import ToolResult, ToolRunner
from ports.woodpecker import Credential
from sandbox.seed import BENCH_REPO_ID, FAILED_TWICE_LOG_STEP, FAILED_TWICE_NUMBER
from sandbox.server import Sandbox
from sandbox.web import WebLink, web_links
from tests.fixtures.sandbox import in_process
from tests.use_cases.conftest import Call, check_result

pytestmark = [pytest.mark.slow]


def _expected(link: WebLink, root: str) -> dict[str, Any]:
    out: dict[str, Any] = {"repo_id": link.repo_id, "full_name": link.full_name}
    canonical = f"{root}/repos/{link.repo_id}"
    if link.number is not None:
        out["number"] = link.number
        canonical += f"/pipeline/{link.number}"
    if link.step_id is not None:
        out["step_id"] = link.step_id
    out["kind"] = (
        "step" if link.step_id is not None else "pipeline" if link.number is not None else "repository"
    )
    if link.step_id is None:
        out["web_url"] = canonical
    return out


def _ids(result: ToolResult) -> dict[str, Any]:
    keys = ("repo_id", "full_name", "number", "step_id", "kind", "web_url")
    return {k: result.structured[k] for k in keys if k in result.structured}


async def _resolve_all(sandbox: Sandbox, references: list[str]) -> list[ToolResult]:
    credential = Credential(sandbox.admin_token)
    gateway = HttpxWoodpeckerGateway(
        sandbox.url, token=credential, retries=0, trust_env=False, transport=in_process(sandbox)
    )
    runner = ToolRunner(WOODPECKER_TOOLS, gateway, default_credential=credential, web_root=sandbox.url)
    try:
        return [await runner.run("resolve", {"reference": r}, None) for r in references]
    finally:
        await gateway.aclose()


def test_every_web_link_of_the_sandbox_resolves_to_what_it_names(sandbox: Sandbox) -> None:
    links = web_links(sandbox.world, sandbox.url)
    assert {link.form for link in links} >= {"repository", "pipeline", "step", "workflow", "step before 2.0"}
    results = anyio.run(_resolve_all, sandbox, [link.url for link in links])
    for link, result in zip(links, results, strict=True):
        check_result(sandbox, "resolve", result)
        assert not result.is_error, (link, result.text)
        got = _ids(result)
        if link.step_id is not None:
            # A step link reads back as the web UI's canonical link to the same step.
            step_pid = result.structured["step_pid"]
            assert (
                got.pop("web_url") == f"{sandbox.url}/repos/{link.repo_id}/pipeline/{link.number}/{step_pid}"
            )
        assert got == _expected(link, sandbox.url), link


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_link_as_people_paste_it_resolves_like_the_link_itself(
    sandbox_session: Sandbox, data: st.DataObject
) -> None:
    link = data.draw(st.sampled_from(web_links(sandbox_session.world, sandbox_session.url)), label="link")
    pasted = link.url
    scheme, rest = pasted.split("://", 1)
    if data.draw(st.booleans(), label="upper-case scheme and host"):
        host, _, path = rest.partition("/")
        pasted = f"{scheme.upper()}://{host.upper()}/{path}"
    if data.draw(st.booleans(), label="without its scheme"):
        pasted = pasted.split("://", 1)[1]
    pasted += data.draw(st.sampled_from(["", "/", "?tab=log", "#L12", "/?x=1#top"]), label="suffix")
    pasted = data.draw(st.sampled_from(["{}", " {} ", "\t{}\n"]), label="around").format(pasted)
    [result] = anyio.run(_resolve_all, sandbox_session, [pasted])
    assert not result.is_error, (pasted, result.text)
    got = _ids(result)
    got.pop("web_url")
    expected = _expected(link, sandbox_session.url)
    expected.pop("web_url", None)
    assert got == expected


FOREIGN = [
    "https://ci.example.org/repos/{repo_id}/pipeline/2",
    "{scheme}://{host}:1/repos/{repo_id}",
    "{scheme}://localhost.evil.example:{port}/repos/{repo_id}",
    "https://{host}:{port}/repos/{repo_id}",
    "{scheme}://evil.example@{host}:{port}/repos/{repo_id}",
    "{scheme}://{host}:{port}\\@evil.example/repos/{repo_id}",
    "{scheme}://{host}:{port}/repos/{repo_id}/pipeline/%2e%2e/1",
]


@pytest.mark.anyio
@pytest.mark.parametrize("template", FOREIGN)
async def test_a_link_to_another_server_or_a_trick_is_refused_with_nothing_sent(
    sandbox: Sandbox, call: Call, template: str
) -> None:
    scheme, authority = sandbox.url.split("://")
    host, port = authority.rsplit(":", 1)
    sandbox.clear_requests()
    reference = template.format(scheme=scheme, host=host, port=port, repo_id=BENCH_REPO_ID)
    result = await call("resolve", reference=reference)
    assert result.is_error and result.structured["error"]["kind"] in ("foreign_link", "not_a_reference")
    assert sandbox.requests == []


@pytest.mark.anyio
async def test_a_foreign_host_is_refused_naming_the_server_to_use(sandbox: Sandbox, call: Call) -> None:
    result = await call("resolve", reference="https://ci.example.org/repos/6/pipeline/2")
    assert result.structured["error"]["kind"] == "foreign_link"
    assert sandbox.url in result.text and "WOODPECKER_URL" in result.text


@pytest.mark.anyio
async def test_a_full_name_a_number_and_a_step_name_resolve_to_ids(call: Call) -> None:
    result = await call("resolve", reference=f"bench/logs#{FAILED_TWICE_NUMBER}", step="test")
    assert not result.is_error, result.text
    s = result.structured
    assert (s["repo_id"], s["number"], s["step_id"]) == (
        BENCH_REPO_ID,
        FAILED_TWICE_NUMBER,
        FAILED_TWICE_LOG_STEP,
    )
    assert (s["workflow"], s["step_name"], s["pipeline_status"]) == ("linux", "test", "failure")
    assert (
        f"get_pipeline_failure_summary(repo_id={BENCH_REPO_ID}, number={FAILED_TWICE_NUMBER})" in result.text
    )


@pytest.mark.anyio
async def test_a_step_that_is_not_there_says_which_steps_are(call: Call) -> None:
    result = await call("resolve", reference=f"bench/logs#{FAILED_TWICE_NUMBER}", step="deploy")
    assert result.structured["error"]["kind"] == "not_found"
    # The sentence names the steps by pid; their names are data, in the error and its JSON line.
    assert "the pids 2, 3, 5 " in result.text.splitlines()[1]
    steps = json.loads(result.text.splitlines()[2])["steps"]
    assert [f"{s['workflow']}/{s['name']}" for s in steps] == ["linux/clone", "linux/test", "windows/build"]
    assert result.structured["error"]["steps"] == steps


@pytest.mark.anyio
async def test_a_step_without_a_pipeline_is_refused(sandbox: Sandbox, call: Call) -> None:
    sandbox.clear_requests()
    result = await call("resolve", reference="bench/logs", step="test")
    assert result.structured["error"]["kind"] == "not_a_reference" and sandbox.requests == []


@pytest.mark.anyio
async def test_a_repository_the_account_cannot_see_is_not_found(call: Call) -> None:
    result = await call("resolve", "eve", reference="umbrella/infra#2")
    assert result.is_error and result.structured["error"]["kind"] in (
        "not_found",
        "unauthorized",
        "forbidden",
    )
