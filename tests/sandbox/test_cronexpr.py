"""The sandbox's own 5-field cron parser: gdgvda/cron's StandardOptions syntax and next-run arithmetic."""

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.cronexpr import CronError, next_exec, parse

NOW = datetime(2026, 1, 15, 10, 7, 30, tzinfo=UTC).timestamp()  # a Thursday


def _at(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp())


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("* * * * *", _at(2026, 1, 15, 10, 8)),
        ("*/15 * * * *", _at(2026, 1, 15, 10, 15)),
        ("0 3 * * *", _at(2026, 1, 16, 3, 0)),
        ("30 9-17/4 * * MON-FRI", _at(2026, 1, 15, 13, 30)),
        ("0 0 1 * *", _at(2026, 2, 1)),
        ("0 0 L * *", _at(2026, 1, 31)),
        ("0 0 15W * *", _at(2026, 2, 16)),  # 2026-02-15 is a Sunday -> Monday the 16th
        ("0 0 * * 5L", _at(2026, 1, 30)),  # last Friday of January
        ("0 0 * * 1#3", _at(2026, 1, 19)),  # third Monday
        ("0 12 * JAN,feb SUN", _at(2026, 1, 18, 12)),
        ("0 0 * * 7", _at(2026, 1, 18)),  # 7 is Sunday too
        ("0 0 ? * 0", _at(2026, 1, 18)),
        ("@hourly", _at(2026, 1, 15, 11)),
        ("@daily", _at(2026, 1, 16)),
        ("@weekly", _at(2026, 1, 18)),
        ("@monthly", _at(2026, 2, 1)),
        ("@yearly", _at(2027, 1, 1)),
        ("@every 90m", int(NOW) + 5400),
        ("TZ=Asia/Tokyo 0 9 * * *", _at(2026, 1, 16, 0)),
    ],
)
def test_next_run_is_the_first_match_after_now(spec: str, expected: int) -> None:
    assert next_exec(spec, "UTC", NOW) == expected


def test_the_time_zone_argument_shifts_wall_clock_schedules() -> None:
    assert next_exec("0 9 * * *", "Europe/Berlin", NOW) == _at(2026, 1, 16, 8)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("0 0 * * * *", "expected exactly 5 fields, found 6"),
        ("60 * * * *", "above maximum"),
        ("* 24 * * *", "above maximum"),
        ("* * 0 * *", "below minimum"),
        ("5-1 * * * *", "beginning of range"),
        ("*/0 * * * *", "step of range"),
        ("? * * * *", "not allowed"),
        ("@fortnightly", "unrecognized descriptor"),
        ("@every soon", "failed to parse duration"),
        ("x * * * *", "invalid syntax"),
    ],
)
def test_bad_schedules_are_refused_with_the_libraries_words(spec: str, message: str) -> None:
    with pytest.raises(CronError, match=message):
        parse(spec)


def test_unknown_time_zones_are_refused() -> None:
    with pytest.raises(CronError, match="unknown time zone"):
        next_exec("* * * * *", "Mars/Olympus", NOW)


def test_impossible_dates_never_fire() -> None:
    with pytest.raises(CronError):
        next_exec("0 0 30 2 *", "UTC", NOW)


@settings(max_examples=60, deadline=None)
@given(
    minute=st.integers(0, 59),
    hour=st.integers(0, 23),
    dow=st.integers(0, 6),
    now=st.floats(min_value=1.7e9, max_value=2.0e9),
)
def test_weekly_schedules_fire_within_a_week_on_the_right_minute(
    minute: int, hour: int, dow: int, now: float
) -> None:
    fired = next_exec(f"{minute} {hour} * * {dow}", "UTC", now)
    moment = datetime.fromtimestamp(fired, tz=UTC)
    assert now < fired <= now + 7 * 86400 + 60
    assert (moment.minute, moment.hour, (moment.weekday() + 1) % 7, moment.second) == (minute, hour, dow, 0)
