"""Whether a result carries a token this server sent to Woodpecker: as sent, or in the encodings a
system that echoes a request writes it in (docs/adr/0047).

A debugging proxy, a misconfigured gateway or a hostile upstream can answer 2xx with the request's
Authorization header in the body. The use case looks at every result (structured data, text,
links) before it leaves and refuses one that carries the token. What counts as carrying it:

- the token as sent, anywhere in any string;
- after undoing JSON string escapes (``\\u0061``, ``\\/``), as a body that embeds a JSON document
  in a string writes it, and percent-encoding (any mix of encoded and plain characters), as a URL
  or form echo writes it: up to three layers of each, in any order;
- base64 of the token at any alignment, in the standard and URL-safe alphabets, line breaks
  ignored: a base64 dump of the request, or ``Basic base64(user:token)``.

What no check can catch is a token deliberately transformed (split, reversed, encrypted): an
upstream that does that holds the token already, since it was sent to it. Tokens shorter than
`MIN_TOKEN` are not looked for: such a value would match ordinary text, and it is no secret.
"""

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

MIN_TOKEN = 8
_ROUNDS = 3  # layers undone: a value encoded twice (a URL in a URL, JSON in JSON), and one more
_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([\\/\"bfnrt]))")
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# Base64 characters of the first group that still depend on the bytes before the token, by how
# many bytes of that group come before it.
_LEAD = (0, 2, 3)


def _base64_forms(token: str) -> Iterator[str]:
    """The part of base64(prefix + token + suffix) that depends only on the token, for each of the
    three alignments, in both alphabets."""
    raw = token.encode("utf-8")
    for before in range(3):
        encoded = base64.b64encode(b"\0" * before + raw).rstrip(b"=").decode("ascii")
        whole, rest = divmod(before + len(raw), 3)
        # A partial last group: its first `rest` characters depend only on its bytes.
        form = encoded[_LEAD[before] : whole * 4 + rest]
        if len(form) >= MIN_TOKEN:
            yield form
            yield form.replace("+", "-").replace("/", "_")


def forms(token: str) -> frozenset[str]:
    """What is searched for: the token itself, and its base64 forms (empty for a short token)."""
    if len(token) < MIN_TOKEN:
        return frozenset()
    return frozenset({token, *_base64_forms(token)})


def _unescape_json(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code, simple = match.group(1), match.group(2)
        if code is not None:
            return chr(int(code, 16))
        return _SIMPLE.get(simple, simple)

    return _JSON_ESCAPE.sub(one, text)


def _views(text: str) -> Iterator[str]:
    """The text, and the text with each layer of encoding undone in turn (every view that differs)."""
    yield text
    seen = {text}
    current = text
    for _ in range(_ROUNDS):
        for undo, mark in ((_unescape_json, "\\"), (_unquote, "%")):
            if mark not in current:
                continue
            undone = undo(current)
            if undone not in seen:
                seen.add(undone)
                yield undone
                current = undone


def _unquote(text: str) -> str:
    return unquote(text, errors="surrogateescape")


def carries(text: str, tokens: Iterable[str]) -> bool:
    """Whether `text` carries any of `tokens` as sent or encoded (see the module docstring)."""
    searched = [(token, found) for token in tokens if (found := forms(token))]
    if not searched or not text:
        return False
    for view in _views(text):
        compact = "".join(view.split())
        # A token holds no space, so a line break inside one (a wrapped dump) is not part of it.
        if any(form in compact for _, found in searched for form in found):
            return True
    return False


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, keys included; other scalars as their text."""
    found: list[str] = []
    _collect(value, found)
    yield from found


def _collect(value: Any, out: list[str]) -> None:
    """`strings_of` into a list, depth first: the exact JSON types first (every answer is made of
    them), then the same checks as any mapping, sequence or set; this runs over every answer twice
    per call, so it avoids a generator per level and the abstract classes' checks where it can."""
    kind = type(value)
    if kind is str:
        out.append(value)
    elif kind is dict:
        for key, item in value.items():
            out.append(key if type(key) is str else str(key))
            _collect(item, out)
    elif kind is list or kind is tuple:
        for item in value:
            _collect(item, out)
    elif kind is int or kind is bool or kind is float:
        out.append(str(value))
    elif isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            out.append(str(key))
            _collect(item, out)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            _collect(item, out)
    elif value is not None:
        out.append(str(value))


def value_carries(value: Any, tokens: Iterable[str]) -> bool:
    """Whether any string in `value` (a parsed answer or a result's data) carries one of `tokens`."""
    found: list[str] = []
    _collect(value, found)
    # One line per string: a token is printable ASCII without spaces, so no match spans two strings.
    return carries("\n".join(found), tokens)
