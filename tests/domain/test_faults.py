"""The facts a failed request carries, their words, and the hints an error result leaves out because of them."""

from hypothesis import given
from hypothesis import strategies as st

from domain.tools import ToolSpec
from domain.woodpecker import results
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.faults import (
    Answered,
    Fault,
    NoServer,
    NoSuchStep,
    NotAsPlanned,
    Redirected,
    Step,
    TokenShape,
    TooLarge,
    Unexpected,
    Unreachable,
    Unreadable,
    WebUi,
)
from ports.use_cases.tools import _kind
from ports.woodpecker import (
    BadResponse,
    NotFound,
    RedirectRefused,
    ServerError,
    Unauthorized,
    Unavailable,
    WoodpeckerError,
    failed,
)

# What a person reads that gives each next step: a message that gives a step must say it.
SAYS: dict[Step, str] = {
    "check_connection": "get_server_info",
    "check_rights": "get_current_user",
    "activation": "include_inactive",
    "check_url": "WOODPECKER_URL",
    "retry_later": "try again later",
    "setup": "restart",
}

ANSWERED = st.builds(
    Answered,
    st.sampled_from([400, 401, 403, 404, 405, 409, 418, 422, 429, 500, 502, 503]),
    st.one_of(st.none(), st.text(min_size=1, max_size=40)),
    st.booleans(),
    st.sampled_from(["none", "own", "client"]),
)
OTHERS: list[Fault] = [
    *(Unreachable(how, 12.5) for how in ("connect_timeout", "read_timeout", "deadline", "tls", "connect")),
    Unreachable("closed"),
    Unreachable("other"),
    *(
        Unreachable("connect", url="https://ci.example.org:443/ci", cause=cause)
        for cause in ("refused", "unresolved", "no_route", "reset")
    ),
    Unreachable("certificate", url="https://ci.example.org:443", reason="self-signed certificate"),
    Unreachable("tls", url="https://ci.example.org:443", reason="UNEXPECTED_EOF_WHILE_READING"),
    Unreachable("plain_http", url="https://ci.example.org:443"),
    *(Unreadable(how, "the log is not valid UTF-8") for how in ("compression", "cut_off", "not_json", "log")),
    TooLarge(4 * 1024 * 1024),
    WebUi(),
    Redirected(302),
    NotAsPlanned("GET", "another path"),
    TokenShape(),
    *(NoServer(problem) for problem in ("missing", "invalid", "scheme", "userinfo", "unusable")),
    Unexpected("pipeline"),
    Unexpected("repository", missing="id"),
    NoSuchStep(7, 42, 3),
]
FACTS = st.one_of(ANSWERED, st.sampled_from(OTHERS))


@given(FACTS)
def test_a_next_step_a_fact_claims_is_in_its_words(fact: Fault) -> None:
    words = fact.words()
    assert words.strip()
    for step in fact.gives():
        assert SAYS[step] in words, (fact, step)


@given(ANSWERED)
def test_an_answer_quotes_woodpeckers_text_exactly_when_it_says_so(fact: Answered) -> None:
    if fact.quotes_detail:
        assert fact.detail and fact.detail in fact.words()
    elif fact.detail:
        assert fact.status in (401, 429)


def test_the_port_error_keeps_the_fact_its_class_and_status() -> None:
    cases: list[tuple[Fault, type[WoodpeckerError], int | None]] = [
        (Answered(404, "no such repo", repository=True), NotFound, 404),
        (Answered(401, sent="client"), Unauthorized, 401),
        (Answered(502), ServerError, 502),
        (Answered(429), Unavailable, 429),
        (Redirected(301), RedirectRefused, 301),
        (TokenShape(), Unauthorized, 401),
        (Unreachable("connect"), Unavailable, None),
        (Unexpected("repository", missing="id"), BadResponse, None),
        (NoSuchStep(7, 42, 3), NotFound, 404),
    ]
    for fact, kind, status in cases:
        error = failed(fact)
        assert type(error) is kind
        assert error.status == status
        assert error.fault == fact
        assert str(error) == fact.words()
    assert failed(Answered(404, "no such repo")).detail == "no such repo"


@given(FACTS, st.sampled_from(list(WOODPECKER_TOOLS)), st.sampled_from([{}, {"repo_id": 3}]))
def test_an_error_result_leaves_out_only_a_hint_whose_step_the_message_gave(
    fact: Fault, tool: ToolSpec, args: dict[str, int]
) -> None:
    error = failed(fact)
    result = results.failure(
        tool,
        args,
        kind=_kind(error),
        message=str(error),
        status=error.status,
        detail=error.detail,
        fault=error.fault,
    )
    assert result.is_error
    hint = result.structured["error"]["hint"]
    # The message comes first (on the text's one line), and the problem and the fix stay in the text either way.
    assert result.text.startswith(results.one_line(f"{tool.name} failed: {str(error).rstrip('.')}."))
    assert len(result.text.splitlines()) == 1
    for step, says in SAYS.items():
        if says in hint and says not in result.text:
            raise AssertionError((fact, step, result.text))


def test_a_rejected_token_says_get_server_info_once_and_a_refused_connection_adds_it() -> None:
    tool = WOODPECKER_TOOLS.get("get_repository")
    for fact, times in ((Answered(401), 1), (Unreachable("connect"), 1), (Answered(403), 0)):
        error = failed(fact)
        text = results.failure(
            tool, {"repo_id": 1}, kind=_kind(error), message=str(error), fault=error.fault
        ).text
        assert text.count("get_server_info") == times, text


def _not_found(tool: str, args: dict[str, object], fact: Answered) -> str:
    error = failed(fact)
    spec = WOODPECKER_TOOLS.get(tool)
    return results.failure(spec, args, kind=_kind(error), message=str(error), fault=error.fault).text


def test_a_missing_object_in_a_repository_is_not_blamed_on_the_repository_alone() -> None:
    # A pipeline number the repository does not have answered "it may not be activated" only.
    text = _not_found("get_pipeline", {"repo_id": 1, "number": 999}, Answered(404, repository=True))
    assert "does not exist" in text and "list_pipelines shows the pipelines of repository 1" in text, text
    assert "include_inactive=true" in text  # the repository may still be the one missing
    cron = _not_found("get_cron", {"repo_id": 1, "cron_id": 9}, Answered(404, repository=True))
    assert "list_crons shows the crons of repository 1" in cron, cron


def test_a_404_outside_a_repository_names_the_list_to_look_in_once() -> None:
    text = _not_found("get_agent", {"agent_id": 99}, Answered(404))
    assert "list_agents shows the existing ones" in text, text
    assert text.count("Not found") == 1 and text.lower().count("check the id") == 1, text


def test_a_404_at_the_server_root_says_the_url_is_not_a_woodpecker_root() -> None:
    text = _not_found("get_server_info", {}, Answered(404, root=True))
    assert "WOODPECKER_URL" in text and "list_" not in text and "check the id" not in text.lower(), text
    # A call that names nothing cannot miss an object: the URL is the likelier cause.
    listing = _not_found("list_repositories", {}, Answered(404))
    assert "get_server_info" in listing and "check the id" not in listing.lower(), listing


def test_get_server_info_does_not_tell_to_call_itself() -> None:
    error = failed(Unreachable("connect"))
    tool = WOODPECKER_TOOLS.get("get_server_info")
    text = results.failure(tool, {}, kind=_kind(error), message=str(error), fault=error.fault).text
    assert "get_server_info failed: Could not connect" in text and text.count("get_server_info") == 1, text


UNREACHABLE = [fact for fact in OTHERS if isinstance(fact, Unreachable)]


def test_only_a_refused_certificate_advises_the_ca_file_or_insecure_tls() -> None:
    # The one failure trusting a CA or skipping the check can mend; elsewhere it would only weaken TLS.
    for fact in UNREACHABLE:
        words = fact.words()
        advised = "WOODPECKER_CA_FILE" in words or "WOODPECKER_INSECURE_TLS=true" in words
        assert advised == (fact.how == "certificate"), fact


def test_a_failure_to_reach_names_the_url_it_tried_and_the_cause() -> None:
    for fact in UNREACHABLE:
        if fact.url:
            assert f" at {fact.url}" in fact.words(), fact
        if fact.reason:
            assert f"({fact.reason})" in fact.words(), fact
    said = {cause: Unreachable("connect", cause=cause).words() for cause in ("refused", "unresolved")}
    assert "refused" in said["refused"] and "could not be resolved" in said["unresolved"], said
