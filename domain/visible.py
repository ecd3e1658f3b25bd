"""Invisible and direction-changing characters made visible: the one sanitiser for untrusted text.

Text that whoever can push wrote (step names, commit messages, logs, configs) may hold characters
a person does not see but a model reads: Unicode tag characters (U+E0000–E007F, which spell out
ASCII invisibly), bidi embeddings, overrides and isolates (U+202A–202E, U+2066–2069, and the marks
U+200E, U+200F, U+061C), zero-width characters (U+200B–200D, U+2060, U+FEFF), variation selectors
(which can carry hidden bytes), fillers that render as nothing. They are escaped, never dropped,
so the data stays checkable (docs/adr/0045-invisible-characters-are-escaped-and-names-stay-in-data.md):

- in plain text (a log line, a summary, an error), `escape` writes each as `\\u{XXXX}` (upper-case
  hex, at least four digits) and a backslash that would start such an escape as `\\u{5C}`, so
  `unescape(escape(t)) == t` for every `t`;
- inside JSON, `json_escape` writes each as JSON's own `\\uXXXX` (a surrogate pair above U+FFFF),
  which a JSON reader decodes back to the very string.

`HIDDEN` is a fixed table, not a lookup in the running Python's Unicode database, so the output
is the same on every interpreter: the union of Unicode's Default_Ignorable_Code_Point property, the
format characters (category Cf, as of Unicode 15.1), the surrogates (a lone one cannot even be
encoded) and the C1 controls with DEL (which JSON leaves raw). Line and paragraph separators are
not in it: they are line breaks, which the renderer splits on or escapes itself.
"""

import re

# (first, last) code points, inclusive, in order.
HIDDEN: tuple[tuple[int, int], ...] = (
    (0x007F, 0x009F),  # DEL and the C1 controls
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605),  # Arabic number signs
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated format characters
    (0x3164, 0x3164),  # Hangul filler
    (0xD800, 0xDFFF),  # surrogates
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte order mark)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFFB),  # unassigned specials, interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE0FFF),  # tag characters, variation selectors 17–256, reserved default ignorables
)

_CLASS = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in HIDDEN)
_HIDDEN = re.compile(f"[{_CLASS}]")
# A hidden character, or a backslash that would read as the start of an escape.
_TO_ESCAPE = re.compile(f"[{_CLASS}]|\\\\(?=u\\{{)")
_ESCAPED = re.compile(r"\\u\{([0-9A-F]{4,6})\}")


def is_hidden(char: str) -> bool:
    """Whether `char` is one the sanitiser escapes."""
    return _HIDDEN.fullmatch(char) is not None


def has_hidden(text: str) -> bool:
    """Whether `text` holds any character the sanitiser escapes."""
    return _HIDDEN.search(text) is not None


def _plain(found: re.Match[str]) -> str:
    return f"\\u{{{ord(found.group()):04X}}}"


def escape(text: str) -> str:
    """`text` with every hidden character written `\\u{XXXX}`, and a backslash before `u{` as `\\u{5C}`."""
    return _TO_ESCAPE.sub(_plain, text) if _TO_ESCAPE.search(text) else text


def unescape(text: str) -> str:
    """What `escape` was given: the inverse of `escape` on its outputs."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def _json(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_escape(text: str) -> str:
    """JSON text (as `json.dumps` wrote it) with every hidden character as JSON's `\\uXXXX` escape.

    Only JSON strings can hold such characters, so the result is the same JSON value."""
    return _HIDDEN.sub(_json, text) if _HIDDEN.search(text) else text
