"""Toolsets narrow the catalogue: every group belongs to one, unknown names are refused naming the entry, and choosing never widens."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.config import ConfigError
from domain.tools import Catalogue
from domain.toolsets import TOOLSETS_VARIABLE, Toolsets
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS

NAMED = [n for n in WOODPECKER_TOOLSETS.names if n != "all"]


def names_of(catalogue: Catalogue) -> set[str]:
    return set(catalogue.names)


def test_the_toolsets_the_issue_names_exist() -> None:
    assert set(WOODPECKER_TOOLSETS.names) >= {
        "repositories",
        "pipelines",
        "logs",
        "secrets",
        "registries",
        "crons",
        "organizations",
        "users",
        "admin",
        "essential",
        "all",
    }


def test_every_tool_is_in_exactly_one_group_toolset() -> None:
    group_sets = [n for n in WOODPECKER_TOOLSETS.names if n not in ("essential", "all")]
    for tool in WOODPECKER_TOOLS:
        holders = [n for n in group_sets if tool.name in WOODPECKER_TOOLSETS.members(n, WOODPECKER_TOOLS)]
        assert len(holders) == 1, (tool.name, holders)


ALWAYS = {"get_server_info", "get_current_user"}


def test_essential_is_the_tools_marked_essential_and_the_two_every_selection_keeps() -> None:
    chosen = WOODPECKER_TOOLSETS.select(("essential",), WOODPECKER_TOOLS)
    assert names_of(chosen) == {t.name for t in WOODPECKER_TOOLS if t.essential} | ALWAYS
    assert {"get_pipeline_failure_summary", "search_step_logs", "resolve", "wait_for_pipeline"} <= names_of(
        chosen
    )


def test_pipelines_and_logs_together_are_the_union_in_catalogue_order() -> None:
    chosen = WOODPECKER_TOOLSETS.select(("logs", "pipelines"), WOODPECKER_TOOLS)
    assert list(chosen.names) == [
        t.name for t in WOODPECKER_TOOLS if t.group in ("pipelines", "logs") or t.name in ALWAYS
    ]


@pytest.mark.parametrize("names", [("pipelines",), ("logs",), ("secrets", "crons"), ("essential",)])
def test_every_selection_keeps_the_tools_the_errors_send_people_to(names: tuple[str, ...]) -> None:
    # The error texts and docs/troubleshooting.md say "call get_server_info" and "call get_current_user".
    assert ALWAYS <= names_of(WOODPECKER_TOOLSETS.select(names, WOODPECKER_TOOLS))


def test_the_kept_tools_are_kept_only_where_the_catalogue_has_them() -> None:
    narrowed = WOODPECKER_TOOLSETS.select(("pipelines",), WOODPECKER_TOOLS)
    assert names_of(WOODPECKER_TOOLSETS.select(("secrets",), narrowed)) == ALWAYS


@pytest.mark.parametrize("raw", [None, "", " , ,"])
def test_no_names_means_no_narrowing(raw: str | None) -> None:
    assert WOODPECKER_TOOLSETS.parse(raw, TOOLSETS_VARIABLE) is None
    assert WOODPECKER_TOOLSETS.select(None, WOODPECKER_TOOLS) is WOODPECKER_TOOLS


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("pipelines,pipeline", "'pipeline' (did you mean pipelines?) is not a toolset"),
        ("Logs", "'Logs' (did you mean logs?) is not a toolset"),
        ("frobnicate", "'frobnicate' is not a toolset"),
        # Every unknown entry, not only the first (issue 36).
        (
            "pipeline,log",
            "'pipeline' (did you mean pipelines?) and 'log' (did you mean logs?) are not toolsets",
        ),
        (
            "repos,secrets,cron",
            "'repos' (did you mean repositories?) and 'cron' (did you mean crons?) are not toolsets",
        ),
    ],
)
def test_an_unknown_name_is_refused_in_one_line_naming_it_its_likely_meaning_and_the_choices(
    raw: str, shown: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        WOODPECKER_TOOLSETS.parse(raw, TOOLSETS_VARIABLE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{TOOLSETS_VARIABLE}: {shown}; choose from ")
    assert "repositories" in message and "essential" in message


def test_an_entry_that_looks_like_a_pasted_secret_is_not_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        WOODPECKER_TOOLSETS.parse("pipelines, ey.J-canary/value+", TOOLSETS_VARIABLE)
    assert "canary" not in str(caught.value) and "an entry" in str(caught.value)


@given(
    allowed=st.sets(st.sampled_from(NAMED), min_size=1),
    requested=st.sets(st.sampled_from([*NAMED, "all"]), min_size=1),
)
def test_a_second_choice_only_narrows_the_first(allowed: set[str], requested: set[str]) -> None:
    operator = WOODPECKER_TOOLSETS.select(tuple(sorted(allowed)), WOODPECKER_TOOLS)
    caller = WOODPECKER_TOOLSETS.select(tuple(sorted(requested)), operator)
    assert names_of(caller) <= names_of(operator)
    if "all" in requested:
        assert names_of(caller) == names_of(operator)


def test_a_toolset_of_a_group_the_catalogue_lacks_is_empty_not_an_error() -> None:
    sets = Toolsets({"nothing": frozenset({"no-such-group"})})
    assert len(sets.select(("nothing",), WOODPECKER_TOOLS)) == 0
