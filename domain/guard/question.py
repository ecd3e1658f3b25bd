"""Building a question for a person: fixed sentences with ids, caller values only on labelled lines."""

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from domain import visible

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
    its own nor hide part of itself. What is still invisible after that (variation selectors, which
    are combining marks that can spell out hidden bytes, and fillers that render as nothing) is
    escaped by the one sanitiser, `visible.escape` (docs/adr/0045), after the cut so no escape is cut.
    """
    text = value if isinstance(value, str) else str(value)
    cleaned = "".join(" " if unicodedata.category(ch)[0] in ("C", "Z") or ch.isspace() else ch for ch in text)
    line = " ".join(cleaned.split())
    if len(line) > limit:
        return visible.escape(line[:limit].rstrip()) + ELLIPSIS
    return visible.escape(line)


def flatten_url(value: str, limit: int = DEFAULT_LIMIT) -> str:
    """An http(s) URL flattened like any value, but cut only after its scheme and authority: where a
    request goes is shown whole, so `https://github.com.<70 letters>.attacker.example/` cannot read
    as github.com. Anything else is `flatten`ed. (Validation bounds a URL's length.)
    """
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return flatten(value, limit)
    # Where RFC 3986 ends the authority; a backslash (a slash to some parsers) stays inside it, shown.
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    origin = flatten(f"{scheme}://{rest[:end]}", len(value))
    tail = rest[end:]
    if len(origin) + len(tail) <= limit:
        return flatten(value, limit)
    return origin + flatten(tail, max(limit - len(origin), 0)) if tail else origin


def labelled(label: str, value: object, limit: int = DEFAULT_LIMIT) -> str:
    """`label: value`, the value flattened and cut short. The only way a caller value enters a question."""
    return f"{label}: {flatten(value, limit)}"


def labelled_url(label: str, value: object, limit: int = DEFAULT_LIMIT) -> str:
    """`label: url`, cut short but never inside the URL's scheme and authority (see `flatten_url`)."""
    return (
        f"{label}: {flatten_url(value, limit)}" if isinstance(value, str) else labelled(label, value, limit)
    )


def build(what: str, cost: Iterable[str], lines: Iterable[str] = ()) -> Question:
    """What will happen (with its labelled lines under it), a blank line, what it costs."""
    head = "\n".join([what, *lines])
    return Question(message=f"{head}\n\n{' '.join(cost)}")
