"""The text of a result, rendered from its shape: everything the structured content says, for a client that reads only `content`.

One entry point, `render`, for every tool (and for tools added later): it looks at the result's
shape, never at the tool's name. The layout, and why nothing Woodpecker writes can forge it
(docs/adr/0022-the-text-carries-the-data.md):

    line 1   the untrusted warning, when the result carries the untrusted markers
    next     the one-line summary
    then     the data: every data line starts with `{` (the result as one line of compact JSON,
             or a log's header) or with `[n] ` (a numbered log line, `[0042] text`)

Woodpecker's strings reach the text only inside a JSON string (where a line break is `\\n`) or
after a line's `[n] ` prefix (a line break inside a log entry starts another `[n] ` line), and
the summary is forced onto one line. Invisible and direction-changing characters are escaped
wherever they stand (`domain.visible`: JSON's `\\uXXXX` inside the JSON line, `\\u{XXXX}`
elsewhere). So no data line can start with the warning or a summary, and the text ends where the data ends: there is no end marker to forge.

`fit` wraps a shaping function so that the structured content and the text together stay under
the result's byte budget on the wire.
"""

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from domain import visible
from domain.calls import ToolResult
from domain.woodpecker.results.budget import size
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, WARNINGS
from domain.woodpecker.results.text import strip_terminal

TextMode = Literal["full", "summary"]
TEXT_MODES: tuple[TextMode, ...] = ("full", "summary")
LOG_KEY = "lines"  # a list of {"line": int, "text": str} under this key renders as numbered lines
MIN_LINE_WIDTH = 4  # digits of a line number: [0042]

# Characters that some readers take as a line break but JSON leaves as they are (str.splitlines
# splits on all of them): escaped in the JSON line, so it stays one line for every reader.
_JSON_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
# Every line boundary str.splitlines knows: a log entry holding one starts another numbered line.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_MAX_ROUNDS = 16
_PRECISION = 64  # bytes: how close under the budget a cut result is shaped


@dataclass(frozen=True, slots=True)
class Summarised:
    """A shaped result before rendering: its structured content and its one-line summary (no warning)."""

    structured: dict[str, Any]
    summary: str


def is_untrusted(structured: Mapping[str, Any]) -> bool:
    """Whether the result carries the untrusted markers (content written by whoever can push, or the
    text the caller passed)."""
    return structured.get("untrusted") is True and structured.get("source") in WARNINGS


def render(result: Summarised, mode: TextMode = "full") -> str:
    """The text content of `result`: the warning (when untrusted), the summary, then (in `full` mode) the data."""
    structured = result.structured
    lines = [WARNINGS[structured["source"]]] if is_untrusted(structured) else []
    lines.append(visible.escape(strip_terminal(result.summary, keep_newlines=False)))
    if mode == "full":
        lines.extend(_data_lines(structured))
    return "\n".join(lines)


def wire_size(structured: Mapping[str, Any], text: str) -> int:
    """Bytes the structured content and the text take as JSON values in the message."""
    return size(structured) + size(text)


def fit(build: Callable[[int], Summarised], budget: int, mode: TextMode = "full") -> ToolResult:
    """The rendered result of `build` whose structured content and text together take at most
    `budget` bytes on the wire, keeping as much as fits.

    `build(b)` must shape a result whose structured content takes at most `b` bytes (dropping
    whole list entries, cutting logs at a line boundary) and keep no less for a larger `b`. It is
    called once with the whole budget; a result too large for it is shaped again with less, in
    steps proportional to the excess, then bisected to within `_PRECISION` bytes. When not even
    the smallest result fits with its data in the text (a budget of a few hundred bytes), the
    text is the summary alone and the structured content keeps what fits beside it.
    """
    fitting: tuple[int, Summarised, str] | None = None
    too_large = budget + 1
    inner = budget
    smallest = None  # the structured size of the smallest result that did not fit
    for _ in range(_MAX_ROUNDS):
        result = build(inner)
        text = render(result, mode)
        total = wire_size(result.structured, text)
        if total <= budget:
            fitting = (inner, result, text)
            if too_large - inner <= _PRECISION:
                break
            inner = (inner + too_large) // 2
            continue
        too_large = min(too_large, inner)
        shaped = size(result.structured)
        if fitting is None and smallest is not None and shaped >= smallest:
            break  # shaping with less room no longer makes it smaller
        smallest = shaped if smallest is None else min(smallest, shaped)
        if fitting is not None:
            inner = (fitting[0] + too_large) // 2
        else:
            # The text grows with the structured content: shrink it by its share of the excess.
            inner = min(inner, shaped) - int((total - budget) * shaped / total) - _PRECISION
        if inner <= 0 or (fitting is not None and too_large - fitting[0] <= _PRECISION):
            break
    if fitting is not None:
        return ToolResult(fitting[1].structured, fitting[2])
    if mode != "summary":
        return fit(build, budget, "summary")
    result = build(max(inner, 0))
    return ToolResult(result.structured, render(result, "summary"))


def _data_lines(structured: Mapping[str, Any]) -> list[str]:
    data = dict(structured)
    if is_untrusted(structured):
        for key in UNTRUSTED_MARKERS:
            del data[key]  # said by the warning line
    entries = data.get(LOG_KEY)
    if not isinstance(entries, list) or not _is_log(entries):
        return [compact(data)]
    header = {k: v for k, v in data.items() if k != LOG_KEY}
    numbers = [e["line"] for e in entries]
    width = max([MIN_LINE_WIDTH, *(len(str(n)) for n in numbers)])
    out = [compact(header)]
    for entry in entries:
        number = f"[{entry['line']:0{width}d}]"
        for part in _LINE_BREAK.split(entry["text"]):
            out.append(f"{number} {visible.escape(part)}" if part else number)
    return out


def _is_log(entries: list[Any]) -> bool:
    return all(
        isinstance(e, Mapping)
        and set(e) == {"line", "text"}
        and isinstance(e["line"], int)
        and not isinstance(e["line"], bool)
        and isinstance(e["text"], str)
        for e in entries
    )


def compact(value: Any) -> str:
    """`value` as one line of compact JSON that every reader keeps on one line, nothing invisible in it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in _JSON_BREAKS.items():
        text = text.replace(char, escaped)
    return visible.json_escape(text)
