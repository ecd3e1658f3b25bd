"""An incremental reader for Woodpecker's log answer (one JSON array of objects, or null) holding one entry at a time."""

import codecs
import json
import re
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import re2

from domain.logs import is_output

_WHITESPACE = " \t\r\n"


class MalformedLog(ValueError):
    """The bytes are not a JSON array of objects (or null)."""


class LooksLikeHtml(MalformedLog):
    """The answer starts with "<": a web page, not the API."""


class _NeedMore(Exception):
    """Internal: the buffer ends inside an entry; reading resumes at `pos` in `state` (None: as it was)."""

    def __init__(self, pos: int, state: str | None = None) -> None:
        super().__init__()
        self.pos, self.state = pos, state


class LogArrayReader:
    """Feed it the body in chunks; it returns each complete top-level object as soon as it closes.

    Woodpecker answers a step's log as one array of small objects, so a small state
    machine around the C scanner of the json module (what `JSONDecoder.raw_decode`
    uses) reads it about 2.4 times faster than ijson's yajl2_c `items`, and keeps only
    the unfinished tail of the buffer. `max_pending` bounds that tail: an object that never closes (or garbage)
    cannot make it grow without limit.
    """

    def __init__(self, max_pending: int = 8 * 1024 * 1024) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        # The C scanner behind JSONDecoder.raw_decode, called directly.
        self._scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in __init__, absent from typeshed
        self._buf = ""
        self._state = "start"  # start -> open -> (item -> sep)* -> done | null
        self._cut = False  # whether the buffer holds the start of an entry the last read found cut
        self._max_pending = max_pending

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        try:
            text = self._decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise MalformedLog("the log is not valid UTF-8") from exc
        self._buf += text
        # An entry the last feed found cut can only close with a "}" of this chunk (had it closed
        # earlier, it would have been read): without one, reading it again from its "{" fails
        # again. So an entry that never closes costs a read per "}" that arrives, not per chunk.
        out = [] if self._cut and "}" not in text else self._drain(final=False)
        if len(self._buf) > self._max_pending:
            raise MalformedLog("a log entry is larger than the reader accepts, or the JSON never closes")
        return out

    def close(self) -> list[dict[str, Any]]:
        """Finish: anything left must be whitespace after a complete array (or null)."""
        try:
            self._buf += self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise MalformedLog("the log is not valid UTF-8") from exc
        out = self._drain(final=True)
        if self._state == "start" and not self._buf.strip():
            return out  # an empty body reads as an empty log
        if self._state not in ("done", "null"):
            raise MalformedLog("the log ended before its JSON array was complete")
        return out

    def _drain(self, *, final: bool) -> list[dict[str, Any]]:
        buf = self._buf
        pos = 0
        n = len(buf)
        out: list[dict[str, Any]] = []
        state = self._state
        self._cut = False
        try:
            while True:
                while pos < n and buf[pos] in _WHITESPACE:
                    pos += 1
                if pos >= n:
                    break
                ch = buf[pos]
                if state == "start":
                    state, pos = _opening(buf, pos, final)
                elif state in ("open", "item"):
                    if ch == "]" and state == "open":
                        state, pos = "done", pos + 1
                    elif ch == "{":
                        state, pos = self._objects(buf, pos, out, final, state)
                    else:
                        raise MalformedLog("a log entry is not a JSON object")
                elif state == "sep":
                    if ch == ",":
                        state, pos = "item", pos + 1
                    elif ch == "]":
                        state, pos = "done", pos + 1
                    else:
                        raise MalformedLog("log entries are not separated by commas")
                else:  # done or null: only whitespace may follow
                    raise MalformedLog("unexpected data after the log's JSON")
        except _NeedMore as more:
            pos, state = more.pos, more.state or state
            self._cut = buf.startswith("{", pos)
        finally:
            self._buf = buf[pos:]
            self._state = state
        return out

    def _objects(
        self, buf: str, pos: int, out: list[dict[str, Any]], final: bool, state: str
    ) -> tuple[str, int]:
        """The usual shape is `{...},{...},...`: parse objects back to back without going round the
        state machine for each separator. Raises _NeedMore (after the last whole object) when cut."""
        scan = self._scan
        while True:
            try:
                obj, pos = scan(buf, pos)
            except (json.JSONDecodeError, StopIteration):
                if final:
                    raise MalformedLog("a log entry is not valid JSON") from None
                raise _NeedMore(pos, state) from None  # probably incomplete
            out.append(obj)
            if buf.startswith(",{", pos):
                state, pos = "item", pos + 1
                continue
            return "sep", pos


def _opening(buf: str, pos: int, final: bool) -> tuple[str, int]:
    """The state after the answer's first character: an array opens, or `null` is the whole log."""
    ch = buf[pos]
    if ch == "[":
        return "open", pos + 1
    if ch == "n":
        if len(buf) - pos < 4 and not final:
            raise _NeedMore(pos)
        if buf.startswith("null", pos):
            return "null", pos + 4
        raise MalformedLog("the log answer is not a JSON array")
    if ch == "<":
        raise LooksLikeHtml("the log answer is an HTML page")
    raise MalformedLog("the log answer is not a JSON array")


# ---------------------------------------------------------------------------------------------
# The fast path: Woodpecker's fixed-shape entries read at byte level, decoded only when needed.

# Go's encoder writes every LogEntry the same way: these keys, in this order, no spaces, `data`
# as standard base64. A run of such entries is checked in one pass of a linear-time RE2
# automaton; `type` 3 and 4 (metadata, progress) fail the check on purpose, so a checked run
# holds output lines only and the exact path handles the rest.
_B64 = rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"


# A JSON integer as the parser reads one: no leading zeros ("007" is not JSON), at most 19 digits.
_INT = rb"-?(?:0|[1-9][0-9]{0,18})"


def _entry(line: bytes) -> bytes:
    return (
        rb'\{"id":' + _INT + rb',"step_id":' + _INT + rb',"time":' + _INT + rb',"line":' + line + rb","
        rb'"data":"' + _B64 + rb'","type":[012]\}'
    )


_ENTRY = _entry(rb"(?:0|[1-9][0-9]{0,17})")
# In the same pass, whether every line number of the run has one width (1 to _WIDTHS digits):
# numbers of one width, without leading zeros, compare as their digits do, so the lowest and
# highest line of a run need no int per entry.
_WIDTHS = 7
_LINE = re.compile(rb',"line":([0-9]+),')
_TIME = re.compile(rb',"time":(-?[0-9]+),')
_DATA = re.compile(rb',"data":"([^"]*)"')
# Past this many bytes without an entry boundary the run is handed to the exact reader, which
# has its own bound; a fixed-shape entry is a few hundred bytes.
_MAX_RUN = 1024 * 1024
_MAX_QUEUED = 1024 * 1024  # bytes of runs waiting for their check on another thread
_MIN_RUN = 192 * 1024  # bytes gathered before a run is cut: a few network chunks


Checker = Callable[[bytes], tuple[int, bool] | None]


def _shape_checker(also: bytes | None = None) -> Checker:
    """One pass of an RE2 set over a run: None when it is not fixed-shape entries, else the width of
    all its line numbers (0: they differ) and whether the run holds a match of `also`."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 * 1024 * 1024
    checker = re2.Set.FullMatchSet(options)
    checker.Add(_ENTRY + rb"(?:," + _ENTRY + rb")*")  # index 0: the fixed shape
    for width in range(1, _WIDTHS + 1):  # index w: the fixed shape, every line number w digits wide
        one = _entry(rb"[1-9][0-9]{%d}" % (width - 1) if width > 1 else rb"[0-9]")
        checker.Add(one + rb"(?:," + one + rb")*")
    if also is not None:
        checker.Add(rb"(?s).*(?:" + also + rb").*")  # index _WIDTHS + 1: somewhere in the run
    checker.Compile()

    def check(run: bytes) -> tuple[int, bool] | None:
        matched = checker.Match(run)
        if matched is None or 0 not in matched:
            return None
        return max(i for i in matched if i <= _WIDTHS), _WIDTHS + 1 in matched

    return check


_checkers: dict[bytes | None, Checker] = {}


def _checker(also: bytes | None) -> Checker:
    """The shape check (built at the first log, not at import), with `also` for the last few patterns."""
    found = _checkers.get(also)
    if found is None:
        if len(_checkers) > 8:
            _checkers.pop(next(k for k in _checkers if k is not None))
        found = _checkers[also] = _shape_checker(also)
    return found


class Batch:
    """Output entries (types 0, 1, 2 and unknown ones) in arrival order; columns are computed when asked for."""

    __slots__ = ()

    @property
    def count(self) -> int:
        return len(self.lines())

    def lines(self) -> list[int]:
        raise NotImplementedError

    def bounds(self) -> tuple[int, int] | None:
        """The lowest and highest line number, or None for a batch without entries."""
        lines = self.lines()
        return (min(lines), max(lines)) if lines else None

    def datas(self) -> list[Any]:
        """Each entry's `data` as sent (base64 text or bytes; anything else for a malformed entry)."""
        raise NotImplementedError

    def times(self) -> list[int]:
        raise NotImplementedError

    @property
    def fixed(self) -> bool:
        """Whether every `data` is checked base64 bytes (so it decodes without error)."""
        return False


class FixedBatch(Batch):
    """A run of fixed-shape entries, kept as the bytes they arrived in."""

    __slots__ = ("_bounds", "_count", "_datas", "_lines", "also", "raw", "width")

    def __init__(self, raw: bytes, width: int = 0, also: bool | None = None) -> None:
        self.raw = raw
        self.width = width  # digits of every line number, or 0 when they differ
        self.also = also  # whether the raw bytes hold a match of the scanner's `also`; None: not looked for
        self._count: int | None = None
        self._bounds: tuple[int, int] | None = None
        self._lines: list[int] | None = None
        self._datas: list[bytes] | None = None

    @property
    def count(self) -> int:
        if self._count is None:
            # Whichever column is at hand counts the entries; else the separators do.
            known = self._lines if self._lines is not None else self._datas
            # In the fixed shape "{" opens each entry and appears nowhere else.
            self._count = len(known) if known is not None else self.raw.count(b"{")
        return self._count

    def lines(self) -> list[int]:
        if self._lines is None:
            self._lines = list(map(int, _LINE.findall(self.raw)))
        return self._lines

    def bounds(self) -> tuple[int, int] | None:
        if self._bounds is None:
            self._bounds = self._find_bounds()
        return self._bounds

    def _find_bounds(self) -> tuple[int, int]:
        if self._lines is not None or not self.width:
            lines = self.lines()
            return min(lines), max(lines)
        # Without an int per entry, nor a regex: the shape check made sure `,"line":` opens every
        # entry's line number and nothing else, and that every number has `width` digits without
        # leading zeros. So each piece after a split starts with its entry's number, and pieces
        # compare (as bytes, in C) as their numbers do.
        pieces = self.raw.split(b',"line":')
        del pieces[0]
        self._count = len(pieces)
        return int(min(pieces)[: self.width]), int(max(pieces)[: self.width])

    def datas(self) -> list[Any]:
        if self._datas is None:
            self._datas = _DATA.findall(self.raw)
        return self._datas

    def times(self) -> list[int]:
        return list(map(int, _TIME.findall(self.raw)))

    @property
    def fixed(self) -> bool:
        return True


class ParsedBatch(Batch):
    """Entries that came through the JSON parser (any shape Woodpecker might send)."""

    __slots__ = ("_datas", "_lines", "_times")

    def __init__(self, entries: list[Any]) -> None:
        lines, datas, times = [], [], []
        for entry in entries:
            if not isinstance(entry, dict):
                raise MalformedLog("a log entry is not a JSON object")
            number = entry.get("line")
            if type(number) is not int:
                raise MalformedLog("a log entry has no line number")
            if is_output(entry.get("type")):
                lines.append(number)
                datas.append(entry.get("data"))
                time = entry.get("time")
                times.append(time if type(time) is int else 0)
        self._lines, self._datas, self._times = lines, datas, times

    def lines(self) -> list[int]:
        return self._lines

    def datas(self) -> list[Any]:
        return self._datas

    def times(self) -> list[int]:
        return self._times


_executor: ThreadPoolExecutor | None = None


def check_executor() -> Executor:
    """The threads that examine the scanners' runs (RE2 lets go of the GIL while it matches):
    two, as checks are CPU work and more threads than cores only queue."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="log-check")
    return _executor


Parts = list[bytes | memoryview]


def _joined(parts: Parts) -> bytes:
    return parts[0] if len(parts) == 1 and type(parts[0]) is bytes else b"".join(parts)


def _examine(parts: Parts, check: Checker, also: bool, bounds: bool) -> tuple[bytes, FixedBatch | None]:
    """A run's bytes, joined from the pieces it arrived in, and its batch when it has the fixed shape:
    checked, and with its count (and, for a window, its lowest and highest line) already known, so
    the thread that reads the log does none of this per-byte work."""
    run = _joined(parts)
    checked = check(run)
    if checked is None:
        return run, None
    batch = FixedBatch(run, checked[0], checked[1] if also else None)
    if bounds:
        batch.bounds()
    _ = batch.count
    return run, batch


class _Queued:
    """A run cut from the log, waiting to become a batch: its pieces, and its examination or the future of it."""

    __slots__ = ("examined", "last", "parts", "size")

    def __init__(self, parts: Parts, size: int, last: bool) -> None:
        self.parts, self.size, self.last = parts, size, last
        self.examined: Any = None

    def run(self) -> bytes:
        """The run's bytes (joined here when the thread has not started on them: it never will)."""
        examined = self.examined
        if isinstance(examined, Future):
            if examined.cancel():
                return _joined(self.parts)
            examined = examined.result()
        return examined[0]  # type: ignore[no-any-return]  # (bytes, batch)


class LogScanner:
    """Feed it the log's bytes in chunks; it returns batches of output entries as runs of them complete.

    Runs of Woodpecker's fixed-shape entries are cut at `},{` and checked at byte level (no
    JSON or base64 decoding: that happens later, for the lines a window keeps or a search
    reads). A run that fails the check is parsed as JSON on its own; when that fails too (the
    cut fell inside a string, odd spacing, `null`, a web page), everything from that run on
    goes through `LogArrayReader`, so the answer is always what the exact parser would give.

    With an `executor`, each run is examined on another thread while this one reads on: its
    pieces joined, its shape checked (one RE2 pass, which lets go of the GIL), its entries
    counted and, with `bounds`, its lowest and highest line found. The reading thread only cuts
    the received chunks at entry boundaries. Batches still come out in the order of the log, at
    most `depth` runs behind it.
    """

    def __init__(
        self,
        max_pending: int = 8 * 1024 * 1024,
        also: bytes | None = None,
        executor: Executor | None = None,
        depth: int = 4,
        min_run: int = _MIN_RUN,
        bounds: bool = True,
    ) -> None:
        """`also`: an RE2 pattern looked for in each fixed-shape run's raw bytes in the same pass
        (`FixedBatch.also`), e.g. the base64 forms of a search's literals. `min_run`: bytes
        gathered before a run is cut (tests make it small to cut many runs). `bounds`: whether the
        batches' readers ask for their lowest and highest lines (a window does, a search does not)."""
        self._buf = b""
        self._state = "start"  # start -> runs -> done, or exact (LogArrayReader from here on)
        self._exact: LogArrayReader | None = None
        self._max_pending = max_pending
        self._check = _checker(also)
        self._also = also is not None
        self._bounds = bounds
        self._executor = executor
        self._depth = max(1, depth)
        self._min_run = min_run
        # Runs cut but not yet turned into batches, in log order; at most `depth` of them and
        # about _MAX_QUEUED bytes (a hostile log's long runs wait their turn).
        self._queue: deque[_Queued] = deque()
        self._queued = 0
        self._more: list[bytes] = []  # chunks after self._buf, not yet joined to it
        self._size = 0  # bytes in self._buf and self._more

    def _take(self) -> bytes:
        """Every byte not yet cut into a run, as one bytes (also kept as `self._buf`)."""
        if self._more:
            self._buf = b"".join([self._buf, *self._more])
            self._more.clear()
        return self._buf

    def feed(self, chunk: bytes) -> list[Batch]:
        if self._exact is not None:
            return self._parsed(self._exact.feed(chunk))
        if self._state == "runs":
            if not chunk:
                return self._drain(final=False)
            # Chunks wait until they make a run worth an examination of its own (fewer hand-overs).
            self._more.append(chunk)
            self._size += len(chunk)
            if self._size < self._min_run:
                return self._drain(final=False)
            # The last entry boundary is most likely in the last chunk: cut there, and copy nothing
            # here (the examination joins the pieces).
            cut = chunk.rfind(b"},{")
            if cut >= 0:
                parts: Parts = [self._buf, *self._more[:-1], memoryview(chunk)[: cut + 1]]
                self._buf, self._more = chunk[cut + 2 :], []
                self._size = len(self._buf)
                self._submit(parts, self._size_of(parts), last=False)
                return self._drain(final=False)
        buf = self._take() if self._state == "runs" else self._buf + chunk
        if self._state == "start":
            stripped = buf.lstrip()
            if not stripped:
                self._buf = b""
                return []
            if not stripped.startswith(b"["):
                return self._to_exact(stripped)
            buf = stripped[1:].lstrip()
            if not buf:
                self._buf = b"["  # whitespace after "[" proves nothing yet
                return []
            if not buf.startswith(b"{"):
                return self._to_exact(b"[" + buf)
            self._state = "runs"
        cut = buf.rfind(b"},{")
        if cut < 0:
            self._buf, self._size = buf, len(buf)
            if len(buf) > _MAX_RUN:
                return self._give_up()
            return self._drain(final=False)
        self._buf = buf[cut + 2 :]
        self._size = len(self._buf)
        self._submit([buf[: cut + 1]], cut + 1, last=False)
        return self._drain(final=False)

    @staticmethod
    def _size_of(parts: Parts) -> int:
        return sum(map(len, parts))

    def close(self) -> list[Batch]:
        if self._exact is not None:
            return self._parsed(self._exact.close())
        buf, self._buf = self._take(), b""
        if self._state == "start":
            if buf.strip() in (b"", b"["):
                if buf.strip() == b"[":
                    raise MalformedLog("the log ended before its JSON array was complete")
                return []
            out = self._to_exact(buf)
            return out + self.close()
        if self._state == "done":
            return self._trailing(buf)
        body = buf.rstrip()
        if not body.endswith(b"]"):
            self._buf = buf
            return self._give_up() + self.close()
        run = body[:-1].rstrip()
        self._submit([run], len(run), last=True)
        out = self._drain(final=True)
        if self._exact is not None:
            return out + self.close()
        self._state = "done"
        return out

    def _submit(self, parts: Parts, size: int, *, last: bool) -> None:
        queued = _Queued(parts, size, last)
        if self._executor is not None:
            queued.examined = self._executor.submit(_examine, parts, self._check, self._also, self._bounds)
        else:
            queued.examined = _examine(parts, self._check, self._also, self._bounds)
        self._queue.append(queued)
        self._queued += size

    def _drain(self, *, final: bool) -> list[Batch]:
        """Batches of the runs whose examination is done, in order; waits for the oldest when too
        many are queued, or for all of them when `final`."""
        out: list[Batch] = []
        queue = self._queue
        while queue and self._exact is None:
            queued = queue[0]
            examined = queued.examined
            if isinstance(examined, Future):
                full = len(queue) > self._depth or self._queued > _MAX_QUEUED
                if not (final or full or examined.done()):
                    break
                examined = examined.result()
            queue.popleft()
            self._queued -= queued.size
            run, batch = examined
            out += [batch] if batch is not None else self._unshaped(run, last=queued.last)
        return out

    def _give_up(self) -> list[Batch]:
        """The queued runs as batches, then the exact reader from `self._buf` on (unless a queued
        run already handed it everything from there)."""
        out = self._drain(final=True)
        return out if self._exact is not None else out + self._to_exact(b"[" + self._take())

    def _unshaped(self, run: bytes, *, last: bool) -> list[Batch]:
        """A run without the fixed shape; what follows it (after a comma, unless `last`) is queued or in `self._buf`."""
        try:
            entries = json.loads(b"[" + run + b"]")
        except ValueError:  # also UnicodeDecodeError
            # The exact reader takes over from this run: the runs queued after it, then the buffer.
            closes = last or (bool(self._queue) and self._queue[-1].last)
            rest = [queued.run() for queued in self._queue]
            self._queue.clear()
            self._queued = 0
            body = b",".join([run, *rest])
            return self._to_exact(b"[" + body + (b"]" if closes else b"," + self._take()))
        return [ParsedBatch(entries)]

    def _to_exact(self, pending: bytes) -> list[Batch]:
        self._exact = LogArrayReader(self._max_pending)
        self._buf, self._more, self._size = b"", [], 0
        return self._parsed(self._exact.feed(pending))

    def _trailing(self, buf: bytes) -> list[Batch]:
        if buf.strip():
            raise MalformedLog("unexpected data after the log's JSON")
        self._buf = b""
        return []

    @staticmethod
    def _parsed(entries: list[dict[str, Any]]) -> list[Batch]:
        return [ParsedBatch(entries)] if entries else []
