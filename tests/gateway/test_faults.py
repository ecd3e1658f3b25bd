"""The gateway against a misbehaving Woodpecker on a real socket: each fault becomes a named error, fast, and the next call works."""

import socket
import ssl
import tracemalloc

import anyio
import pytest

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from ports.woodpecker import (
    BadResponse,
    Conflict,
    Credential,
    Forbidden,
    LogWindowRequest,
    NotConfigured,
    NotFound,
    RedirectRefused,
    Rejected,
    Request,
    ResponseTooLarge,
    ServerError,
    ServesWebUi,
    Unauthorized,
    Unavailable,
    WoodpeckerError,
)
from tests.fakes.sleep import SleepRecorder
from tests.fixtures.gateway import (
    CANARY,
    GatewayFactory,
    ScriptedServer,
    echo_authorization,
    hang_up,
    json_response,
    raw_response,
    repeated,
    stall,
    streamed,
    trickle,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

GET = Request("GET", "/api/user")
POST = Request("POST", "/api/repos/1/pipelines", body={"branch": "main"})
HTML = b"<!DOCTYPE html><html><head><title>Woodpecker</title></head><body>app</body></html>"


def assert_clean(error: BaseException) -> None:
    """A port error, with no httpx type in sight and no token anywhere in its text."""
    assert isinstance(error, WoodpeckerError)
    assert "httpx" not in type(error).__module__
    for text in (str(error), repr(error), str(getattr(error, "detail", ""))):
        assert CANARY not in text
    assert error.__cause__ is None or isinstance(error.__cause__, WoodpeckerError)


async def next_call_works(server: ScriptedServer, gateway: HttpxWoodpeckerGateway) -> None:
    server.then(json_response(200, {"login": "ada"}))
    response = await gateway.send(GET, None)
    assert response.status == 200
    assert response.data == {"login": "ada"}


@pytest.mark.parametrize("status", [500, 502, 503, 504])
@pytest.mark.parametrize("body", [b"", b"internal error: database is locked"])
async def test_a_server_error_becomes_ServerError_after_the_retries_a_read_allows(
    scripted_server: ScriptedServer,
    make_gateway: GatewayFactory,
    sleeps: SleepRecorder,
    status: int,
    body: bytes,
) -> None:
    retried = status in (502, 503, 504)
    gateway = make_gateway(scripted_server.url, retries=2)
    scripted_server.then(
        *(raw_response(status, body, content_type="text/plain") for _ in range(3 if retried else 1))
    )
    with anyio.fail_after(5), pytest.raises(ServerError) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert caught.value.status == status
    assert caught.value.detail == (body.decode() or None)
    assert len(scripted_server.requests) == (3 if retried else 1)
    assert len(sleeps.waits) == (2 if retried else 0)
    await next_call_works(scripted_server, gateway)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
async def test_a_write_is_never_retried(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder, status: int
) -> None:
    gateway = make_gateway(scripted_server.url, retries=3)
    scripted_server.then(raw_response(status, headers=[("Retry-After", "1")]))
    with anyio.fail_after(5), pytest.raises(WoodpeckerError) as caught:
        await gateway.send(POST, None)
    assert_clean(caught.value)
    assert caught.value.status == status
    assert len(scripted_server.requests) == 1
    assert sleeps.waits == []


async def test_a_read_that_fails_once_with_503_succeeds_on_the_retry(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(scripted_server.url, backoff_base=0.5)
    scripted_server.then(raw_response(503), json_response(200, [1, 2]))
    with anyio.fail_after(5):
        response = await gateway.send(Request("GET", "/api/repos/1/pipelines"), None)
    assert response.data == [1, 2]
    assert len(scripted_server.requests) == 2
    assert sleeps.waits == [0.5 * (0.5 + 0.5 / 2)]  # base x 2^0, jittered by the injected 0.5


async def test_429_with_retry_after_is_retried_for_a_get_after_the_asked_wait_capped(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(scripted_server.url, max_retry_after=10.0)
    scripted_server.then(
        raw_response(429, headers=[("Retry-After", "2")]),
        raw_response(429, headers=[("Retry-After", "3600")]),
        json_response(200, {"login": "ada"}),
    )
    with anyio.fail_after(5):
        response = await gateway.send(GET, None)
    assert response.data == {"login": "ada"}
    assert sleeps.waits == [2.0, 10.0]


async def test_the_waits_of_one_read_stop_at_its_budget_so_it_answers_before_a_client_gives_up(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    # Three asked waits of 25 s each (each under the 30 s cap) kept one read from answering for
    # 75 s and more: past the 60 s after which common clients stop waiting, so nobody read the 429.
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(*(raw_response(429, headers=[("Retry-After", "25")]) for _ in range(2)))
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await gateway.send(GET, None)
    assert caught.value.status == 429 and "try again" in str(caught.value)
    assert sum(sleeps.waits) <= 30.0, sleeps.waits
    assert len(scripted_server.requests) == 2
    await next_call_works(scripted_server, gateway)


async def test_429_on_a_post_is_reported_at_once(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(429, headers=[("Retry-After", "2")]))
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await gateway.send(POST, None)
    assert caught.value.status == 429
    assert "try again" in str(caught.value)
    assert sleeps.waits == []
    await next_call_works(scripted_server, gateway)


async def test_a_read_timeout_is_Unavailable_and_bounded_by_the_configured_timeout(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    # The same gateway makes the next call, so its timeout must also leave a loaded CI box room.
    gateway = make_gateway(scripted_server.url, timeout=1.0)
    scripted_server.then(stall())
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "did not answer within 1 s" in str(caught.value)
    assert sleeps.waits == []  # a slow server is not hammered with retries
    await next_call_works(scripted_server, gateway)


async def test_a_body_that_trickles_in_is_cut_off_by_the_overall_deadline(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # Each byte comes well within the read timeout; only the deadline can end this.
    gateway = make_gateway(scripted_server.url, timeout=2.0, deadline=1.0)
    scripted_server.then(trickle(total=1000, every=0.05))
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "did not finish answering within 1 s" in str(caught.value)
    await next_call_works(scripted_server, gateway)


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_connection_refused_is_Unavailable_after_retrying_a_read(
    make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(f"http://127.0.0.1:{closed_port()}", retries=2)
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "WOODPECKER_URL" in str(caught.value)
    assert len(sleeps.waits) == 2
    assert sleeps.waits[1] > sleeps.waits[0]  # the backoff grows


async def test_connection_refused_on_a_write_is_not_retried(
    make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(f"http://127.0.0.1:{closed_port()}", retries=3)
    with anyio.fail_after(5), pytest.raises(Unavailable):
        await gateway.send(POST, None)
    assert sleeps.waits == []


async def test_a_server_that_hangs_up_without_answering_is_retried_for_a_read(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(hang_up(), json_response(200, {"login": "ada"}))
    with anyio.fail_after(5):
        response = await gateway.send(GET, None)
    assert response.data == {"login": "ada"}
    assert len(sleeps.waits) == 1


async def test_a_200_html_page_means_the_url_serves_the_web_ui(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(200, HTML, content_type="text/html; charset=UTF-8"))
    with anyio.fail_after(5), pytest.raises(ServesWebUi) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "set WOODPECKER_URL to the server root, without /api or a web path" in str(caught.value)
    await next_call_works(scripted_server, gateway)


async def test_an_html_page_labelled_as_json_is_still_the_web_ui(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(200, b"\n  " + HTML))
    with anyio.fail_after(5), pytest.raises(ServesWebUi):
        await gateway.send(GET, None)


async def test_an_html_error_page_is_dropped_from_the_error(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(404, HTML * 50, content_type="text/html"))
    with anyio.fail_after(5), pytest.raises(NotFound) as caught:
        await gateway.send(GET, None)
    assert caught.value.detail is None
    assert "<" not in str(caught.value)


async def test_a_long_error_text_is_cut_short(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(
        raw_response(422, b"secret must have at least one event " * 200, content_type="text/plain")
    )
    with anyio.fail_after(5), pytest.raises(Rejected) as caught:
        await gateway.send(POST, None)
    assert caught.value.detail is not None
    assert caught.value.detail.startswith("secret must have at least one event")
    assert len(caught.value.detail) <= 300
    assert caught.value.status == 422


@pytest.mark.parametrize("with_length", [True, False])
async def test_an_oversized_body_is_refused_with_memory_far_below_its_size(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, with_length: bool
) -> None:
    ceiling = 256 * 1024
    chunk, times = b"x" * 65536, 256  # 16 MiB
    gateway = make_gateway(scripted_server.url, max_response_bytes=ceiling)
    scripted_server.then(
        streamed(repeated(chunk, times), content_length=len(chunk) * times if with_length else None)
    )
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with anyio.fail_after(10), pytest.raises(ResponseTooLarge) as caught:
            await gateway.send(GET, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_clean(caught.value)
    assert "narrow the request" in str(caught.value)
    assert peak < len(chunk) * times / 8
    await next_call_works(scripted_server, gateway)


async def test_a_declared_length_over_the_ceiling_is_refused_before_any_of_the_body_arrives(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # The body trickles in for minutes: only a check of Content-Length up front answers at once.
    gateway = make_gateway(scripted_server.url, max_response_bytes=1024, max_log_bytes=4096)
    scripted_server.then(trickle(total=10**9, every=0.05), trickle(total=10**9, every=0.05))
    with anyio.fail_after(5):
        with pytest.raises(ResponseTooLarge):
            await gateway.send(GET, None)
        with pytest.raises(ResponseTooLarge):
            await gateway.step_log("/api/repos/1/logs/2/3", LogWindowRequest(10), None)
    await next_call_works(scripted_server, gateway)


async def test_a_truncated_body_is_BadResponse(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(200, b'{"login": "ad', content_length=1000))
    with anyio.fail_after(5), pytest.raises(BadResponse) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "cut off" in str(caught.value)
    await next_call_works(scripted_server, gateway)


async def test_invalid_json_is_BadResponse(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(200, b'{"login": ada}'))
    with anyio.fail_after(5), pytest.raises(BadResponse) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    await next_call_works(scripted_server, gateway)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_refused_and_the_token_never_reaches_the_other_host(
    scripted_server: ScriptedServer,
    other_server: ScriptedServer,
    make_gateway: GatewayFactory,
    status: int,
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(status, headers=[("Location", f"{other_server.url}/api/user")]))
    with anyio.fail_after(5), pytest.raises(RedirectRefused) as caught:
        await gateway.send(GET, None)
    assert_clean(caught.value)
    assert "set WOODPECKER_URL to the server root that serves the API" in str(caught.value)
    assert other_server.requests == [] and other_server.connections == 0
    assert scripted_server.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    await next_call_works(scripted_server, gateway)


@pytest.mark.parametrize(
    ("status", "error", "hint"),
    [
        (
            401,
            Unauthorized,
            "check WOODPECKER_TOKEN (a personal access token from your Woodpecker user settings)",
        ),
        (403, Forbidden, "call get_current_user"),
        (404, NotFound, "list_repositories with include_inactive=true"),
        (409, Conflict, "conflict"),
        (400, Rejected, "correct the arguments"),
        (422, Rejected, "correct the arguments"),
    ],
)
async def test_client_errors_become_named_errors_with_a_hint(
    scripted_server: ScriptedServer,
    make_gateway: GatewayFactory,
    status: int,
    error: type[WoodpeckerError],
    hint: str,
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(status, b"User not authorized", content_type="text/plain"))
    with anyio.fail_after(5), pytest.raises(error) as caught:
        await gateway.send(Request("GET", "/api/repos/7"), None)
    assert_clean(caught.value)
    assert hint in str(caught.value)
    assert caught.value.status == status
    assert len(scripted_server.requests) == 1


async def test_a_404_at_the_root_says_the_url_is_not_a_woodpecker_root(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # Something else answers at this URL (another web server, a wrong sub-path): no id to check.
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(404), raw_response(404))
    with anyio.fail_after(5), pytest.raises(NotFound) as caught:
        await gateway.send(Request("GET", "/version"), None)
    assert_clean(caught.value)
    assert "not as the root of a Woodpecker server" in str(caught.value)
    with anyio.fail_after(5), pytest.raises(NotFound) as caught:
        await gateway.send(Request("GET", "/api/agents/9"), None)
    assert "root" not in str(caught.value)


async def test_a_401_names_the_token_that_was_refused(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    own = make_gateway(scripted_server.url)  # stdio and shared-token HTTP: WOODPECKER_TOKEN
    per_client = make_gateway(scripted_server.url, token=None)  # per-client HTTP: the client's bearer
    scripted_server.then(raw_response(401), raw_response(401), raw_response(401))
    refused = []
    with anyio.fail_after(5):
        for gateway, credential in (
            (own, None),
            (own, Credential(CANARY)),
            (per_client, Credential("x" * 40)),
        ):
            with pytest.raises(Unauthorized) as caught:
                await gateway.send(GET, credential)
            assert_clean(caught.value)
            refused.append(str(caught.value))
    assert "check WOODPECKER_TOKEN" in refused[0] and "check WOODPECKER_TOKEN" in refused[1]
    assert "WOODPECKER_TOKEN" not in refused[2] and "token this client presented" in refused[2]
    assert all("get_server_info" in text for text in refused)


async def test_an_echoed_token_in_an_error_body_is_masked(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(echo_authorization(400))
    with anyio.fail_after(5), pytest.raises(Rejected) as caught:
        await gateway.send(POST, None)
    assert_clean(caught.value)
    assert "Bearer ***" in str(caught.value.detail)


async def test_the_call_credential_wins_and_without_any_no_authorization_is_sent(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    with_default = make_gateway(scripted_server.url)
    anonymous = make_gateway(scripted_server.url, token=None)
    with anyio.fail_after(5):
        await with_default.send(GET, Credential("per-client-token"))
        await with_default.send(GET, None)
        await anonymous.send(Request("GET", "/version"), None)
    sent = [r.headers.get("authorization") for r in scripted_server.requests]
    assert sent == ["Bearer per-client-token", f"Bearer {CANARY}", None]
    assert [r.path for r in scripted_server.requests] == ["/api/user", "/api/user", "/version"]


async def test_the_root_routes_never_receive_a_token(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)  # holds the canary as its default token
    with anyio.fail_after(5):
        await gateway.send(Request("GET", "/version"), None)
        await gateway.send(Request("GET", "/healthz"), Credential("per-client-token"))
        await gateway.send(GET, None)
    sent = [(r.path, r.headers.get("authorization")) for r in scripted_server.requests]
    assert sent == [("/version", None), ("/healthz", None), ("/api/user", f"Bearer {CANARY}")]


async def test_root_routes_and_api_routes_keep_a_path_prefix_of_the_server_root(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url + "/woodpecker/")
    with anyio.fail_after(5):
        await gateway.send(Request("GET", "/healthz"), None)
        await gateway.send(Request("GET", "/api/repos", query={"page": "2", "perPage": "50"}), None)
    assert [r.target for r in scripted_server.requests] == [
        "/woodpecker/healthz",
        "/woodpecker/api/repos?page=2&perPage=50",
    ]


async def test_a_401_without_any_token_says_to_set_one(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url, token=None)
    scripted_server.then(raw_response(401))
    with anyio.fail_after(5), pytest.raises(Unauthorized) as caught:
        await gateway.send(GET, None)
    assert "set WOODPECKER_TOKEN" in str(caught.value)


async def test_a_204_reads_as_no_data_and_headers_are_case_insensitive(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    scripted_server.then(raw_response(204, content_type=None, headers=[("Pipeline-Filtered", "true")]))
    with anyio.fail_after(5):
        response = await gateway.send(POST, None)
    assert (response.status, response.data) == (204, None)
    assert response.headers["pipeline-filtered"] == response.headers["Pipeline-Filtered"] == "true"
    assert scripted_server.requests[0].headers["content-type"] == "application/json"
    assert scripted_server.requests[0].body == b'{"branch":"main"}'


async def test_without_a_url_every_call_says_how_to_set_up(make_gateway: GatewayFactory) -> None:
    gateway = make_gateway(None)
    with pytest.raises(NotConfigured) as caught:
        await gateway.send(Request("GET", "/version"), None)
    assert "WOODPECKER_URL" in str(caught.value) and "WOODPECKER_TOKEN" in str(caught.value)


@pytest.mark.parametrize(
    "path", ["//evil.example/api/user", "/api/../x?y", "https://evil.example/api", "/other"]
)
async def test_a_path_that_could_leave_the_configured_server_is_refused_before_sending(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, path: str
) -> None:
    gateway = make_gateway(scripted_server.url)
    with pytest.raises(ValueError):
        await gateway.send(Request("GET", path), None)
    assert scripted_server.requests == []


def test_neither_the_gateway_nor_its_repr_shows_the_token() -> None:
    gateway = HttpxWoodpeckerGateway("https://ci.example.org", token=Credential(CANARY))
    assert CANARY not in repr(gateway) and CANARY not in str(gateway)
    assert CANARY not in repr(vars(gateway))


async def test_a_self_signed_certificate_is_refused_with_a_hint_unless_insecure_tls_is_set_for_this_client(
    tls_server: ScriptedServer, make_gateway: GatewayFactory, sleeps: SleepRecorder
) -> None:
    checking = make_gateway(tls_server.url)
    with anyio.fail_after(5), pytest.raises(Unavailable) as caught:
        await checking.send(GET, None)
    assert_clean(caught.value)
    assert "WOODPECKER_INSECURE_TLS=true" in str(caught.value)
    assert sleeps.waits == []  # a certificate does not get better by retrying

    insecure = make_gateway(tls_server.url, insecure_tls=True)
    tls_server.then(json_response(200, {"login": "ada"}))
    with anyio.fail_after(5):
        assert (await insecure.send(GET, None)).data == {"login": "ada"}

    # Nothing process-wide changed: a gateway made afterwards still checks certificates.
    later = make_gateway(tls_server.url)
    with anyio.fail_after(5), pytest.raises(Unavailable):
        await later.send(GET, None)
    assert ssl._create_default_https_context is ssl.create_default_context


@pytest.mark.parametrize("bad", [f"{CANARY}\r\nX-Evil: 1", f"{CANARY} x", f"{CANARY}é"])
async def test_a_token_that_cannot_be_a_header_is_refused_before_sending_without_quoting_it(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, bad: str
) -> None:
    gateway = make_gateway(scripted_server.url)
    with pytest.raises(Unauthorized) as caught:
        await gateway.send(GET, Credential(bad))
    assert_clean(caught.value)
    assert "WOODPECKER_TOKEN" in str(caught.value)
    assert scripted_server.requests == []
