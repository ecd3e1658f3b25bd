"""Properties of the pure log window and the line-boundary cut."""

import base64
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.logs import End, LogWindower, clip_line, cut_to_budget, decode_log_data, line_size

ENDS = st.sampled_from(["head", "tail"])
# Line numbers with duplicates allowed: the window must still be exact and stable.
ENTRIES = st.lists(st.integers(min_value=0, max_value=60), max_size=80)
LINES = st.lists(st.text(max_size=12), max_size=40)


def expected_window(numbers: list[int], limit: int, end: End) -> list[tuple[int, int]]:
    ordered = sorted(((n, i) for i, n in enumerate(numbers)))
    kept = ordered[:limit] if end == "head" else ordered[max(len(ordered) - limit, 0) :]
    return [(n, i) for n, i in kept]


@given(ENTRIES, st.integers(min_value=0, max_value=90), ENDS)
def test_the_window_is_the_first_or_last_limit_lines_whatever_the_arrival_order(
    numbers: list[int], limit: int, end: End
) -> None:
    windower: LogWindower[int] = LogWindower(limit, end)
    for arrival, number in enumerate(numbers):
        windower.feed(number, arrival)
    assert windower.window() == expected_window(numbers, limit, end)
    assert windower.total == len(numbers)


@given(ENTRIES, ENTRIES, st.integers(min_value=0, max_value=30), ENDS)
def test_a_log_that_arrives_in_order_and_then_out_of_order_still_gives_the_exact_window(
    prefix: list[int], rest: list[int], limit: int, end: End
) -> None:
    numbers = sorted(prefix) + rest
    windower: LogWindower[int] = LogWindower(limit, end)
    for arrival, number in enumerate(numbers):
        windower.feed(number, arrival)
    assert windower.window() == expected_window(numbers, limit, end)
    assert len(windower) == min(limit, len(numbers))


@given(ENTRIES, st.integers(min_value=1, max_value=20), ENDS, st.randoms(use_true_random=False))
def test_a_shuffled_log_gives_the_same_lines_as_an_ordered_one(
    numbers: list[int], limit: int, end: End, rnd: random.Random
) -> None:
    unique = sorted(set(numbers))
    shuffled = list(unique)
    rnd.shuffle(shuffled)
    ordered_w: LogWindower[str] = LogWindower(limit, end)
    shuffled_w: LogWindower[str] = LogWindower(limit, end)
    for n in unique:
        ordered_w.feed(n, f"line {n}")
    for n in shuffled:
        shuffled_w.feed(n, f"line {n}")
    assert shuffled_w.window() == ordered_w.window()
    assert [n for n, _ in shuffled_w.window()] == sorted(shuffled_w_numbers(unique, limit, end))


def shuffled_w_numbers(unique: list[int], limit: int, end: End) -> list[int]:
    return unique[:limit] if end == "head" else unique[max(len(unique) - limit, 0) :]


@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=300), st.integers(0, 25), ENDS)
def test_the_windower_never_holds_more_than_limit_payloads(numbers: list[int], limit: int, end: End) -> None:
    windower: LogWindower[int] = LogWindower(limit, end)
    for i, n in enumerate(numbers):
        windower.feed(n, i)
        assert len(windower) <= limit
    assert len(windower.window()) == min(limit, len(numbers))


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        LogWindower(-1)


@given(LINES, st.integers(min_value=0, max_value=200), ENDS)
def test_the_cut_keeps_whole_lines_under_the_budget_and_stops_at_the_first_that_does_not_fit(
    lines: list[str], budget: int, keep: End
) -> None:
    cut = cut_to_budget(lines, budget, keep)
    kept = lines[cut.start : cut.stop]
    assert cut.size == sum(line_size(t) for t in kept) <= budget
    if keep == "head":
        assert cut.start == 0
        if cut.stop < len(lines):
            assert cut.size + line_size(lines[cut.stop]) > budget
    else:
        assert cut.stop == len(lines)
        if cut.start > 0:
            assert cut.size + line_size(lines[cut.start - 1]) > budget
    assert cut.count == len(kept)


def test_the_cut_counts_multibyte_characters_in_bytes() -> None:
    lines = ["ä" * 10, "ok"]
    assert cut_to_budget(lines, 22, "head").stop == 1  # 20 bytes + newline
    assert cut_to_budget(lines, 20, "head").stop == 0


@given(st.text(max_size=60), st.integers(min_value=0, max_value=80))
def test_a_clipped_line_fits_its_byte_limit_and_keeps_a_prefix(text: str, limit: int) -> None:
    clipped = clip_line(text, limit)
    assert len(clipped.encode("utf-8", "surrogatepass")) <= max(limit, 0)
    if len(text.encode("utf-8", "surrogatepass")) <= limit:
        assert clipped == text
    elif clipped.endswith(" [line cut]"):
        assert text.startswith(clipped.removesuffix(" [line cut]"))


@given(st.binary(max_size=64))
def test_log_data_decodes_base64_and_drops_one_trailing_newline(raw: bytes) -> None:
    text = decode_log_data(base64.b64encode(raw + b"\n").decode())
    assert text == (raw.decode("utf-8", "replace").removesuffix("\r"))
