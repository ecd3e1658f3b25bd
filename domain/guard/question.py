"""Building a question for a person: fixed sentences with ids, caller values only on labelled lines."""

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_LIMIT = 80
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Question:
    """The dialog text. Deterministic: the same call always shows the same question."""

    message: str


def flatten(value: object, limit: int = DEFAULT_LIMIT) -> str:
    """One line of at most `limit` characters (plus "…" when cut).

    Control, format and separator characters (newlines, bidi overrides, zero-width marks)
    become spaces and runs of whitespace collapse, so a value can neither start a line of
    its own nor hide part of itself.
    """
    text = value if isinstance(value, str) else str(value)
    cleaned = "".join(" " if unicodedata.category(ch)[0] in ("C", "Z") or ch.isspace() else ch for ch in text)
    line = " ".join(cleaned.split())
    if len(line) > limit:
        return line[:limit].rstrip() + ELLIPSIS
    return line


def labelled(label: str, value: object, limit: int = DEFAULT_LIMIT) -> str:
    """`label: value`, the value flattened and cut short. The only way a caller value enters a question."""
    return f"{label}: {flatten(value, limit)}"


def build(what: str, cost: Iterable[str], lines: Iterable[str] = ()) -> Question:
    """What will happen (with its labelled lines under it), a blank line, what it costs."""
    head = "\n".join([what, *lines])
    return Question(message=f"{head}\n\n{' '.join(cost)}")
