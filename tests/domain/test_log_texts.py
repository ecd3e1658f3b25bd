"""`log_texts` (many log entries cleaned in one pass of each step) is `log_text` entry by entry."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.woodpecker.results.text import PIECE, log_text, log_texts

# What cleaning touches, and what could make two of its steps disagree: escape sequences whole and
# cut short, C1's CSI beside an escape, carriage returns at a line's end and inside it, Unicode's
# line separators (inside an OSC too), NUL, U+FFFF and non-ASCII text around them.
PIECES = st.sampled_from(
    [
        *"ab :\t\n\r\x1b[]0;m7\x07\\\x9b\x85\x00é日\uffff\xa0\u2028\u2029",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b]0;title\x07",
        "\x1b]x\u2028y\x07",
        "\x1b\\",
        "\x9b1m",
        "\r\n",
        "error:",
    ]
)
ENTRY = st.lists(PIECES, max_size=14).map("".join) | st.text(max_size=12)


@settings(max_examples=500)
@given(st.lists(ENTRY, min_size=1, max_size=6))
def test_many_entries_cleaned_at_once_read_as_each_cleaned_alone(entries: list[str]) -> None:
    joined = PIECE.join(e.encode("utf-8") for e in entries)
    assert log_texts(joined) == PIECE.join(log_text(e).encode("utf-8") for e in entries)


def test_an_escape_removed_never_makes_c1s_csi_eat_the_text_after_it() -> None:
    # Found by the property above: "\x9b" then a whole escape then "a". Removing the escape first
    # would leave "\x9ba", a CSI whose final byte is the "a" the person reads.
    assert log_texts("\x9b\x1b[31ma".encode()) == b"a" == log_text("\x9b\x1b[31ma").encode()


HOSTILE = 1_000_000  # bytes of one pushed line: tried from each of its bytes, a pattern would take hours


@pytest.mark.parametrize(
    "line",
    [
        b"\r" * HOSTILE + b"x",  # carriage returns that do not end the entry
        b"a" + b"\r" * HOSTILE + b"x\n",  # nor the line
        b"\n" * HOSTILE + b"x",
        b"\x1b[" + b"0" * HOSTILE,  # an escape that never ends
        b"\x1b]" + b"x" * HOSTILE,
        b"\xc2\x9b" + b"0" * HOSTILE,
        b"x\r" * (HOSTILE // 2),
    ],
    ids=["cr-run", "cr-run-in-line", "lf-run", "csi-open", "osc-open", "c1-csi-open", "redraws"],
)
def test_a_pushed_line_built_to_make_a_pattern_backtrack_is_cleaned_in_one_pass(line: bytes) -> None:
    # Found in review: `[\r\n]+(?=\xff|\Z)` took 0.9 s on 8,000 carriage returns followed by text,
    # four times longer for twice as many. Each step now starts only at a run's first byte.
    joined = line + PIECE + b"error: after it\r"
    assert log_texts(joined) == PIECE.join(
        log_text(e.decode("utf-8")).encode() for e in (line, b"error: after it\r")
    )
