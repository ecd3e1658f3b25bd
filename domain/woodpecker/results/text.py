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
