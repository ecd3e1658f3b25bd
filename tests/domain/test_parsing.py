"""The one parser each for keys, URLs and token shapes, against hostile text: whitespace, unicode,
user info, percent-encoding, schemes and empty parts. Each reads what it must, refuses the rest
with its own words, and never echoes the value."""

import base64
import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from domain.config import ConfigError
from domain.parsing.keys import MIN_KEY_BYTES, decode_key, parse_keys
from domain.parsing.tokens import b64token, bearer_of, token_shaped
from domain.parsing.urls import (
    BadUrl,
    host_name,
    is_loopback_host,
    public_url,
    split_url,
    woodpecker_root,
)
from domain.woodpecker.references import WebRoot

CANARY = "zq7canary"
# Text a hostile or careless hand may give: any unicode, and the pieces URLs and keys are made of.
PIECES = st.sampled_from(
    [" ", "\t", "\n", "\x00", "\x7f", "\u00a0", "\u200b", "\u3000", "é", "ü", "%", "%2F", "%40", "%2e",
     "@", ":", "/", "//", "?", "#", "[", "]", "\\", ",", "=", "+", "-", "_", ".", "..", "api", "http",
     "https", "://", "ftp", "localhost", "127.0.0.1", "::1", "ci.example.org", CANARY]
)  # fmt: skip
HOSTILE = st.one_of(st.text(max_size=40), st.lists(PIECES, max_size=12).map("".join))


# -------------------------------------------------------------------------------------- keys

KEY_ERROR = re.compile(
    r"(NAME entry \d+ is (not base64|not exactly \d+ bytes|shorter than 32 bytes); )+"
    r"generate a key with: openssl rand -base64 32"
)


# Made once, not in every draw (a strategy new to hypothesis is validated where it is drawn).
_BEFORE_KEY = st.sampled_from(["", " ", "\t"])
_AFTER_KEY = st.sampled_from(["", " ", "\n"])
_BLANK_ENTRIES = st.sampled_from(["", " ", "\u3000"])


@st.composite
def key_lists(draw: st.DrawFn) -> tuple[list[bytes], str]:
    """Keys and one way to write them: either alphabet, padded or not, spaces around, blank entries."""
    keys = draw(st.lists(st.binary(min_size=MIN_KEY_BYTES, max_size=64), max_size=4))
    written = []
    for key in keys:
        text = (base64.urlsafe_b64encode if draw(st.booleans()) else base64.b64encode)(key).decode()
        if draw(st.booleans()):
            text = text.rstrip("=")
        written.append(draw(_BEFORE_KEY) + text + draw(_AFTER_KEY))
        if draw(st.booleans()):
            written.append(draw(_BLANK_ENTRIES))
    return keys, ",".join(written)


@given(key_lists())
def test_keys_written_in_any_base64_spelling_read_back_in_order(case: tuple[list[bytes], str]) -> None:
    keys, raw = case
    assert parse_keys(raw, "NAME") == tuple(keys)


@given(HOSTILE)
def test_any_text_gives_long_enough_keys_or_a_refusal_that_names_only_positions(raw: str) -> None:
    try:
        keys = parse_keys(raw, "NAME")
    except ConfigError as e:
        assert KEY_ERROR.fullmatch(str(e)), str(e)
    else:
        assert all(len(k) >= MIN_KEY_BYTES for k in keys)


@given(st.binary(min_size=1, max_size=64))
def test_a_key_of_another_size_is_refused_where_one_size_is_required(key: bytes) -> None:
    assume(len(key) != 32)
    with pytest.raises(ConfigError, match="entry 1 is not exactly 32 bytes|entry 1 is shorter"):
        parse_keys(base64.b64encode(key).decode(), "NAME", exact=32)


@given(HOSTILE)
def test_only_base64_text_decodes(raw: str) -> None:
    key = decode_key(raw)
    if key is not None:
        assert re.fullmatch(r"[A-Za-z0-9+/_=-]*", raw.strip())


# ------------------------------------------------------------------------------------ tokens


@given(HOSTILE)
def test_a_token_is_printable_ascii_without_spaces(value: str) -> None:
    assert token_shaped(value) == all(33 <= ord(c) <= 126 for c in value)
    if b64token(value):
        assert token_shaped(value) and value


@given(
    st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60),
    st.sampled_from(["Bearer", "bearer", "BEARER", "bEaReR"]),
    st.sampled_from(["", " ", "  ", "\t"]),
)
def test_the_bearer_header_yields_its_token_in_any_case_with_spaces_around(
    token: str, scheme: str, pad: str
) -> None:
    assert bearer_of([f"{scheme} {pad}{token}{pad}"]) == token


@given(st.lists(HOSTILE, max_size=3))
def test_a_bearer_is_read_only_from_exactly_one_bearer_header_and_is_never_blank(values: list[str]) -> None:
    token = bearer_of(values)
    if token is not None:
        assert len(values) == 1 and values[0].lower().startswith("bearer ")
        assert token == token.strip() and token


@pytest.mark.parametrize(
    "values",
    [[], ["Bearer"], ["Bearer "], ["Bearer  \t"], ["Basic abc"], ["Bearerabc"], ["Bearer a", "Bearer a"]],
)
def test_no_token_comes_out_of_a_missing_empty_other_or_doubled_header(values: list[str]) -> None:
    assert bearer_of(values) is None


# -------------------------------------------------------------------------------------- URLs

labels = st.from_regex(r"[a-z0-9_](?:[a-z0-9_-]{0,10}[a-z0-9_])?", fullmatch=True)
hosts = st.one_of(
    st.lists(labels, min_size=1, max_size=4).map(".".join),
    st.sampled_from(["bücher.example", "例え.テスト", "localhost"]),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a.compressed}]"),
)
prefixes = st.lists(st.from_regex(r"[A-Za-z0-9_~-]{1,12}", fullmatch=True), max_size=3)


_WRITTEN_SCHEMES = st.sampled_from(["http", "https", "HTTPS", "Http"])
_WRITTEN_PORTS = st.one_of(st.just(""), st.integers(min_value=0, max_value=65535).map(lambda p: f":{p}"))
_WRITTEN_TAILS = st.sampled_from(["", "/", "//", "/api", "/api/", "//api//"])


@st.composite
def written_roots(draw: st.DrawFn) -> str:
    """A server root as an operator may write it: any case, a port, a path prefix, /api, slashes."""
    scheme = draw(_WRITTEN_SCHEMES)
    host = draw(hosts)
    if draw(st.booleans()):
        host = host.upper()
    port = draw(_WRITTEN_PORTS)
    path = "".join(f"/{p}" for p in draw(prefixes))
    tail = draw(_WRITTEN_TAILS)
    return f"{scheme}://{host}{port}{path}{tail}"


@given(written_roots())
@example("http://bücher.example:80")  # found by chance: the root kept :80 where the link parser drops it
def test_a_woodpecker_root_is_trimmed_once_and_is_the_root_pasted_links_are_read_against(raw: str) -> None:
    root = woodpecker_root(raw)
    assert woodpecker_root(root.url) == root
    assert not root.url.endswith(("/", "/api"))
    # The links of this server are read against the same root: the two parsers agree.
    web = WebRoot.parse(root.url)
    assert web.base.lower() == root.url.lower()


@given(HOSTILE)
def test_any_text_is_a_plain_root_or_a_refusal_naming_the_variable_never_the_value(raw: str) -> None:
    try:
        root = woodpecker_root(raw)
    except ConfigError as e:
        assert str(e).startswith("WOODPECKER_URL ")
        assert CANARY not in str(e)
    else:
        url = split_url(root.url)
        assert url.scheme in ("http", "https")
        assert not url.userinfo and not url.query and not url.fragment
        assert url.host == url.host.lower() and url.host.isascii()


@given(
    st.sampled_from(["user", "user:pw", CANARY, f"{CANARY}:", ":x", "a%40b"]),
    st.sampled_from(["ci.example.org", "127.0.0.1:8000", "[::1]"]),
)
def test_a_user_or_password_in_the_root_is_refused_pointing_at_the_token(user: str, host: str) -> None:
    with pytest.raises(ConfigError) as refused:
        woodpecker_root(f"https://{user}@{host}/")
    assert "WOODPECKER_TOKEN" in str(refused.value) and CANARY not in str(refused.value)


@given(HOSTILE, st.sampled_from([" ", "\t", "\n", "\x00", "\x7f", "\x85", "\u2028", "\u3000"]))
def test_whitespace_or_a_control_character_anywhere_is_no_url(raw: str, bad: str) -> None:
    for text in (bad + raw, raw + bad, raw[:3] + bad + raw[3:]):
        with pytest.raises(BadUrl) as refused:
            split_url(text)
        assert refused.value.problem == "spaces"


@given(HOSTILE)
def test_split_url_reads_any_text_or_refuses_it_as_no_url(raw: str) -> None:
    try:
        url = split_url(raw)
    except BadUrl as e:
        assert e.problem in ("spaces", "unparsable")
    else:
        assert url.scheme == url.scheme.lower()
        assert url.port is None or 0 <= url.port <= 65535
        assert url.userinfo == ("@" in url.netloc)


@given(HOSTILE)
def test_a_host_name_is_one_ascii_lower_case_spelling_or_refused(raw: str) -> None:
    try:
        host = host_name(raw)
    except BadUrl as e:
        assert e.problem in ("idna", "host")
    else:
        assert host.isascii() and host == host.lower() and host
        assert "%" not in host and not host.endswith(".")
        assert host_name(host) == host


@pytest.mark.parametrize("host", ["ci%2Eexample.org", "a..b", ".", "", "-a", "a b", "ci.example.org%00"])
def test_encoded_or_empty_host_labels_are_refused(host: str) -> None:
    with pytest.raises(BadUrl):
        host_name(host)


@given(HOSTILE)
def test_a_public_url_is_kept_exactly_as_given_or_refused_by_name(raw: str) -> None:
    try:
        kept = public_url("NAME", raw, "e.g. https://mcp.example.org/mcp")
    except ConfigError as e:
        assert str(e).startswith("NAME ") and CANARY not in str(e)
    else:
        assert kept == raw
        url = split_url(raw)
        assert url.scheme == "https" or (url.scheme == "http" and is_loopback_host(url.host))
        assert url.host and not url.userinfo and not url.query and not url.fragment


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("localhost", True), ("LOCALHOST", True), ("a.localhost", True), ("127.0.0.9", True), ("[::1]", True),
     ("::1", True), ("localhost.example", False), ("10.0.0.1", False), ("", False), ("[::2]", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback
