"""The same-origin rule for loopback Hosts: exact scheme, name and port, nothing normalised (docs/adr/0050)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.parsing.urls import is_same_loopback_origin

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "127.1.2.3", "[::1]")
ports = st.integers(min_value=1, max_value=65535)


@pytest.mark.parametrize(
    ("origin", "scheme", "host"),
    [
        ("http://localhost:8080", "http", "localhost:8080"),
        ("http://LOCALHOST:8080", "http", "LocalHost:8080"),
        ("http://127.0.0.1:3000", "http", "127.0.0.1:3000"),
        ("http://[::1]:3000", "http", "[::1]:3000"),
        ("https://localhost:8443", "https", "localhost:8443"),
        ("http://localhost", "http", "localhost"),
    ],
)
def test_the_requests_own_loopback_origin_is_the_same_origin(origin: str, scheme: str, host: str) -> None:
    assert is_same_loopback_origin(origin, scheme=scheme, host=host)


@pytest.mark.parametrize(
    ("origin", "scheme", "host"),
    [
        ("http://localhost:8081", "http", "localhost:8080"),  # another port: another program
        ("http://localhost", "http", "localhost:8080"),
        ("http://localhost:80", "http", "localhost"),  # no default port is filled in
        ("https://localhost:8080", "http", "localhost:8080"),  # another scheme
        ("http://localhost:8080", "https", "localhost:8080"),
        ("ws://localhost:8080", "ws", "localhost:8080"),
        ("http://localhost:8080/", "http", "localhost:8080"),
        ("http://localhost.:8080", "http", "localhost.:8080"),  # a trailing dot is another name
        ("http://localhost:8080", "http", "localhost.:8080"),
        ("http://localhost.evil.example:8080", "http", "localhost.evil.example:8080"),
        ("http://evil.example:8080", "http", "evil.example:8080"),
        ("http://app.localhost:8080", "http", "app.localhost:8080"),  # some resolvers ask DNS
        ("http://127.0.0.1:8080", "http", "localhost:8080"),
        ("http://[127.0.0.1]:8080", "http", "[127.0.0.1]:8080"),
        ("http://[localhost]:8080", "http", "[localhost]:8080"),
        ("http://[::2]:8080", "http", "[::2]:8080"),
        ("http://::1:8080", "http", "::1:8080"),  # IPv6 only ever in brackets
        ("http://[::1]5", "http", "[::1]5"),
        ("http://localhost:", "http", "localhost:"),
        ("http://localhost:8080 ", "http", "localhost:8080 "),
        ("null", "http", "localhost:8080"),
        ("", "http", "localhost:8080"),
    ],
)
def test_anything_else_is_not(origin: str, scheme: str, host: str) -> None:
    assert not is_same_loopback_origin(origin, scheme=scheme, host=host)


@given(name=st.sampled_from(LOOPBACK_NAMES), port=ports, scheme=st.sampled_from(("http", "https")))
def test_every_loopback_host_and_port_is_its_own_origin(name: str, port: int, scheme: str) -> None:
    assert is_same_loopback_origin(f"{scheme}://{name}:{port}", scheme=scheme, host=f"{name}:{port}")


@given(
    name=st.sampled_from(LOOPBACK_NAMES),
    port=ports,
    other=ports,
    suffix=st.sampled_from(("", ".", "/", ".evil.example")),
)
def test_a_page_on_another_port_or_name_is_never_the_same_origin(
    name: str, port: int, other: int, suffix: str
) -> None:
    if other == port and suffix == "":
        other = port % 65535 + 1
    origin = f"http://{name}{suffix}:{other}" if suffix != "/" else f"http://{name}:{other}/"
    assert not is_same_loopback_origin(origin, scheme="http", host=f"{name}:{port}")


@given(host=st.text(max_size=30), origin=st.text(max_size=40))
def test_it_never_admits_an_origin_that_is_not_exactly_http_and_the_host(host: str, origin: str) -> None:
    if is_same_loopback_origin(origin, scheme="http", host=host):
        assert origin.lower() == f"http://{host.lower()}"
