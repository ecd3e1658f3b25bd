"""Parsing ELICITATION (on unless false) and the other boolean flags (off unless exactly true)."""

import pytest

from domain.config import ELICITATION_OFF_LINE, ConfigError, parse_elicitation, parse_flag


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, True),
        ("", True),
        ("true", True),
        (" TRUE ", True),
        ("True", True),
        ("false", False),
        ("False ", False),
        ("\tFALSE\n", False),
    ],
)
def test_elicitation_is_trimmed_case_insensitive_and_on_by_default(raw: str | None, expected: bool) -> None:
    assert parse_elicitation(raw) is expected


@pytest.mark.parametrize("raw", ["1", "0", "off", "on", "yes", "no", "fals", "true false", "disabled"])
def test_any_other_elicitation_value_stops_the_server_naming_both_valid_values(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_elicitation(raw)
    message = str(caught.value)
    assert "ELICITATION" in message and "true" in message and "false" in message


def test_the_elicitation_off_line_is_the_one_the_seed_prints() -> None:
    assert (
        ELICITATION_OFF_LINE
        == "woodpecker-ci-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
    )


@pytest.mark.parametrize(("raw", "expected"), [(None, False), ("", False), ("false", False), ("true", True)])
def test_other_flags_are_on_only_for_the_exact_string_true(raw: str | None, expected: bool) -> None:
    assert parse_flag("WOODPECKER_READ_ONLY", raw) is expected


@pytest.mark.parametrize("raw", ["TRUE", "True", " true", "1", "yes", "on", "False"])
def test_any_other_flag_value_is_an_error_naming_the_variable_and_the_valid_values(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_flag("WOODPECKER_INSECURE_TLS", raw)
    message = str(caught.value)
    assert "WOODPECKER_INSECURE_TLS" in message and "true" in message and "false" in message


def test_a_long_or_odd_value_is_not_echoed() -> None:
    pasted = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
    with pytest.raises(ConfigError) as caught:
        parse_elicitation(pasted)
    assert pasted.lower() not in str(caught.value) and pasted not in str(caught.value)
