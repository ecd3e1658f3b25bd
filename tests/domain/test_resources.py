"""Resource URIs read back as the tool calls they stand for; cut results link what they left out; completion filters."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.woodpecker.answers import FailedSteps, LogLines, LogMatches, One
from domain.woodpecker.resources import (
    LOG_PAGE_LINES,
    MAX_COMPLETIONS,
    NotAResource,
    complete,
    links_for,
    log_uri,
    pipeline_uri,
    read_of,
    repository_uri,
)

ids = st.integers(min_value=1, max_value=9007199254740991)


@given(repo_id=ids, number=ids, step_id=ids, from_line=st.integers(min_value=0, max_value=10**12))
def test_every_uri_reads_back_as_its_tool_call(
    repo_id: int, number: int, step_id: int, from_line: int
) -> None:
    assert read_of(repository_uri(repo_id)).arguments == {"repo_id": repo_id}
    assert read_of(pipeline_uri(repo_id, number)).tool == "get_pipeline"
    log = read_of(log_uri(repo_id, number, step_id, from_line))
    assert log.tool == "get_step_logs"
    assert log.arguments == {
        "repo_id": repo_id,
        "number": number,
        "step_id": step_id,
        "from_line": from_line,
        "limit": LOG_PAGE_LINES,
    }


@pytest.mark.parametrize(
    "uri",
    [
        "woodpecker://repos/1/../2",
        "woodpecker://repos/%31",
        "woodpecker://repos/\u0661",
        "woodpecker://repos/1/",
        "woodpecker://repos/1/pipelines/2/steps/3/log?from_line=1&x=2",
        "woodpecker://repos/1/pipelines/2/steps/3",
        "woodpecker://repos/1?x",
        "WOODPECKER://repos/1",
        "https://ci.example.org/repos/1",
        "woodpecker://repos/1\n",
    ],
)
def test_anything_else_is_not_a_resource(uri: str) -> None:
    with pytest.raises(NotAResource, match="woodpecker://repos/"):
        read_of(uri)


WHERE = {"repo_id": 6, "number": 1, "step_id": 60103}


def test_a_log_window_links_the_whole_log_and_the_next_page_only_when_something_is_left_out() -> None:
    tail = {"first_line": 9800, "last_line": 9999, "total_lines": 10000}
    head = {"first_line": 0, "last_line": 9, "total_lines": 10000}
    whole = {"first_line": 0, "last_line": 9, "total_lines": 10}
    cut = {**whole, "cut_lines": 3}
    assert [x.uri for x in links_for(LogLines(), WHERE, tail)] == [log_uri(6, 1, 60103)]
    assert [x.uri for x in links_for(LogLines(), WHERE, head)] == [
        log_uri(6, 1, 60103),
        log_uri(6, 1, 60103, 10),
    ]
    assert links_for(LogLines(), WHERE, whole) == ()
    assert [x.uri for x in links_for(LogLines(), WHERE, cut)] == [log_uri(6, 1, 60103)]
    assert [x.uri for x in links_for(LogMatches(), WHERE, {"total_lines": 5})] == [log_uri(6, 1, 60103)]
    assert links_for(One("pipeline", ""), {"repo_id": 6, "number": 1}, {"pipeline": {}}) == ()


def test_a_failure_summary_links_the_log_of_each_step_it_left_lines_of() -> None:
    summary = {
        "failed_steps": [{"step_id": 7, "left_out": {"other_lines": 5}}, {"step_id": 8}, {"step_id": True}]
    }
    assert [x.uri for x in links_for(FailedSteps(), {"repo_id": 6, "number": 2}, summary)] == [
        log_uri(6, 2, 7)
    ]


def test_completion_matches_an_id_prefix_or_a_name_and_caps_the_values() -> None:
    candidates = [("1", "acme/web"), ("2", "acme/api"), ("12", "umbrella/infra"), ("6", "bench/logs")]
    assert complete("1", candidates) == (["1", "12"], 2)
    assert complete("ACME", candidates) == (["1", "2"], 2)
    assert complete("", candidates) == (["1", "2", "12", "6"], 4)
    many = [(str(i), "x") for i in range(1, 300)]
    values, total = complete("", many)
    assert len(values) == MAX_COMPLETIONS and total == 299
