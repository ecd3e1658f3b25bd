"""What the gateway does with a step log's batches: keep a window of lines, or search every line once.

Both work on whole batches where they can (a batch that cannot reach the window is only
counted; a batch with no match costs one RE2 pass over its decoded bytes) and decode a
line's base64 only when the line is kept, matched or shown as context.
"""

import base64
import binascii
import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import re2

from adapters.woodpecker_httpx.log_stream import Batch, FixedBatch
from domain.logs import LogWindower, decode_log_data
from domain.woodpecker.faults import bad_pattern
from domain.woodpecker.results.text import PIECE, log_text, log_texts
from ports.woodpecker import (
    InvalidPattern,
    LogLine,
    LogMatch,
    LogSearch,
    LogSearchRequest,
    LogWindow,
    LogWindowRequest,
)

UNDECODABLE = "[this log line could not be decoded]"
_MAX = 2**63

# Where a pattern's meaning depends on more than the line it is matched in, the whole-batch
# pass could miss a match, so every line is searched on its own instead: \A and \z (start
# and end of the text), and inline flags that switch multi-line mode off.
_CONTEXT_SENSITIVE = re.compile(r"\\[Az]|\(\?[A-Za-z]*-")
# RE2's metacharacters: a pattern without any but "|" is an alternation of literal strings.
_METACHARACTERS = frozenset("\\^$.?*+()[]{}")
_MIN_LITERAL = 3  # bytes; a shorter literal's base64 is too short to rule out anything
# A padded end whose last character leaves bits over that are not zero: read with "=" as "A",
# its padding would decode to a byte other than NUL ("==" follows one of AQgw, a lone "=" one
# of the sixteen characters whose last two bits are zero).
# (RE2, not re: re tries the class at every byte, as slow as searching line by line.)
_NONCANONICAL_PAD = re2.compile(rb"[^AQgw]==|[^AEIMQUYcgkosw048=]=")

# A search matches a line as `get_step_logs` shows it (`log_text`): escape sequences and control
# characters gone, only the text after a line's last carriage return. A batch whose decoded bytes
# hold none of these reads the same either way; the whole-batch pass takes only such batches.
# (NUL is counted apart: the padding decodes to NULs.)
_CLEANED = re2.compile(rb"[\x01-\x08\x0b-\x1f\x7f\x{80}-\x{9f}\x{2028}\x{2029}]")  # code points
# The bytes whose removal can join two pieces of text into a literal (`FA\x1b[1mIL` shows as
# `FAIL`): the C0 controls but tab, line feed and carriage return (which only cuts a line's start
# off), DEL, and the lead byte of the C1 controls' UTF-8.
_JOINING = frozenset(range(0x00, 0x20)) - {0x09, 0x0A, 0x0D} | {0x7F, 0xC2}
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_ANY = rb"[A-Za-z0-9+/]"


def _chars(values: set[int]) -> bytes:
    return b"[" + b"".join(re.escape(_ALPHABET[v : v + 1]) for v in sorted(values)) + b"]"


def aligned_bytes(values: frozenset[int]) -> bytes:
    """An RE2 pattern over Go's raw log entries that matches where an entry's `data` decodes to bytes
    holding one of `values`, and nowhere else: the base64 is read in groups of four characters from
    the start of `data`, and a byte at position 0, 1 or 2 of a group fixes bits of two characters."""
    ways = []
    for b in sorted(values):
        ways.append(
            re.escape(_ALPHABET[b >> 2 : (b >> 2) + 1]) + _chars({(b & 3) << 4 | x for x in range(16)})
        )
        ways.append(
            _ANY + _chars({y << 4 | b >> 4 for y in range(4)}) + _chars({(b & 15) << 2 | z for z in range(4)})
        )
        ways.append(
            _ANY
            + _ANY
            + _chars({w << 2 | b >> 6 for w in range(16)})
            + re.escape(_ALPHABET[b & 63 : (b & 63) + 1])
        )
    return rb'"data":"(?:' + _ANY + rb"{4})*(?:" + b"|".join(ways) + b")"


# Where a run of entries may hold a line whose shown text differs from its bytes by a join: such a
# run is never skipped for want of a literal's base64.
JOINING_DATA = aligned_bytes(_JOINING)
_JOINING_DATA = re2.compile(JOINING_DATA)


def shown(data: Any) -> str:
    """A line's text as a search matches it: as `get_step_logs` shows it."""
    return log_text(decode(data))


def decode(data: Any) -> str:
    """A line's decoded text, before `log_text` cleans it for showing (an entry whose data is not
    base64 says so)."""
    if not isinstance(data, str | bytes):
        return ""
    try:
        return decode_log_data(data if isinstance(data, str) else data.decode("ascii"))
    except ValueError:
        return UNDECODABLE


def base64_cores(pattern: str, ignore_case: bool) -> tuple[bytes, ...] | None:
    """For a case-sensitive alternation of literal strings (e.g. `--- FAIL: |panic:`), the base64
    text that must appear in a log entry's `data` for its line to hold one of them; else None.

    A literal at byte offset o of a line is encoded, inside that line's base64, in one of three ways
    (o mod 3); each way fixes the base64 characters whose six bits all come from the literal. A run
    of entries holding none of them holds no match, and is counted without being decoded.
    """
    atoms = pattern.split("|")
    if ignore_case or any(
        not a or "\ufffd" in a or not a.isprintable() or _METACHARACTERS.intersection(a) for a in atoms
    ):
        return None  # U+FFFD: decoding may put it where the bytes had none; a line break: cleaning
    cores = set()
    for atom in atoms:
        raw = atom.encode("utf-8")
        if len(raw) < _MIN_LITERAL:
            return None
        for shift in range(3):
            encoded = base64.b64encode(bytes(shift) + raw)
            cores.add(encoded[-(-8 * shift // 6) : 8 * (shift + len(raw)) // 6])
    return tuple(sorted(cores))


class WindowReader:
    """The first or last `limit` output lines, optionally only those numbered from_line..to_line."""

    def __init__(self, request: LogWindowRequest) -> None:
        self._limit = request.limit
        self._tail = request.from_end == "tail"
        self._lo = request.from_line if request.from_line is not None else -_MAX
        self._hi = request.to_line if request.to_line is not None else _MAX
        self._ranged = request.from_line is not None or request.to_line is not None
        self._window: LogWindower[tuple[Any, int]] = LogWindower(request.limit, request.from_end)
        self.total = 0
        # While each batch's lines are all at or above the lines before it (they are, from
        # Woodpecker), whole batches are held undecoded: the last ones covering the window for
        # "tail", the first ones for "head". Only their lowest and highest numbers are read.
        self._held: deque[Batch] | None = None if self._ranged else deque()
        self._held_count = 0
        self._passed = 0  # entries of batches let go while in order
        self._last = -_MAX

    def feed(self, batch: Batch) -> None:
        if self._held is not None:
            bounds = batch.bounds()
            if bounds is None:
                return
            k = batch.count
            self.total += k
            if bounds[0] >= self._last:
                # Every line of this batch is at or above every earlier line: whole batches can be
                # held or let go; the windower orders the lines of the batches it finally reads.
                self._last = bounds[1]
                self._hold(batch, k)
                return
            self._release()
            self._general(batch, batch.lines())
            return
        lines = batch.lines()
        if not lines:
            return
        self.total += len(lines)
        self._general(batch, lines)

    def result(self) -> LogWindow:
        if self._held is not None:
            self._release()
        lines = tuple(LogLine(number, decode(data), time) for number, (data, time) in self._window.window())
        return LogWindow(lines, self.total)

    def _hold(self, batch: Batch, k: int) -> None:
        assert self._held is not None
        held = self._held
        if self._tail:
            held.append(batch)
            self._held_count += k
            while held and self._held_count - held[0].count >= self._limit:
                gone = held.popleft()
                self._held_count -= gone.count
                self._passed += gone.count
            if self._limit == 0 and held:
                self._passed += self._held_count
                self._held_count = 0
                held.clear()
        elif self._held_count < self._limit:
            held.append(batch)
            self._held_count += k
        else:
            self._passed += k

    def _release(self) -> None:
        """Lines came out of order: from here on the windower decides line by line."""
        assert self._held is not None
        held, self._held = self._held, None
        if self._tail:
            self._window.skip(self._passed)
        for batch in held:
            self._feed_each(batch, batch.lines())
        if not self._tail:
            self._window.skip(self._passed)

    def _general(self, batch: Batch, lines: list[int]) -> None:
        threshold = self._window.threshold()
        low, high = min(lines), max(lines)
        if high < self._lo or low > self._hi:
            return  # nothing in the range (ranged windows count only lines in range)
        if threshold is not None and (high < threshold if self._tail else low >= threshold):
            if not self._ranged:
                self._window.skip(len(lines))
            return
        self._feed_each(batch, lines)

    def _feed_each(self, batch: Batch, lines: list[int]) -> None:
        datas, times = batch.datas(), batch.times()
        feed, lo, hi = self._window.feed, self._lo, self._hi
        for i, number in enumerate(lines):
            if lo <= number <= hi:
                feed(number, (datas[i], times[i]))


class CompiledSearch:
    """A search pattern compiled by RE2 (linear time: no pattern can backtrack catastrophically)."""

    def __init__(self, request: LogSearchRequest) -> None:
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = not request.ignore_case
        options.max_mem = 16 * 1024 * 1024
        source = request.pattern.encode("utf-8")
        try:
            self.line = re2.compile(source, options)
            # The same pattern over a batch's lines joined by "\n": ^ and $ then also match at
            # each line's edges, so every match within a line is found there too.
            self.block = re2.compile(b"(?m)" + source, options)
        except re2.error as exc:
            reason = (
                exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            )
            raise InvalidPattern(bad_pattern(str(reason))) from None
        self.whole_batch = not _CONTEXT_SENSITIVE.search(request.pattern)
        self.dollar = "$" in request.pattern
        self.cores = base64_cores(request.pattern, request.ignore_case)
        # What the scanner looks for in each run's raw bytes (LogScanner's `also`), in its one pass:
        # a literal's base64, or an entry whose shown text may join one.
        self.prefilter = (
            None if self.cores is None else b"|".join([*map(re.escape, self.cores), JOINING_DATA])
        )

    def matches(self, text: str) -> bool:
        return self.line.search(text.encode("utf-8")) is not None

    def may_hold(self, raw: bytes) -> bool:
        """Whether a fixed-shape run may hold a match: a literal's base64 or a joining byte in it."""
        assert self.cores is not None
        return any(core in raw for core in self.cores) or _JOINING_DATA.search(raw) is not None


class _Shown:
    __slots__ = ("after", "before", "line", "need")

    def __init__(self, line: LogLine, before: list[LogLine], need: int) -> None:
        self.line, self.before, self.need = line, before, need
        self.after: list[LogLine] = []


class SearchReader:
    """Every output line searched once, in arrival order; the first `max_matches` kept with context."""

    def __init__(self, request: LogSearchRequest, compiled: CompiledSearch | None = None) -> None:
        self._pattern = compiled or CompiledSearch(request)
        self._context = request.context
        self._max = request.max_matches
        self.total_lines = 0
        self.total_matches = 0
        self._shown: list[_Shown] = []
        self._pending: list[_Shown] = []  # shown matches still waiting for lines after them
        self._history: deque[tuple[Batch, int]] = deque(maxlen=request.context)

    def feed(self, batch: Batch) -> None:
        cores = self._pattern.cores
        if cores is not None and not self._pending and isinstance(batch, FixedBatch):
            held = batch.also if batch.also is not None else self._pattern.may_hold(batch.raw)
            if not held:
                # None of the pattern's literals is in any line of this run: count, decode nothing.
                k = batch.count
                self.total_lines += k
                if self._context:
                    self._history.extend((batch, i) for i in range(max(0, k - self._context), k))
                return
        datas = batch.datas()
        k = len(datas)
        if k == 0:
            return
        if self._pending:
            self._pending = self._fill_after(self._pending, batch, datas, 0, k)
        matched = self._matched(batch, datas)
        self.total_lines += k
        self.total_matches += len(matched)
        for i in matched:
            if len(self._shown) >= self._max:
                break
            shown = _Shown(self._entry(batch, datas, i), self._before(batch, datas, i), self._context)
            self._shown.append(shown)
            if shown.need:
                self._pending += self._fill_after([shown], batch, datas, i + 1, k)
        if self._context:
            self._history.extend((batch, i) for i in range(max(0, k - self._context), k))

    def result(self) -> LogSearch:
        matches = tuple(LogMatch(s.line, tuple(s.before), tuple(s.after)) for s in self._shown)
        return LogSearch(matches, self.total_matches, self.total_lines)

    # ------------------------------------------------------------------ internals

    def _matched(self, batch: Batch, datas: list[Any]) -> list[int]:
        pattern = self._pattern
        if batch.fixed and pattern.whole_batch:
            # Checked base64, decoded in one call: "=" read as "A" turns each padded end into
            # one or two NUL bytes, and "CgoK" (three newlines) separates the lines, so the
            # block is every line followed by at most two NULs and a line break.
            joined = b"CgoK".join(datas)
            block = binascii.a2b_base64(joined.replace(b"=", b"A"))
            # A line whose shown text is not its bytes (an escape, a control, a carriage return):
            # the batch cleaned as shown, in one pass of each step; a NUL of a line's own, which
            # the block cannot tell from padding: every line on its own.
            if block.count(0) != joined.count(b"=") or _NONCANONICAL_PAD.search(joined):
                return self._each(datas)
            if _CLEANED.search(block):
                return self._shown_block_matches(datas)
            if pattern.dollar:
                # A $ must match where a line ends, before its padding. When the padding decodes
                # to NULs (the bits it leaves over are zero, as every encoder writes them) and
                # the block holds no other NUL, they become line breaks, same length, so each
                # line's end is followed by one (the checks above made sure of both).
                block = block.replace(b"\x00", b"\n")
            if block.isascii() or _is_utf8(block):
                return self._block_matches(block, datas)
        return self._each(datas)

    def _each(self, datas: list[Any]) -> list[int]:
        matches = self._pattern.matches
        return [i for i, data in enumerate(datas) if matches(shown(data))]

    def _block_matches(self, block: bytes, datas: list[Any]) -> list[int]:
        """Lines with a match, found with one pass per candidate over the joined batch.

        Every match inside a line is also a match of the (?m) pattern in the joined text, so
        the first match at or after a line's start is in that line or an earlier one; each
        candidate line is confirmed on its own text, and the search resumes at the next line.
        """
        # Where each following line starts: 3 bytes per 4 base64 characters, plus the separator.
        nexts = list(accumulate(len(data) // 4 * 3 + 3 for data in datas))
        matches = self._pattern.matches
        return self._confirmed(block, nexts, lambda i: matches(shown(datas[i])))

    def _shown_block_matches(self, datas: list[Any]) -> list[int]:
        """Lines with a match among lines that cleaning changes: the batch decoded in one call with
        "////" (three 0xFF bytes, never in UTF-8) between its lines, the padding's NULs dropped
        (the caller made sure they are all the padding's), cleaned by `log_texts` at once, then
        searched as `_block_matches` searches, each candidate confirmed on its own shown text.
        The batch is decoded again, here only: the "CgoK" block cannot be cut back into its lines
        without a slice per line, and decoding every batch with "////" would cost plain batches,
        most of them, a copy each (about 10 % of a plain search)."""
        raw = binascii.a2b_base64(b"////".join(datas).replace(b"=", b"A")).replace(b"\x00", b"")
        if raw.count(b"\xff") != 3 * (len(datas) - 1) or not _is_utf8(raw.replace(PIECE, b"\n")):
            return self._each(datas)  # a line not UTF-8 (decoding puts U+FFFD in it)
        lines = log_texts(raw).split(PIECE)
        nexts = list(accumulate(len(line) + 1 for line in lines))
        search = self._pattern.line.search
        return self._confirmed(b"\n".join(lines), nexts, lambda i: search(lines[i]) is not None)

    def _confirmed(self, block: bytes, nexts: list[int], confirm: Callable[[int], bool]) -> list[int]:
        """The lines of `block` (line i ends before nexts[i]) holding a match of the (?m) pattern
        that `confirm` finds in the line on its own, searching on from each candidate's next line."""
        search = self._pattern.block.search
        found = search(block)
        last = len(nexts) - 1
        out = []
        while found is not None:
            i = min(bisect_right(nexts, found.start()), last)
            if confirm(i):
                out.append(i)
            if i >= last:
                break
            found = search(block, nexts[i])
        return out

    def _entry(self, batch: Batch, datas: list[Any], i: int) -> LogLine:
        return LogLine(batch.lines()[i], decode(datas[i]), batch.times()[i])

    def _before(self, batch: Batch, datas: list[Any], i: int) -> list[LogLine]:
        c = self._context
        if not c:
            return []
        inside = [self._entry(batch, datas, j) for j in range(max(0, i - c), i)]
        missing = c - len(inside)
        if missing <= 0:
            return inside
        earlier = list(self._history)[-missing:]
        return [self._entry(b, b.datas(), j) for b, j in earlier] + inside

    def _fill_after(
        self, waiting: list[_Shown], batch: Batch, datas: list[Any], start: int, k: int
    ) -> list[_Shown]:
        """Give each waiting match the lines from `start` on; return those that still want more."""
        still = []
        for shown in waiting:
            take = range(start, min(k, start + shown.need))
            shown.after.extend(self._entry(batch, datas, j) for j in take)
            shown.need -= len(take)
            if shown.need:
                still.append(shown)
        return still


def _is_utf8(block: bytes) -> bool:
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class BothReaders:
    """A window and a search fed from the same pass over the log."""

    def __init__(self, window: WindowReader, search: SearchReader) -> None:
        self.window, self.search = window, search

    def feed(self, batch: Batch) -> None:
        self.window.feed(batch)
        self.search.feed(batch)
