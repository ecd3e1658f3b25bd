"""WOODPECKER_ALLOW_TOOLS / WOODPECKER_DENY_TOOLS / WOODPECKER_READ_ONLY, per behaviour.md."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.config import ConfigError
from domain.tool_filter import select_tools
from domain.woodpecker.catalogue import WOODPECKER_TOOLS

READS = {t.name for t in WOODPECKER_TOOLS if t.is_read}


def _names(allow: str | None = None, deny: str | None = None, read_only: bool = False) -> set[str]:
    return set(select_tools(WOODPECKER_TOOLS, allow=allow, deny=deny, read_only=read_only).catalogue.names)


def _error(allow: str | None = None, deny: str | None = None, read_only: bool = False) -> str:
    with pytest.raises(ConfigError) as caught:
        select_tools(WOODPECKER_TOOLS, allow=allow, deny=deny, read_only=read_only)
    return str(caught.value)


def test_without_settings_all_75_tools_are_registered() -> None:
    assert len(_names()) == len(WOODPECKER_TOOLS)


def test_read_only_alone_registers_exactly_the_read_tools() -> None:
    assert _names(read_only=True) == READS and len(READS) > len(_names()) // 3


def test_essential_registers_the_12_essential_tools() -> None:
    names = _names(allow="essential")
    assert len(names) == 12 and "get_step_logs" in names and "trigger_pipeline" in names
    # What "why did my build fail?" needs (issue 36).
    assert {"get_pipeline_failure_summary", "search_step_logs", "resolve", "wait_for_pipeline"} <= names


def test_prefixes_and_names_combine() -> None:
    names = _names(allow="list_*,get_pipeline")
    assert names == {n for n in WOODPECKER_TOOLS.names if n.startswith("list_")} | {"get_pipeline"}


def test_deny_is_subtracted_from_allow_and_whitespace_and_empty_entries_are_ignored() -> None:
    assert _names(allow=" list_* , ,get_pipeline ,", deny="list_users,  list_agent*") == (
        {n for n in WOODPECKER_TOOLS.names if n.startswith("list_")}
        - {"list_users", "list_agents", "list_agent_tasks"}
    ) | {"get_pipeline"}
    assert _names(allow=" , ") == set(WOODPECKER_TOOLS.names)


def test_the_selection_keeps_catalogue_order() -> None:
    selection = select_tools(
        WOODPECKER_TOOLS, allow="get_pipeline,list_pipelines", deny=None, read_only=False
    )
    assert selection.catalogue.names == ("list_pipelines", "get_pipeline")


def test_an_entry_that_matches_nothing_stops_the_server_and_is_named() -> None:
    assert "'list_pipeline' matches no tool" in _error(allow="list_pipeline")
    assert "WOODPECKER_DENY_TOOLS" in _error(deny="frobnicate_*") and "frobnicate_*" in _error(
        deny="frobnicate_*"
    )


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "0123456789abcdef0123456789abcdef",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
        "s3cr3t/with+base64=",
        "woodpeckertokenvalue",
    ],
)
def test_an_entry_that_looks_like_a_token_is_not_echoed(secret: str) -> None:
    for message in (_error(allow=secret), _error(deny=secret), _error(allow=f"list_*,{secret}*x")):
        assert secret not in message and "looks like a token" in message


def test_a_star_anywhere_but_the_end_is_refused() -> None:
    for entry in ("*_pipeline", "list_*_x", "**", "list**"):
        message = _error(allow=entry)
        assert "*" in message and "end" in message


def test_essential_in_the_deny_list_is_an_error() -> None:
    assert "essential" in _error(deny="essential")


def test_an_exact_write_tool_under_read_only_is_an_error() -> None:
    message = _error(allow="list_pipelines,delete_repository", read_only=True)
    assert "delete_repository" in message and "WOODPECKER_READ_ONLY" in message


def test_a_pattern_that_only_hits_write_tools_under_read_only_warns() -> None:
    selection = select_tools(WOODPECKER_TOOLS, allow="delete_*,get_pipeline", deny=None, read_only=True)
    assert set(selection.catalogue.names) == {"get_pipeline"}
    assert len(selection.warnings) == 1 and "delete_*" in selection.warnings[0]


def test_a_pattern_that_hits_reads_and_writes_under_read_only_keeps_the_reads_without_warning() -> None:
    selection = select_tools(WOODPECKER_TOOLS, allow="essential", deny=None, read_only=True)
    assert set(selection.catalogue.names) == {
        "list_repositories",
        "get_repository",
        "list_pipelines",
        "get_pipeline",
        "get_step_logs",
        "get_pipeline_failure_summary",
        "search_step_logs",
        "resolve",
        "wait_for_pipeline",
    }
    assert selection.warnings == ()


def test_denying_a_write_tool_under_read_only_is_harmless() -> None:
    assert _names(deny="delete_repository", read_only=True) == READS


def test_every_problem_is_reported_at_once() -> None:
    message = _error(allow="nope_a,*x", deny="essential")
    assert "nope_a" in message and "*x" in message and "essential" in message


def test_denying_everything_leaves_no_tools_and_says_so() -> None:
    selection = select_tools(WOODPECKER_TOOLS, allow=None, deny="*", read_only=False)
    assert len(selection.catalogue) == 0 and selection.warnings


@given(
    st.lists(st.sampled_from(WOODPECKER_TOOLS.names), max_size=5),
    st.lists(st.sampled_from(WOODPECKER_TOOLS.names), max_size=5),
)
def test_exact_names_select_allow_minus_deny(allow: list[str], deny: list[str]) -> None:
    expected = (set(allow) if allow else set(WOODPECKER_TOOLS.names)) - set(deny)
    assert _names(allow=",".join(allow), deny=",".join(deny)) == expected


@pytest.mark.parametrize("name", WOODPECKER_TOOLS.names)
def test_a_mistyped_tool_name_is_always_named_in_the_error(name: str) -> None:
    assert f"'{name}_x' matches no tool" in _error(deny=f"{name}_x")
