"""Step log entries as lines: which entries are output, their text, and a window of the first or last N kept in memory bounded by N."""

import base64
import heapq
from collections import deque
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar


@dataclass(frozen=True, slots=True)
class LogLine:
    """One output line of a step's log, as the gateway reads it and the results show it."""

    number: int  # the forge's line number, from 0
    text: str  # decoded, without its trailing newline
    time: int = 0  # seconds since the step started


@dataclass(frozen=True, slots=True)
class LogMatch:
    """A line a search matched, with the lines around it."""

    line: LogLine
    before: tuple[LogLine, ...] = ()
    after: tuple[LogLine, ...] = ()


End = Literal["head", "tail"]
T = TypeVar("T")


class LogWindower(Generic[T]):
    """Collects `(line_number, payload)` entries and keeps only the window asked for.

    "head" keeps the `limit` lowest line numbers, "tail" the `limit` highest. Entries may
    arrive in any order; at most `limit` payloads are held at any moment, so a log of a
    million lines costs no more than the window. Equal line numbers keep their arrival
    order (the first one fed sorts first). The payload is opaque: a caller can keep the
    undecoded form and decode only the lines that survive.
    """

    __slots__ = ("_from_end", "_heap", "_last", "_limit", "_ordered", "_seen")

    def __init__(self, limit: int, from_end: End = "tail") -> None:
        if limit < 0:
            raise ValueError("limit must not be negative")
        if from_end not in ("head", "tail"):
            raise ValueError("from_end must be 'head' or 'tail'")
        self._limit = limit
        self._from_end = from_end
        # A heap whose root is the entry to evict first: for "tail" the lowest
        # (line, seq); for "head" the highest, so keys are negated.
        self._heap: list[tuple[int, int, T]] = []
        # Woodpecker sends lines in order, and for "tail" a bounded deque then does the
        # heap's job for less: it drops the oldest, which is the lowest. The first line
        # out of order moves everything into the heap for good.
        self._ordered: deque[tuple[int, int, T]] | None = deque(maxlen=limit) if from_end == "tail" else None
        self._last = -(2**63)
        self._seen = 0

    def __len__(self) -> int:
        """How many entries are held right now (never more than `limit`)."""
        return len(self._ordered) if self._ordered is not None else len(self._heap)

    @property
    def total(self) -> int:
        """How many entries were fed, kept or not."""
        return self._seen

    def feed(self, number: int, payload: T) -> None:
        seq = self._seen
        self._seen += 1
        if self._limit == 0:
            return
        heap = self._heap
        # seq only grows, so a newcomer with the root's line number beats the root for
        # "tail" (it is later) and loses to it for "head"; payloads are never compared.
        if self._from_end == "tail":
            ordered = self._ordered
            if ordered is not None:
                if number >= self._last:
                    self._last = number
                    ordered.append((number, seq, payload))
                    return
                heap.extend(ordered)
                heapq.heapify(heap)
                self._ordered = None
            if len(heap) < self._limit:
                heapq.heappush(heap, (number, seq, payload))
            elif number >= heap[0][0]:
                heapq.heapreplace(heap, (number, seq, payload))
        elif len(heap) < self._limit:
            heapq.heappush(heap, (-number, -seq, payload))
        elif -number > heap[0][0]:
            heapq.heapreplace(heap, (-number, -seq, payload))

    def skip(self, count: int) -> None:
        """Count `count` entries known to fall outside the window without holding them (see `threshold`)."""
        self._seen += count

    def threshold(self) -> int | None:
        """None while the window has room; else the line number an entry must pass to get in.

        For "tail" an entry gets in when its line is at least this; for "head" when it is below it.
        A reader that knows a whole batch fails that test can `skip` it instead of feeding each entry.
        """
        if self._limit == 0:
            return 2**63 if self._from_end == "tail" else -(2**63)
        if self._ordered is not None:
            return self._ordered[0][0] if len(self._ordered) >= self._limit else None
        if len(self._heap) < self._limit:
            return None
        root = self._heap[0][0]
        return root if self._from_end == "tail" else -root

    def window(self) -> list[tuple[int, T]]:
        """The kept entries ordered by line number (then arrival)."""
        if self._ordered is not None:
            return [(number, payload) for number, _, payload in self._ordered]
        if self._from_end == "tail":
            ordered = sorted(self._heap, key=lambda e: (e[0], e[1]))
            return [(number, payload) for number, _, payload in ordered]
        ordered = sorted(self._heap, key=lambda e: (-e[0], -e[1]))
        return [(-neg, payload) for neg, _, payload in ordered]


def is_output(entry_type: object) -> bool:
    """Whether a log entry of this `type` is part of the step's output; an unknown type counts as output.

    LogEntry.type is 0 stdout, 1 stderr, 2 exit code, 3 metadata, 4 progress. The last two are
    bookkeeping, not something the step printed, so they are neither shown nor counted as lines.
    """
    # Comparisons, not a set lookup: a malformed `type` may be unhashable. Called once per entry.
    return entry_type != 3 and entry_type != 4


def decode_log_data(data: str) -> str:
    """Woodpecker's base64 `data` field as text, without the one trailing newline the agent may leave.

    Invalid UTF-8 becomes U+FFFD rather than failing: a log is shown, not executed.
    """
    raw = base64.b64decode(data, validate=False)
    text = raw.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    return text


def lines_around(first: int | None, last: int | None, total: int) -> tuple[int | None, int | None]:
    """For a window of lines first..last of a log of `total` lines numbered from 0: the `to_line` that
    reads the lines before it and the `from_line` that reads those after it (None: there are none)."""
    before = first - 1 if first is not None and first > 0 else None
    after = last + 1 if last is not None and last + 1 < total else None
    return before, after
