"""Woodpecker's text made safe to show: no terminal escapes or control characters, one-line values cut short."""

import re
from collections.abc import Mapping
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
    that is missing or not a scalar reads "?" rather than failing."""
    fields = _Fields()
    for source in sources:
        for k, v in source.items():
            if isinstance(v, str | int | float | bool) or v is None:
                fields[k] = short(v)
    return template.format_map(fields)
