"""Woodpecker's text made safe to show: no terminal escapes or control characters, one-line values cut short."""

import re
import string
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Unicode's line and paragraph separators: line breaks to every reader that splits like str.splitlines.
_SEPARATORS = str.maketrans({"\u2028": "\n", "\u2029": "\n"})
SHORT = 80  # characters of one value in a summary


def strip_terminal(text: str, keep_newlines: bool = True) -> str:
    """Text without terminal escape sequences and control characters. Tabs stay; newlines stay too,
    or become spaces when `keep_newlines` is False (one-line texts)."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate(_SEPARATORS)
    if not keep_newlines:
        text = " ".join(text.split("\n"))
    return _CONTROLS.sub("", text)


def log_text(text: str) -> str:
    """A log entry as a terminal would have left it: for each line, the text after its last carriage
    return (progress redraws), without escapes. An entry may hold several lines."""
    lines = text.translate(_SEPARATORS).rstrip("\r\n").split("\n")
    return "\n".join(
        _CONTROLS.sub("", _ANSI.sub("", line.rstrip("\r").rsplit("\r", 1)[-1])) for line in lines
    )


# `log_texts`: the same steps over the UTF-8 of many entries at once, PIECE between them (bytes
# that UTF-8 never holds); no pattern below can cross PIECE or a line feed, so each works inside
# one line of one entry, as `log_text` does.
PIECE = b"\xff\xff\xff"
# Each run is tried only from its first byte and taken whole (possessive): tried from every byte
# of a long run of carriage returns that ends in text, a pattern would cost the run's length
# squared, and whoever can push writes the log.
_PIECE_ENDS = re.compile(rb"(?<![\r\n])[\r\n]++(?=\xff|\Z)")
_LINE_END_CRS = re.compile(rb"(?<!\r)\r++(?=\n)")
# Everything of a line up to its last carriage return; tried only where a line starts.
_REDRAWN = re.compile(rb"(?:\A|(?<=[\n\xff]))(?:[^\n\r\xff]*+\r)++")
# _ANSI in bytes, the OSC's body kept inside one line of one entry (log_text splits before it).
_ESCAPES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n\xff]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)")
# With U+009B (C1's CSI) about, one pass of both: removing one kind first could make the other.
_ESCAPES_AND_C1_CSI = re.compile(_ESCAPES.pattern + rb"|\xc2\x9b[0-?]*[ -/]*[@-~]")
_C0 = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])  # _CONTROLS' one-byte part
_C1 = re.compile(rb"\xc2[\x80-\x9f]")


def log_texts(joined: bytes) -> bytes:
    """The UTF-8 of `log_text` of each entry of `joined` (valid UTF-8 entries, PIECE between them),
    PIECE between them again: one pass of each step over all of them, not one call per entry, and
    a step only where a byte search finds what it removes."""
    text = joined
    if b"\xe2\x80" in text:
        text = text.replace(b"\xe2\x80\xa8", b"\n").replace(b"\xe2\x80\xa9", b"\n")
    if b"\n\xff" in text or b"\r\xff" in text or text.endswith((b"\n", b"\r")):
        text = _PIECE_ENDS.sub(b"", text)
    if b"\r" in text:
        text = _REDRAWN.sub(b"", _LINE_END_CRS.sub(b"", text))
    if b"\xc2\x9b" in text:
        text = _ESCAPES_AND_C1_CSI.sub(b"", text)
    elif b"\x1b" in text:
        text = _ESCAPES.sub(b"", text)
    if b"\xc2" in text:
        text = _C1.sub(b"", text)
    return text.translate(None, _C0)


def short(value: Any) -> str:
    """A value on one line of at most SHORT characters; booleans as JSON spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = strip_terminal(str(value), keep_newlines=False)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def cut(text: str, keep: int) -> str:
    """The first `keep` characters of `text`, saying how many were left out."""
    return text[:keep] + f"… [cut {len(text) - keep} characters]"


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def fill(template: str, *sources: Mapping[str, Any]) -> str:
    """`template` with its {fields} taken from `sources` (later ones win), each shortened; a field
    that is missing or not a scalar reads "?" rather than failing. Only the fields the template
    names are shortened (an answer has dozens of fields, a summary names a few)."""
    names = _field_names(template)
    raw: dict[str, Any] = {}
    for source in sources:
        for k in source if names is None else (n for n in names if n in source):
            v = source[k]
            if isinstance(v, str | int | float | bool) or v is None:
                raw[k] = v
    fields = _Fields()
    for k, v in raw.items():
        fields[k] = short(v)
    return template.format_map(fields)


@lru_cache(maxsize=512)
def _field_names(template: str) -> tuple[str, ...] | None:
    """The keys a template's {fields} look up, or None when it has a field that is not a plain name."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None  # format_map says what is wrong with it
    for _, field, _, _ in parsed:
        if field is None:
            continue
        key = re.split(r"[.\[]", field, maxsplit=1)[0]
        if not key or key.isdigit():
            return None
        names.append(key)
    return tuple(dict.fromkeys(names))
