"""Reading what a person pastes: every web link shape round-trips, other servers and tricks are refused, nothing crashes."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from domain.woodpecker.references import (
    MAX_ID,
    PIPELINE_PAGES,
    REPO_PAGES,
    ForeignLink,
    NotAReference,
    Reference,
    StepNotFound,
    WebRoot,
    parse_reference,
    step_by_name,
    step_by_pid,
    web_url,
)

ROOT = WebRoot.parse("https://ci.example.org/woodpecker")

ids = st.integers(min_value=1, max_value=MAX_ID)
labels = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
hosts = st.one_of(
    st.lists(labels, min_size=1, max_size=4).map(".".join),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: a.compressed),
)
prefixes = st.lists(st.from_regex(r"[A-Za-z0-9._~-]{1,12}", fullmatch=True), max_size=3).filter(
    lambda p: not any(s in (".", "..") for s in p)
)
names = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}", fullmatch=True).filter(
    lambda s: s not in (".", "..")
)


# Made once, not in every draw (a strategy new to hypothesis is validated where it is drawn).
schemes = st.sampled_from(["http", "https"])
ports = st.one_of(st.none(), st.integers(min_value=1, max_value=65535))
maybe_ids = st.one_of(st.none(), ids)


@st.composite
def roots(draw: st.DrawFn) -> WebRoot:
    scheme = draw(schemes)
    host = draw(hosts)
    port = draw(ports)
    shown = f"[{host}]" if ":" in host else host
    text = f"{scheme}://{shown}{'' if port is None else f':{port}'}" + "".join(
        f"/{p}" for p in draw(prefixes)
    )
    return WebRoot.parse(text)


ROOTS = roots()


def _decorated(draw: st.DrawFn, url: str) -> str:
    """The same link as a person may paste it: a trailing slash, a query, a fragment, another case of
    scheme and host, the scheme's default port spelled out."""
    scheme, rest = url.split("://", 1)
    authority, _, path = rest.partition("/")
    if draw(st.booleans()):
        scheme = scheme.upper()
    if draw(st.booleans()) and not authority.startswith("["):
        authority = authority.upper()
    if draw(st.booleans()) and ":" not in authority.rsplit("]", 1)[-1]:
        authority += {"HTTP": ":80", "HTTPS": ":443"}[scheme.upper()]
    text = f"{scheme}://{authority}/{path}"
    if draw(st.booleans()):
        text += "/"
    if draw(st.booleans()):
        text += "?" + draw(st.from_regex(r"[a-z]{1,5}=[a-z0-9%/.]{0,8}", fullmatch=True))
    if draw(st.booleans()):
        text += "#" + draw(st.from_regex(r"[A-Za-z0-9/?.]{0,8}", fullmatch=True))
    return text


@given(root=roots(), repo_id=ids, number=maybe_ids, pid=maybe_ids, data=st.data())
def test_every_link_the_web_ui_writes_reads_back_as_its_ids(
    root: WebRoot, repo_id: int, number: int | None, pid: int | None, data: st.DataObject
) -> None:
    pid = pid if number is not None else None
    url = web_url(root, repo_id, number, pid)
    assert parse_reference(url, root) == Reference("url", repo_id=repo_id, number=number, pid=pid)
    assert parse_reference(_decorated(data.draw, url), root) == parse_reference(url, root)
    if number is not None and pid is None:
        page = data.draw(st.sampled_from(sorted(PIPELINE_PAGES)))
        assert parse_reference(f"{url}/{page}", root) == Reference("url", repo_id=repo_id, number=number)
    if number is None:
        page = data.draw(st.sampled_from(sorted(REPO_PAGES)))
        assert parse_reference(f"{url}/{page}", root) == Reference("url", repo_id=repo_id)


@given(root=roots(), owner=names, name=names, number=ids, pid=ids)
def test_the_older_owner_name_links_read_back_as_the_full_name(
    root: WebRoot, owner: str, name: str, number: int, pid: int
) -> None:
    full = f"{owner}/{name}"
    base = root.base
    if owner not in ("repos", "orgs", "org", "admin", "user", "login", "logout", "cli", "api"):
        assert parse_reference(f"{base}/{full}", root) == Reference("url", full_name=full)
        assert parse_reference(f"{base}/{full}/{number}", root) == Reference(
            "url", full_name=full, number=number
        )
        for kind in ("pipeline", "build"):
            step = parse_reference(f"{base}/{full}/{kind}/{number}/{pid}", root)
            assert step == Reference("url", full_name=full, number=number, pid=pid)
    if not owner.isdigit():
        older = parse_reference(f"{base}/repos/{full}/pipeline/{number}", root)
        assert older == Reference("url", full_name=full, number=number)


@given(owner=names, name=names, number=maybe_ids)
def test_owner_name_and_a_number_read_without_any_server(owner: str, name: str, number: int | None) -> None:
    text = f"{owner}/{name}" + ("" if number is None else f"#{number}")
    assert parse_reference(text, None) == Reference("name", full_name=f"{owner}/{name}", number=number)


@st.composite
def other_servers(draw: st.DrawFn) -> tuple[WebRoot, str]:
    """A root, and a link on another origin or outside its path prefix."""
    root, other = draw(ROOTS), draw(ROOTS)
    assume(not root.holds(other))
    return root, web_url(other, draw(ids), draw(maybe_ids))


@given(server=other_servers())
def test_a_link_to_another_server_or_path_is_refused_naming_the_configured_one(
    server: tuple[WebRoot, str],
) -> None:
    root, url = server
    with pytest.raises(ForeignLink) as refused:
        parse_reference(url, root)
    assert root.base in str(refused.value) and "WOODPECKER_URL" in str(refused.value)


@given(text=st.text(max_size=300))
def test_any_text_is_a_reference_or_refused_with_a_reason_never_a_crash(text: str) -> None:
    try:
        parse_reference(text, ROOT)
    except NotAReference as e:
        assert str(e)
    try:
        parse_reference("https://ci.example.org/woodpecker/" + text, ROOT)
    except NotAReference as e:
        assert str(e)


HOSTILE = [
    # Another host hidden behind a user name, a backslash (WHATWG reads it as a slash), or encoding.
    "https://ci.example.org@evil.example/woodpecker/repos/1",
    "https://evil.example@ci.example.org/woodpecker/repos/1",
    "https://evil.example\\@ci.example.org/woodpecker/repos/1",
    "https://ci.example.org\\.evil.example/woodpecker/repos/1",
    "https://ci.example.org%2Fwoodpecker%2Frepos%2F1@evil.example/",
    "https://ci%2Eexample.org/woodpecker/repos/1",
    "https://ci.example.org:443@evil.example/woodpecker/repos/1",
    # Dot segments and their encodings: a browser would go elsewhere.
    "https://ci.example.org/woodpecker/../repos/1",
    "https://ci.example.org/woodpecker/repos/1/../2",
    "https://ci.example.org/woodpecker/%2e%2e/woodpecker/repos/1",
    "https://ci.example.org/woodpecker/repos/%2E/1",
    "https://ci.example.org/other/%2e%2e/woodpecker/repos/1",
    "https://ci.example.org/woodpecker/repos/1%2Fpipeline%2F2",
    "https://ci.example.org/woodpecker/repos/%252e%252e/1",
    "https://ci.example.org/woodpecker//repos/1",
    "https://ci.example.org/woodpecker/repos/1\\..\\2",
    # Ports, hosts and schemes that are not the configured one, or not numbers.
    "https://ci.example.org:8443/woodpecker/repos/1",
    "https://ci.example.org:0443x/woodpecker/repos/1",
    "https://ci.example.org:99999/woodpecker/repos/1",
    "http://ci.example.org/woodpecker/repos/1",
    "javascript://ci.example.org/woodpecker/repos/1",
    "ftp://ci.example.org/woodpecker/repos/1",
    "https://ci.example.org.evil.example/woodpecker/repos/1",
    "https://ci.example.org/woodpeckerx/repos/1",
    "https://ci.example.org/repos/1",
    "https:///woodpecker/repos/1",
    "https://[::1/woodpecker/repos/1",
    # Ids that are not plain ASCII digits, or out of range.
    "https://ci.example.org/woodpecker/repos/\u0661",
    "https://ci.example.org/woodpecker/repos/1_0",
    "https://ci.example.org/woodpecker/repos/0",
    "https://ci.example.org/woodpecker/repos/9007199254740992",
    "https://ci.example.org/woodpecker/repos/-1",
    # Text around the link, and control or invisible characters.
    "see https://ci.example.org/woodpecker/repos/1",
    "https://ci.example.org/woodpecker/repos/1\nhttps://evil.example/",
    "https://ci.example.org/woodpecker/repos/1\u200b",
    "https://ci.example.org/woodpecker/repos\x00/1",
    # Names that are no full name.
    "../etc/passwd",
    "acme/..",
    "acme/web#",
    "acme/web#0",
    "acme",
    "/acme/web",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_or_malformed_reference_is_refused(text: str) -> None:
    with pytest.raises(NotAReference):
        parse_reference(text, ROOT)


def test_internationalised_and_fully_qualified_hosts_are_the_same_server() -> None:
    root = WebRoot.parse("https://xn--bcher-kva.example")
    assert parse_reference("https://BÜCHER.example/repos/3", root).repo_id == 3
    assert parse_reference("https://xn--bcher-kva.example./repos/3", root).repo_id == 3
    with pytest.raises(ForeignLink):
        parse_reference("https://bucher.example/repos/3", root)


def test_a_link_pasted_without_its_scheme_is_read_on_the_configured_host() -> None:
    assert parse_reference("ci.example.org/woodpecker/repos/6/pipeline/2", ROOT) == Reference(
        "url", repo_id=6, number=2
    )


def test_without_a_configured_server_no_link_is_read() -> None:
    with pytest.raises(NotAReference, match="WOODPECKER_URL"):
        parse_reference("https://ci.example.org/repos/1", None)


PIPELINE = {
    "number": 2,
    "workflows": [
        {
            "pid": 1,
            "name": "linux",
            "children": [{"id": 11, "pid": 2, "name": "test"}, {"id": 12, "pid": 3, "name": "lint"}],
        },
        {
            "pid": 4,
            "name": "windows",
            "children": [{"id": 13, "pid": 5, "name": "test"}, {"id": 14, "pid": 6, "name": "Build"}],
        },
    ],
}


def test_a_pid_names_a_step_or_a_workflows_first_step_as_in_the_web_ui() -> None:
    assert step_by_pid(PIPELINE, 3)[1]["id"] == 12
    assert step_by_pid(PIPELINE, 4)[1]["id"] == 13
    with pytest.raises(StepNotFound, match=r"pids 2, 3, 5, 6 ") as missing:
        step_by_pid(PIPELINE, 9)
    assert "linux" not in str(missing.value)  # names are data: a pushed name never reaches the sentence
    assert [(s["workflow"], s["name"], s["pid"]) for s in missing.value.steps][:2] == [
        ("linux", "test", 2),
        ("linux", "lint", 3),
    ]


def test_a_step_name_must_be_unique_or_qualified_by_its_workflow() -> None:
    assert step_by_name(PIPELINE, "lint")[1]["id"] == 12
    assert step_by_name(PIPELINE, "windows/test")[1]["id"] == 13
    assert step_by_name(PIPELINE, "build")[1]["id"] == 14
    assert step_by_name(PIPELINE, "6")[1]["id"] == 14
    with pytest.raises(
        StepNotFound, match="2 steps named as the step argument says, with the pids 2, 5;"
    ) as both:
        step_by_name(PIPELINE, "test")
    assert [f"{s['workflow']}/{s['name']}" for s in both.value.steps] == ["linux/test", "windows/test"]
    with pytest.raises(StepNotFound, match="no step named as the step argument says") as missing:
        step_by_name(PIPELINE, "deploy")
    assert "deploy" not in str(missing.value)


def test_a_step_error_lists_at_most_30_steps_by_pid_and_says_when_there_are_none() -> None:
    many = {
        "number": 5,
        "workflows": [
            {"pid": 1, "name": "w", "children": [{"id": i, "pid": i, "name": f"s{i}"} for i in range(2, 40)]}
        ],
    }
    with pytest.raises(StepNotFound, match=r"pids 2, 3, .*, 31, … \(") as listed:
        step_by_name(many, "deploy")
    assert len(listed.value.steps) == 30
    with pytest.raises(
        StepNotFound, match=r"^Pipeline 6 has no step with pid 2; it has no steps yet\.$"
    ) as none:
        step_by_pid({"number": 6, "workflows": None}, 2)
    assert none.value.steps == []
