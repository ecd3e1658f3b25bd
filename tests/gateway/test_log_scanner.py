"""The byte-level log scanner, the window and the search agree with the exact JSON parser and naive references."""

import base64
import json
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, Literal

import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.woodpecker_httpx.log_read import (
    CompiledSearch,
    SearchReader,
    WindowReader,
    aligned_bytes,
    base64_cores,
    decode,
)
from adapters.woodpecker_httpx.log_stream import (
    Batch,
    FixedBatch,
    LogArrayReader,
    LogScanner,
    MalformedLog,
    check_executor,
)
from domain.logs import LogWindower, is_output
from domain.woodpecker.results import ERROR_PATTERN
from domain.woodpecker.results.text import log_text
from ports.woodpecker import LogSearchRequest, LogWindowRequest
from tests.gateway.test_log_stream import MALFORMED

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of a line: letters of the patterns below, and what `get_step_logs` cleans off (escape
# sequences, controls, a carriage return's redraw, Unicode's line separator, a C1 control).
PIECES = [
    *"ab FAIL error:\t\n\r✓é日",
    "\x00",
    "\ufffd",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b]0;t\x07",
    "\x07",
    "\x08",
]
TEXT = st.lists(st.sampled_from([*PIECES, "\u2028", "\x85", "\x9b1m"]), max_size=12).map("".join)

# The strategies the composites below draw from, made once: a strategy made in every draw is
# validated in every draw, which was a good part of this module's CPU. The values are the same.
ENDINGS = st.sampled_from([b"", b"\n", b"\r\n", b"\xff"])
ENCODED = "the text's base64"  # stands for the entry's own data among the odd values
DATAS = st.sampled_from([ENCODED, ENCODED, ENCODED, "%%not base64", "日本", None, 7])
TIMES = st.sampled_from([0, 1, 59, -1, 10**12, "soon", None])
TYPES = st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5])
NOTES = st.sampled_from(["},{", '"', "\\", "x"])


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    text = draw(TEXT)
    raw = text.encode("utf-8") + draw(ENDINGS)
    data: Any = draw(DATAS)
    if data == ENCODED:
        data = base64.b64encode(raw).decode("ascii")
    entry: dict[str, Any] = {
        "id": draw(st.integers(0, 10**6)),
        "step_id": draw(st.integers(1, 99)),
        "time": draw(TIMES),
        "line": draw(st.integers(0, 40)),
        "data": data,
        "type": draw(TYPES),
    }
    if draw(st.integers(0, 9)) == 0:
        entry["note"] = draw(NOTES)
    return entry


_ORDERS: dict[tuple[str, ...], st.SearchStrategy[tuple[str, ...]]] = {}


def serialized(draw: st.DrawFn, entry: dict[str, Any]) -> str:
    """Go's exact form most of the time, else odd spacing, escapes or another key order."""
    style = draw(st.integers(0, 5))
    if style <= 2:
        return json.dumps(entry, separators=(",", ":"))
    if style == 3:
        return json.dumps(entry)
    if style == 4:
        # Escapes that mean the same characters: "\/" for "/", "\u0041" for "A".
        text = json.dumps(entry, separators=(",", ":"))
        return text.replace("/", "\\/").replace("A", "\\u0041")
    keys = tuple(entry)
    if keys not in _ORDERS:
        _ORDERS[keys] = st.permutations(keys)
    order = draw(_ORDERS[keys])
    return json.dumps({k: entry[k] for k in order}, separators=(",", ":"), ensure_ascii=False)


ENTRY_LISTS = st.lists(entries(), max_size=25)
SEPARATORS = st.sampled_from([",", ",", ", ", ",\n"])
SPACES = st.sampled_from(["", "", " ", "\n"])


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], bytes]:
    items = draw(ENTRY_LISTS)
    parts = [serialized(draw, e) for e in items]
    sep = draw(SEPARATORS)
    space = draw(SPACES)
    body = (space + "[" + sep.join(parts) + "]" + space).encode("utf-8")
    return items, body


def chunks(body: bytes, cuts: list[int]) -> list[bytes]:
    out, start = [], 0
    for cut in sorted(set(cuts)):
        out.append(body[start:cut])
        start = cut
    return [*out, body[start:]]


def scan(
    parts: list[bytes],
    also: bytes | None = None,
    threads: Executor | None = None,
    depth: int = 4,
    min_run: int = 0,
    bounds: bool = True,
) -> list[Batch]:
    """The scanner's batches; with `threads`, runs are examined there (as in the gateway), at most
    `depth` behind; a run is cut once `min_run` bytes are in (0: at every chunk, the most cuts);
    `bounds`: whether the examination finds each run's lowest and highest line (else asked later)."""
    scanner = LogScanner(also=also, executor=threads, depth=depth, min_run=min_run, bounds=bounds)
    batches: list[Batch] = []
    for part in parts:
        batches += scanner.feed(part)
    return batches + scanner.close()


def flatten(batches: list[Batch]) -> list[tuple[int, str, int]]:
    out = []
    for b in batches:
        assert len(b.lines()) == len(b.datas()) == len(b.times()) == b.count
        out += [(n, decode(d), t) for n, d, t in zip(b.lines(), b.datas(), b.times(), strict=True)]
    return out


def reference(body: bytes) -> list[tuple[int, str, int]]:
    reader = LogArrayReader()
    parsed = reader.feed(body) + reader.close()
    out = []
    for e in parsed:
        if type(e.get("line")) is not int:
            raise MalformedLog("no line")
        if is_output(e.get("type")):
            time = e.get("time")
            out.append((e["line"], decode(e.get("data")), time if type(time) is int else 0))
    return out


INLINE_OR_THREADS = st.sampled_from([False, True])
MIN_RUNS = st.sampled_from([0, 0, 1, 60, 400])


def threads(data: st.DataObject) -> tuple[Executor | None, int, int, bool]:
    """Runs examined inline, or on the gateway's threads with 1 to 4 in flight; runs cut at every
    chunk or once 1 to 400 bytes are in; their bounds found by the examination or when asked."""
    executor = check_executor() if data.draw(INLINE_OR_THREADS) else None
    return (
        executor,
        data.draw(st.integers(1, 4)),
        data.draw(MIN_RUNS),
        data.draw(st.booleans()),
    )


@FAST
@given(logs(), st.data())
def test_the_byte_scanner_and_the_json_parser_read_the_same_lines(log: Any, data: st.DataObject) -> None:
    _, body = log
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=8))
    assert flatten(scan(chunks(body, cuts), None, *threads(data))) == reference(body)


def test_go_shaped_entries_take_the_byte_level_path() -> None:
    body = json.dumps(
        [{"id": i, "step_id": 3, "time": 0, "line": i, "data": "aGk=", "type": 0} for i in range(50)],
        separators=(",", ":"),
    ).encode()
    batches = scan(chunks(body, [100, 1000, 2000]))
    assert batches and all(isinstance(b, FixedBatch) for b in batches)
    assert sum(b.count for b in batches) == 50


@pytest.mark.parametrize(
    "body",
    [
        *MALFORMED,
        b"[",
        b'[{"id":1,"step_id":1,"time":0,"line":0,"data":"","type":0}',
        b'[{"id":1,"step_id":1,"time":0,"line":0,"data":"","type":0},]',
        b'[{"id":1,"step_id":1,"time":0,"line":"x","data":"","type":0}]',
    ],
)
def test_what_the_parser_refuses_the_scanner_refuses(body: bytes) -> None:
    for cuts in ([], [1], [5, 9]):
        with pytest.raises(MalformedLog):
            scan(chunks(body, cuts))


@pytest.mark.parametrize("body", [b"null", b" null\n", b"[]", b"[ ]", b"", b"  "])
def test_empty_answers_read_as_no_lines(body: bytes) -> None:
    assert flatten(scan(chunks(body, [1]))) == []


# --------------------------------------------------------------------------------- the window


ENDS: st.SearchStrategy[Literal["head", "tail"]] = st.sampled_from(["head", "tail"])
BOUNDS = st.none() | st.integers(-1, 45)


@st.composite
def window_requests(draw: st.DrawFn) -> LogWindowRequest:
    end = draw(ENDS)
    lo = draw(BOUNDS)
    hi = draw(BOUNDS)
    return LogWindowRequest(draw(st.integers(0, 12)), end, lo, hi)


LINE_KINDS = st.sampled_from([0, 0, 0, 0, 1, 2, 3])
# "{i}" becomes the line's index (TEXT has no braces, so only these texts change).
LINE_TEXTS = st.sampled_from(["line {i}", "--- FAIL: Test{i}", "error: a b", "ab"]) | TEXT


def ordered_logs() -> st.SearchStrategy[bytes]:
    """Mostly Go-shaped logs whose lines mostly arrive in order, as Woodpecker sends them."""

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        n = draw(st.integers(0, 60))
        numbers = list(range(n))
        if draw(st.booleans()):
            swaps = draw(st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0)))))
            for a, b in swaps:
                if n:
                    numbers[a], numbers[b] = numbers[b], numbers[a]
        if draw(st.booleans()) and n:
            numbers[draw(st.integers(0, n - 1))] = draw(st.integers(0, n))  # a repeated line number
        out = []
        for i, number in enumerate(numbers):
            kind = draw(LINE_KINDS)
            text = draw(LINE_TEXTS).replace("{i}", str(i))
            out.append(
                {
                    "id": i,
                    "step_id": 1,
                    "time": i // 7,
                    "line": number,
                    "data": base64.b64encode(text.encode()).decode(),
                    "type": kind,
                }
            )
        return json.dumps(out, separators=(",", ":")).encode()

    return build()


@FAST
@given(ordered_logs() | logs().map(lambda log: log[1]), window_requests(), st.data())
def test_the_window_is_what_the_windower_keeps_line_by_line(
    body: bytes, request: LogWindowRequest, data: st.DataObject
) -> None:
    try:
        lines = reference(body)
    except MalformedLog:
        return
    lo = request.from_line if request.from_line is not None else -(2**63)
    hi = request.to_line if request.to_line is not None else 2**63
    windower: LogWindower[tuple[str, int]] = LogWindower(request.limit, request.from_end)
    for number, text, time in lines:
        if lo <= number <= hi:
            windower.feed(number, (text, time))
    expected = [(n, text, time) for n, (text, time) in windower.window()]
    reader = WindowReader(request)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    for batch in scan(chunks(body, cuts), None, *threads(data)):
        reader.feed(batch)
    window = reader.result()
    assert [(line.number, line.text, line.time) for line in window.lines] == expected
    assert window.total_lines == len(lines)


# --------------------------------------------------------------------------------- the search

PATTERNS = st.sampled_from(
    [
        "FAIL",
        "error:",
        "a",
        "^a",
        "a$",
        "^$",
        "",
        r"\bab\b",
        "b.a",
        "(?s)a.b",
        r"a\s+b",
        "[^a]",
        r"\A",
        r"\z",
        "(?i)fail",
        "✓",
        "日",
        "é|FAIL",
        "\ufffd",
        r"\x00",
        r"\n",
        r"\r",
        "(?-m)^b",
        "a|^",
        r"\d",
        "--- FAIL:|error:",
        "FAIL:|error:",  # literals, split by an escape in the bytes ("FAIL\x1b[0m:")
        "ab FAIL|a:",
        "^error",
        "ab FAIL",
        "FAIL|日本",
        r"a\s*$",
        r"\x00$",
        ERROR_PATTERN,  # get_pipeline_failure_summary's, with its "Killed\s*$"
    ]
)


def naive_search(lines: list[tuple[int, str, int]], request: LogSearchRequest) -> tuple[list[Any], int]:
    options = re2.Options()
    options.case_sensitive = not request.ignore_case
    pattern = re2.compile(request.pattern, options)
    # A line is matched as it is shown: escapes and controls gone (what the person reads).
    hits = [i for i, (_, text, _) in enumerate(lines) if pattern.search(log_text(text))]
    c = request.context
    shown = [
        (lines[i], lines[max(0, i - c) : i], lines[i + 1 : i + 1 + c]) for i in hits[: request.max_matches]
    ]
    return shown, len(hits)


@FAST
@given(
    ordered_logs() | logs().map(lambda log: log[1]),
    PATTERNS,
    st.booleans(),
    st.integers(0, 3),
    st.integers(0, 5),
    st.data(),
)
def test_the_search_agrees_with_searching_each_decoded_line(
    body: bytes, pattern: str, ignore_case: bool, context: int, cap: int, data: st.DataObject
) -> None:
    try:
        lines = reference(body)
    except MalformedLog:
        return
    request = LogSearchRequest(pattern, ignore_case, context, cap)
    expected, total = naive_search(lines, request)
    compiled = CompiledSearch(request)
    reader = SearchReader(request, compiled)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    # The scanner looks for the literals' base64 in its one pass (as the gateway has it), or not.
    also = compiled.prefilter if data.draw(st.booleans()) else None
    for batch in scan(chunks(body, cuts), also, *threads(data)):
        reader.feed(batch)
    result = reader.result()

    def key(line: Any) -> tuple[int, str, int]:
        return (line.number, line.text, line.time)

    got = [(key(m.line), [key(x) for x in m.before], [key(x) for x in m.after]) for m in result.matches]
    assert got == [(m, list(b), list(a)) for m, b, a in expected]
    assert result.total_matches == total
    assert result.total_lines == len(lines)


def test_a_pattern_that_would_backtrack_for_ever_elsewhere_runs_in_linear_time() -> None:
    line = base64.b64encode(b"a" * 5000 + b"!").decode()
    body = json.dumps([{"id": 1, "step_id": 1, "time": 0, "line": 0, "data": line, "type": 0}]).encode()
    reader = SearchReader(LogSearchRequest(r"(a+)+$"))
    for batch in scan([body]):
        reader.feed(batch)
    assert reader.result().total_matches == 0


@given(st.binary(max_size=40), st.binary(min_size=3, max_size=12), st.integers(0, 40))
def test_a_line_that_holds_a_literal_holds_one_of_its_base64_cores(
    around: bytes, literal: bytes, at: int
) -> None:
    # The search skips a run of entries whose base64 holds none of the cores: never one with a match.
    line = around[:at] + literal + around[at:]
    text = literal.decode("utf-8", "replace")
    if "|" in text or "\ufffd" in text or text.encode("utf-8") != literal:
        return
    cores = base64_cores(text, ignore_case=False)
    if cores is None:  # a literal with RE2 metacharacters is not searched this way
        return
    assert any(core in base64.b64encode(line) for core in cores)


@given(st.binary(max_size=40), st.frozensets(st.integers(0, 255), min_size=1, max_size=6))
def test_the_aligned_byte_pattern_matches_exactly_the_entries_holding_one_of_its_bytes(
    line: bytes, values: frozenset[int]
) -> None:
    entry = go_entry(1, 0, line)
    found = re2.search(aligned_bytes(values), entry) is not None
    assert found == any(b in values for b in line)


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        (b"\x1b[31mERROR\x1b[0m: cannot find module", "ERROR:"),  # coloured as npm and Go tools do
        (b"\x1b[1m--- FAIL\x1b[0m: TestX (0.01s)", "--- FAIL:"),
        (b"Downloading 10%\rerror: no space left", "^error"),
        (b"FA\x08IL: after a backspace", "FAIL:"),
        (b"\x1b[31mERROR\x1b[0m: a byte \xff that is not UTF-8", "ERROR: a byte \ufffd"),  # line by line
        (b"\x1b[31mERROR\x1b[0m: \xef\xbf\xbf beside U+FFFF", "ERROR: \uffff"),
        (b"a byte \xff that is not UTF-8", "byte \ufffd that"),  # U+FFFD: no base64 shortcut
        # get_pipeline_failure_summary's pattern: rustc's and pytest's coloured lines
        (b"\x1b[1m\x1b[31merror\x1b[0m\x1b[1m: cannot find value `x`\x1b[0m", ERROR_PATTERN),
        (b"\x1b[31mFAILED\x1b[0m tests/test_a.py::test_b - assert 1 == 2", ERROR_PATTERN),
    ],
)
def test_a_line_is_searched_as_it_is_shown_however_its_bytes_split_the_text(
    line: bytes, pattern: str
) -> None:
    datas = [base64.b64encode(text).decode() for text in (b"ok", line, b"ok again")]
    body = b"[" + b",".join(go_entry(i, i, base64.b64decode(d)) for i, d in enumerate(datas)) + b"]"
    compiled = CompiledSearch(LogSearchRequest(pattern))
    for also in (compiled.prefilter, None):
        reader = SearchReader(LogSearchRequest(pattern), compiled)
        batches = scan([body], also)
        assert all(batch.fixed for batch in batches)  # the byte-level path, with its prefilter
        for batch in batches:
            reader.feed(batch)
        assert [m.line.number for m in reader.result().matches] == [1], also


def test_only_case_sensitive_alternations_of_literals_of_three_bytes_have_cores() -> None:
    assert base64_cores("--- FAIL: |panic:", ignore_case=False) is not None
    for pattern, ignore_case in (
        ("FAIL", True),
        ("FA", False),
        ("FAIL|", False),
        ("a.b", False),
        ("é", False),
    ):
        assert base64_cores(pattern, ignore_case) is None, pattern


# --------------------------------------------------------------------------------- hostile and edge shapes


def go_entry(i: int, line: int, text: bytes = b"ok") -> bytes:
    data = base64.b64encode(text).decode()
    return f'{{"id":{i},"step_id":7,"time":{i // 3},"line":{line},"data":"{data}","type":0}}'.encode()


@FAST
@given(
    st.lists(st.integers(0, 10**7), min_size=1, max_size=80),
    st.integers(1, 200),
    st.data(),
)
def test_a_runs_bounds_and_count_are_its_lowest_and_highest_line_whatever_the_widths_and_chunks(
    lines: list[int], size: int, data: st.DataObject
) -> None:
    # Entries straddle chunk boundaries of every size; line numbers of one or many widths, in or out of order.
    body = b"[" + b",".join(go_entry(i, n) for i, n in enumerate(lines)) + b"]"
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    batches = scan(parts, None, *threads(data))
    assert all(isinstance(b, FixedBatch) for b in batches)
    for batch in batches:
        assert isinstance(batch, FixedBatch)
        exact = FixedBatch(batch.raw).lines()  # the regex path, one int per entry
        assert batch.bounds() == (min(exact), max(exact))
        assert batch.count == len(exact)
    assert [n for b in batches for n in b.lines()] == lines


NEAR_MISSES = [
    b'{"id":1,"step_id":7,"time":0,"line":007,"data":"b2s=","type":0}',  # leading zeros: not JSON
    b'{"id":1,"step_id":7,"time":0,"line":-0,"data":"b2s=","type":0}',
    b'{"id":007,"step_id":7,"time":0,"line":5,"data":"b2s=","type":0}',  # leading zeros anywhere: not JSON
    b'{"id":1,"step_id":-07,"time":0,"line":5,"data":"b2s=","type":0}',
    b'{"id":1,"step_id":7,"time":00,"line":5,"data":"b2s=","type":0}',
    b'{"id":-0,"step_id":7,"time":-0,"line":5,"data":"b2s=","type":0}',  # JSON, read as 0
    b'{"id":1,"step_id":7,"time":0,"line":1e3,"data":"b2s=","type":0}',  # a float line: refused
    b'{"id":1,"step_id":7,"time":0,"line":99999999999999999999999,"data":"b2s=","type":0}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"line":6,"data":"b2s=","type":0}',  # the last one counts
    b'{"id":1,"step_id":7,"time":0,"Line":5,"data":"b2s=","type":0}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":3}',  # metadata: not a line
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":30}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b=2s","type":0}',  # padding inside
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s","type":0}',  # unpadded
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"\\u0062","type":0}',
    b'{"id":1,"step_id":7,"time":0,"line": 5,"data":"b2s=","type":0}',
    b'{"id":1,"step_id":7,"time":0.5,"line":5,"data":"b2s=","type":0}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":0,"x":"},{"}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":0}}',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":0',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":0},',
    b'{"id":1,"step_id":7,"time":0,"line":5,"data":"b2s=","type":\xff}',
]


def outcome(run: Any) -> Any:
    try:
        return run()
    except MalformedLog:
        return "refused"


@FAST
@given(st.sampled_from(NEAR_MISSES), st.integers(0, 40), st.integers(0, 40), st.integers(1, 300), st.data())
def test_bytes_that_almost_have_the_shape_read_as_the_parser_reads_them(
    odd: bytes, before: int, after: int, size: int, data: st.DataObject
) -> None:
    # One entry that looks like Go's but is not, among many that are: the scanner answers what the
    # parser answers (the same lines, or the same refusal), wherever the chunks are cut.
    entries = (
        [go_entry(i, i) for i in range(before)]
        + [odd]
        + [go_entry(i, i) for i in range(before, before + after)]
    )
    body = b"[" + b",".join(entries) + b"]"
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    assert outcome(lambda: flatten(scan(parts, None, *threads(data)))) == outcome(lambda: reference(body))


# Bytes an edit may put into a Go-shaped log: each one is meaningful somewhere in its grammar.
EDITS = st.sampled_from(list(b'00--0123456789+.eE"\\,:{}[]= \n_/aAlz') + [0x00, 0x7F, 0xC3, 0xFF])
# Where an edit lands: next to a digit, a quote, another punctuation mark, or anywhere.
PLACES = st.sampled_from([b"0123456789", b'"', b",:{}[]=-", b""])


@FAST
@given(
    st.lists(
        st.tuples(st.integers(0, 10**12), st.integers(0, 10**6), st.binary(max_size=8)),
        min_size=1,
        max_size=12,
    ),
    st.lists(
        st.tuples(PLACES, st.integers(0, 10**6), st.sampled_from(["replace", "insert", "delete"]), EDITS),
        max_size=3,
    ),
    st.integers(1, 120),
    st.data(),
)
def test_a_go_shaped_log_with_a_few_bytes_edited_reads_as_the_parser_reads_it(
    made: list[tuple[int, int, bytes]],
    edits: list[tuple[bytes, int, str, int]],
    size: int,
    data: st.DataObject,
) -> None:
    # A hostile body: Go's exact entries with a byte replaced, inserted or deleted (in a key, a
    # number, the base64, at a quote or a separator). Whatever the edits made of it, the scanner
    # answers what the parser answers: the same lines, or the same refusal.
    body = bytearray(
        b"["
        + b",".join(
            f'{{"id":{i},"step_id":7,"time":{t},"line":{n},"data":"{base64.b64encode(text).decode()}","type":0}}'.encode()
            for n, (i, t, text) in enumerate(made)
        )
        + b"]"
    )
    for place, k, how, byte in edits:
        spots = [i for i, b in enumerate(body) if not place or b in place] or [0]
        at = spots[k % len(spots)]
        if how == "insert":
            body[at:at] = bytes([byte])
        elif how == "delete":
            del body[at : at + 1]
        else:
            body[at : at + 1] = bytes([byte])
    parts = [bytes(body[i : i + size]) for i in range(0, len(body), size)]
    assert outcome(lambda: flatten(scan(parts, None, *threads(data)))) == outcome(
        lambda: reference(bytes(body))
    )


def test_a_huge_line_among_shaped_ones_goes_to_the_exact_reader_and_reads_the_same() -> None:
    # Past _MAX_RUN bytes without an entry boundary the run goes to the exact reader, queued runs first.
    huge = go_entry(5, 5, b"x" * 1_500_000)
    entries = [go_entry(i, i) for i in range(5)] + [huge] + [go_entry(i, i) for i in range(6, 40)]
    body = b"[" + b",".join(entries) + b"]"
    parts = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    for executor in (None, check_executor()):
        for min_run in (0, 200_000):
            assert flatten(scan(parts, None, executor, 2, min_run)) == reference(body)


def test_runs_queued_behind_an_unshaped_one_reach_the_exact_reader_unexamined() -> None:
    # The first chunk ends inside a string, just after a "},{" there: the run cut at it is not JSON,
    # so the exact reader takes over from it, and the runs queued after it (cut from later chunks
    # and never examined: the only worker is held until the scanner has closed) reach it in order.
    odd = b'{"id":0,"step_id":7,"time":0,"line":0,"data":"b2s=","type":0,"note":"},{"}'
    later = [go_entry(i, i) for i in range(1, 30)]
    body = b"[" + b",".join([odd, *later]) + b"]"
    first = body.index(b'},{"}') + 3
    parts = [body[:first]] + [body[i : i + 97] for i in range(first, len(body), 97)]
    started, examined, resume = threading.Event(), threading.Event(), threading.Event()

    def stop() -> None:  # the worker stops after the unshaped run
        examined.set()
        resume.wait()

    with ThreadPoolExecutor(max_workers=1) as executor:
        try:
            executor.submit(started.wait)
            scanner = LogScanner(executor=executor, depth=64, min_run=0)
            batches = scanner.feed(parts[0])  # the unshaped run, queued first
            executor.submit(stop)
            for part in parts[1:]:
                batches += scanner.feed(part)
            started.set()
            assert examined.wait(30)
            batches += scanner.close()
        finally:
            started.set()
            resume.set()
    assert flatten(batches) == reference(body)


def test_an_entry_that_never_closes_is_refused_within_the_readers_bound() -> None:
    body = b'[{"id":1,"step_id":7,"time":0,"line":5,"data":"' + b"QUFB" * 3_000_000
    parts = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    scanner = LogScanner(executor=check_executor())
    with pytest.raises(MalformedLog):
        for part in parts:
            scanner.feed(part)
        scanner.close()


def _entries(datas: list[str]) -> bytes:
    entries = (
        f'{{"id":{i + 1},"step_id":7,"time":0,"line":{i},"data":"{data}","type":0}}'
        for i, data in enumerate(datas)
    )
    return ("[" + ",".join(entries) + "]").encode()


def _b64(*texts: bytes) -> list[str]:
    return [base64.b64encode(t).decode() for t in texts]


@pytest.mark.parametrize(
    ("pattern", "datas"),
    [
        # every padding: none, one and two NULs after the line's end
        (r"Killed\s*$", _b64(b"ok", b"Killed", b"Killed  ", b"x", b"Killedx", b"Killed")),
        # NULs of the lines' own, which the block cannot tell from padding: each line on its own
        (r"b$", _b64(b"okb\x00", b"a", b"b\x00\x00", b"c\x00d", b"b")),
        # "Killed!" with padding bits that are not zero (any decoder reads it), beside a line whose
        # own NUL makes the NULs as many as the "=": each line on its own all the same
        (r"!$", ["S2lsbGVkIR==", *_b64(b"ab\x00", b"no!")]),
    ],
)
def test_a_dollar_pattern_finds_each_line_end_whatever_its_padding(pattern: str, datas: list[str]) -> None:
    reader = SearchReader(LogSearchRequest(pattern, max_matches=10))
    batches = list(scan(chunks(_entries(datas), []), None))
    assert all(batch.fixed for batch in batches)  # the whole-batch path, not the parser's
    for batch in batches:
        reader.feed(batch)
    texts = [base64.b64decode(data) for data in datas]
    want = [i for i, t in enumerate(texts) if re2.search(pattern.encode(), log_text(t.decode()).encode())]
    assert want and [m.line.number for m in reader.result().matches] == want


def test_a_dollar_pattern_matches_before_a_lines_trailing_carriage_return_and_newline() -> None:
    # Found by a random run: "a\r\n" is shown as "a", so a$ matches it, but in the joined batch its $
    # met "\r" first and the whole-batch pass found nothing (total 0 against 1).
    datas = _b64(b"a\r\n", b"b", b"xa\r\n", b"a\r", b"a\n")
    reader = SearchReader(LogSearchRequest(r"a$", max_matches=10))
    batches = list(scan(chunks(_entries(datas), []), None))
    assert all(batch.fixed for batch in batches)
    for batch in batches:
        reader.feed(batch)
    # "a\r" is shown as "a" too (a line's trailing carriage returns are cut off).
    assert [m.line.number for m in reader.result().matches] == [0, 2, 3, 4]
    assert reader.result().total_matches == 4
