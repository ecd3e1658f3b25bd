"""WOODPECKER_TOOLSETS: only the chosen toolsets' tools are registered, together with the other filters; unknown names stop start-up."""

import pytest

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.settings import StartupError, read_settings

# Every selection keeps them: the error texts and docs/troubleshooting.md send people to them.
ALWAYS = {"get_server_info", "get_current_user"}


def registered(**environ: str) -> set[str]:
    return set(read_settings(dict(environ)).tools.names)


def test_unset_registers_every_tool() -> None:
    assert registered() == set(WOODPECKER_TOOLS.names)


def test_two_toolsets_register_exactly_their_tools() -> None:
    assert (
        registered(WOODPECKER_TOOLSETS="pipelines, logs")
        == {t.name for t in WOODPECKER_TOOLS if t.group in ("pipelines", "logs")} | ALWAYS
    )


def test_toolsets_and_read_only_and_deny_all_narrow() -> None:
    got = registered(
        WOODPECKER_TOOLSETS="secrets,crons", WOODPECKER_READ_ONLY="true", WOODPECKER_DENY_TOOLS="get_cron"
    )
    assert got == {"list_secrets", "get_secret", "list_crons"} | ALWAYS


def test_a_tool_allowed_by_name_outside_the_toolsets_is_not_registered() -> None:
    assert registered(WOODPECKER_TOOLSETS="logs", WOODPECKER_ALLOW_TOOLS="get_step_logs,get_pipeline") == {
        "get_step_logs"
    }


def test_the_kept_tools_yield_to_the_allow_and_deny_lists() -> None:
    assert registered(WOODPECKER_TOOLSETS="logs", WOODPECKER_DENY_TOOLS="get_current_user") == {
        t.name for t in WOODPECKER_TOOLS if t.group == "logs"
    } | {"get_server_info"}


def test_an_unknown_toolset_stops_start_up_with_one_line_naming_the_entry() -> None:
    with pytest.raises(StartupError) as caught:
        read_settings({"WOODPECKER_TOOLSETS": "pipelines,piplines"})
    (line,) = caught.value.lines
    assert line.startswith(
        "woodpecker-ci-mcp: WOODPECKER_TOOLSETS: 'piplines' (did you mean pipelines?) is not a toolset; choose from "
    )


def test_toolsets_that_leave_nothing_warn() -> None:
    settings = read_settings(
        {
            "WOODPECKER_TOOLSETS": "users",
            "WOODPECKER_READ_ONLY": "true",
            "WOODPECKER_DENY_TOOLS": "list_users,get_user,get_current_user,get_pipeline_feed,get_server_info",
        }
    )
    assert len(settings.tools) == 0
    assert any("WOODPECKER_TOOLSETS leaves no tools" in w for w in settings.warnings)
