"""The token in an answer, as sent or in the encodings an echoing system writes it in, is found wherever it is (docs/adr/0047)."""

import base64
import json
import textwrap
from collections.abc import Callable, Mapping
from types import MappingProxyType
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from domain.woodpecker.echoes import MIN_TOKEN, carries, forms, strings_of, value_carries

# What a token may hold (domain.parsing.tokens.token_shaped): printable ASCII without spaces.
TOKENS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=MIN_TOKEN, max_size=80)
AROUND = st.text(max_size=40)


def _every_char_escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _every_byte_percent(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode()


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode()


# How an echo can write "before + token + after": each takes the three and returns the text.
ENCODINGS: dict[str, Callable[[str, str, str], str]] = {
    "raw": lambda b, t, a: b + t + a,
    "json string": lambda b, t, a: json.dumps(b + t + a),
    "json, every character escaped": lambda b, t, a: b + _every_char_escaped(t) + a,
    "json inside json": lambda b, t, a: json.dumps(json.dumps({"Authorization": f"Bearer {t}"})),
    "percent-encoded": lambda b, t, a: quote(b + t + a, safe=""),
    "percent-encoded twice": lambda b, t, a: quote(quote(b + t + a, safe=""), safe=""),
    "every byte percent-encoded": lambda b, t, a: b + _every_byte_percent(t) + a,
    "base64": lambda b, t, a: _b64(b + t + a),
    "base64url": lambda b, t, a: _b64url(b + t + a),
    "base64 wrapped at 76": lambda b, t, a: "\n".join(textwrap.wrap(_b64(b + t + a), 76)),
    "basic auth": lambda b, t, a: "Basic " + _b64(f"{b.replace(':', '')}:{t}"),
}
SAFE_AROUND = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@given(token=TOKENS, before=SAFE_AROUND, after=SAFE_AROUND, encoding=st.sampled_from(sorted(ENCODINGS)))
def test_the_token_is_found_whatever_surrounds_it_and_however_an_echo_encodes_it(
    token: str, before: str, after: str, encoding: str
) -> None:
    echoed = ENCODINGS[encoding](before, token, after)
    assert carries(echoed, [token]), (encoding, echoed)


@given(token=TOKENS, before=SAFE_AROUND, after=SAFE_AROUND, depth=st.integers(0, 4), key=st.text(max_size=5))
def test_the_token_is_found_at_any_depth_of_an_answer_and_in_its_keys(
    token: str, before: str, after: str, depth: int, key: str
) -> None:
    value: object = before + token + after
    for level in range(depth):
        value = [value] if level % 2 else {key: value}
    assert value_carries(value, [token])
    assert value_carries({before + token + after: 1}, [token])


@given(token=TOKENS, text=AROUND)
def test_a_text_from_characters_no_form_of_the_token_uses_carries_none(token: str, text: str) -> None:
    used = set(token).union(*(set(f) for f in forms(token)), "%\\")
    clean = "".join(c for c in text if c not in used)
    assert not carries(clean, [token])


def test_a_token_too_short_to_be_a_secret_is_not_looked_for() -> None:
    short = "x" * (MIN_TOKEN - 1)
    assert forms(short) == frozenset()
    assert not carries(f"Bearer {short}", [short])
    assert not carries("anything", [])


def _reference_strings(value: object) -> list[str]:
    """strings_of as first written (a generator per level), the order and texts it must keep."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for key, item in value.items() for s in (str(key), *_reference_strings(item))]
    if isinstance(value, list | tuple | set | frozenset):
        return [s for item in value for s in _reference_strings(item)]
    return [] if value is None else [str(value)]


class _Str(str):
    pass


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8), st.builds(_Str)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.frozensets(st.one_of(st.integers(), st.text(max_size=4)), max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(MappingProxyType),
    ),
    max_leaves=30,
)


@given(value=VALUES)
def test_every_string_of_an_answer_is_seen_in_order_whatever_its_types(value: object) -> None:
    assert list(strings_of(value)) == _reference_strings(value)
