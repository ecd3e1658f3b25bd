"""The incremental log reader: the same entries whatever the chunking, and a named failure for anything else."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.woodpecker_httpx.log_stream import LogArrayReader, LooksLikeHtml, MalformedLog

ENTRY = st.fixed_dictionaries(
    {
        "id": st.integers(0, 10**9),
        "line": st.integers(0, 10**6),
        "data": st.text(
            alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", max_size=30
        ),
        "type": st.integers(0, 4),
    },
    optional={
        "note": st.text(max_size=8),
        "nested": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    },
)


def read_all(body: bytes, cuts: list[int]) -> list[dict[str, object]]:
    reader = LogArrayReader()
    out: list[dict[str, object]] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += reader.feed(body[start:cut])
        start = cut
    out += reader.feed(body[start:])
    out += reader.close()
    return out


@given(st.lists(ENTRY, max_size=12), st.data(), st.sampled_from(["", " ", "\n  "]))
def test_the_reader_returns_every_entry_whatever_the_chunk_boundaries(
    entries: list[dict[str, object]], data: st.DataObject, space: str
) -> None:
    body = (
        space + "[" + space + ("," + space).join(json.dumps(e) for e in entries) + space + "]" + space
    ).encode()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10))
    assert read_all(body, cuts) == entries


@given(st.data())
def test_non_ascii_text_split_inside_a_character_still_reads(data: st.DataObject) -> None:
    entries = [{"line": 0, "data": "grüße ✓"}, {"line": 1, "data": "日本"}]
    body = json.dumps(entries, ensure_ascii=False).encode()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=6))
    assert read_all(body, cuts) == entries


@pytest.mark.parametrize("body", [b"null", b" null\n", b"[]", b"[ ]", b""])
def test_null_an_empty_array_and_an_empty_body_read_as_no_entries(body: bytes) -> None:
    assert read_all(body, [1, 2]) == []


MALFORMED = [
    b'{"line": 1}',
    b'[{"line": 1} {"line": 2}]',
    b'[{"line": 1},]',
    b"[1, 2]",
    b'[{"line": 1}',
    b'[{"line": 1}] trailing',
    b'[{"line": 1, "data": "abc}',
    b"nul",
    b"[\xff]",
]


@pytest.mark.parametrize("body", MALFORMED)
def test_anything_but_an_array_of_objects_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedLog):
        read_all(body, [3])


def test_an_html_page_is_recognised_as_such() -> None:
    with pytest.raises(LooksLikeHtml):
        read_all(b"<!DOCTYPE html><html></html>", [])


def test_an_entry_that_never_closes_cannot_grow_the_buffer_without_limit() -> None:
    reader = LogArrayReader(max_pending=1000)
    reader.feed(b'[{"line": 1, "data": "')
    with pytest.raises(MalformedLog):
        for _ in range(100):
            reader.feed(b"A" * 100 + b"}")  # a brace, but the string never ends
