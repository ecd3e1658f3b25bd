"""Step logs through the gateway over a real socket: the right window, decoded, in memory bounded by the window."""

import base64
import json
import random
import re
import tracemalloc
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Literal, TypeVar

import anyio
import pytest

from ports.woodpecker import (
    BadResponse,
    InvalidPattern,
    LogSearchRequest,
    LogWindowRequest,
    NotFound,
    ResponseTooLarge,
    ServesWebUi,
)
from tests.fixtures.gateway import GatewayFactory, ScriptedServer, raw_response, streamed

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PATH = "/api/repos/1/logs/7/302"
T = TypeVar("T")


def entry(line: int, text: str, time: int = 0, step_id: int = 302) -> dict[str, object]:
    return {
        "id": 1000 + line,
        "step_id": step_id,
        "time": time,
        "line": line,
        "data": base64.b64encode(text.encode()).decode(),
        "type": 0,
    }


def body_of(entries: list[dict[str, object]]) -> bytes:
    return json.dumps(entries).encode()


def chunked(body: bytes | memoryview, size: int) -> Callable[[], Iterator[bytes]]:
    def gen() -> Iterator[bytes]:
        for i in range(0, len(body), size):
            yield body[i : i + size]

    return gen


def log_data(i: int) -> str:
    return base64.b64encode(f"[{i:8d}] ok  forge.example.org/acme/web/pkg/module {i:06d}".encode()).decode()


def generated_log(lines: int, per_chunk: int = 2000) -> Callable[[], Iterator[bytes]]:
    """A big log produced as it is sent, never held whole."""

    def gen() -> Iterator[bytes]:
        yield b"["
        for start in range(0, lines, per_chunk):
            part = ",".join(
                f'{{"id":{i},"step_id":9,"time":{i // 80},"line":{i},"data":"{log_data(i)}","type":0}}'
                for i in range(start, min(start + per_chunk, lines))
            )
            yield (part if start == 0 else "," + part).encode()
        yield b"]"

    return gen


@pytest.mark.parametrize("end", ["head", "tail"])
async def test_the_window_holds_the_first_or_last_lines_decoded_with_the_total(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, end: Literal["head", "tail"]
) -> None:
    entries = [entry(i, f"line {i}\n", time=i // 10) for i in range(1000)]
    scripted_server.then(streamed(chunked(body_of(entries), 777)))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5):
        window = await gateway.step_log(PATH, LogWindowRequest(5, end), None)
    numbers = list(range(5)) if end == "head" else list(range(995, 1000))
    assert [line.number for line in window.lines] == numbers
    assert [line.text for line in window.lines] == [f"line {n}" for n in numbers]
    assert [line.time for line in window.lines] == [n // 10 for n in numbers]
    assert window.total_lines == 1000
    assert scripted_server.requests[0].path == PATH


async def test_lines_that_arrive_out_of_order_come_back_ordered_by_line(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    entries = [entry(i, f"line {i}") for i in range(300)]
    random.Random(7).shuffle(entries)
    scripted_server.then(raw_response(200, body_of(entries)))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5):
        window = await gateway.step_log(PATH, LogWindowRequest(50, "tail"), None)
    assert [line.number for line in window.lines] == list(range(250, 300))
    assert window.lines[0].text == "line 250"


async def test_metadata_and_progress_entries_are_neither_shown_nor_counted_as_lines(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    # LogEntry.type: 0 stdout, 1 stderr, 2 exit code are output; 3 metadata and 4 progress are not.
    entries = [{**entry(i, f"type {kind}"), "type": kind} for i, kind in enumerate([0, 3, 1, 4, 2, 4])]
    scripted_server.then(raw_response(200, body_of(entries)), raw_response(200, body_of(entries)))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5):
        tail = await gateway.step_log(PATH, LogWindowRequest(2, "tail"), None)
        head = await gateway.step_log(PATH, LogWindowRequest(10, "head"), None)
    assert [(line.number, line.text) for line in tail.lines] == [(2, "type 1"), (4, "type 2")]
    assert [line.text for line in head.lines] == ["type 0", "type 1", "type 2"]
    assert tail.total_lines == head.total_lines == 3


@pytest.mark.parametrize("body", [b"null", b"[]"])
async def test_a_step_without_log_lines_is_an_empty_window(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, body: bytes
) -> None:
    scripted_server.then(raw_response(200, body))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5):
        window = await gateway.step_log(PATH, LogWindowRequest(200), None)
    assert window.lines == () and window.total_lines == 0


async def test_a_line_that_is_not_base64_is_shown_as_undecodable_not_fatal(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    entries = [entry(0, "fine"), {"line": 1, "data": "%%%not-base64", "time": 0}]
    scripted_server.then(raw_response(200, body_of(entries)))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5):
        window = await gateway.step_log(PATH, LogWindowRequest(10), None)
    assert window.lines[0].text == "fine"
    assert "could not be decoded" in window.lines[1].text


@pytest.mark.parametrize(
    ("body", "content_type", "error"),
    [
        (b"<!DOCTYPE html><html>app</html>", "text/html; charset=UTF-8", ServesWebUi),
        (b"  <html>app</html>", "application/json", ServesWebUi),
        (b'[{"line": 1, "data": ""} {"line": 2}]', "application/json", BadResponse),
        (b'[{"data": "QQ=="}]', "application/json", BadResponse),
        (b'{"error": "nope"}', "application/json", BadResponse),
    ],
)
async def test_an_answer_that_is_not_a_log_is_a_named_error_and_the_next_call_works(
    scripted_server: ScriptedServer,
    make_gateway: GatewayFactory,
    body: bytes,
    content_type: str,
    error: type[Exception],
) -> None:
    scripted_server.then(raw_response(200, body, content_type=content_type))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5), pytest.raises(error):
        await gateway.step_log(PATH, LogWindowRequest(10), None)
    scripted_server.then(raw_response(200, body_of([entry(0, "ok")])))
    with anyio.fail_after(5):
        assert (await gateway.step_log(PATH, LogWindowRequest(10), None)).total_lines == 1


async def test_a_missing_step_is_NotFound(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    scripted_server.then(raw_response(404, content_type=None))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(5), pytest.raises(NotFound):
        await gateway.step_log(PATH, LogWindowRequest(10), None)


@pytest.mark.parametrize("with_length", [True, False])
async def test_a_log_past_its_own_ceiling_is_refused(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory, with_length: bool
) -> None:
    body = body_of([entry(i, "x" * 60) for i in range(5000)])
    scripted_server.then(streamed(chunked(body, 4096), content_length=len(body) if with_length else None))
    gateway = make_gateway(scripted_server.url, max_log_bytes=64 * 1024, max_response_bytes=1024)
    with anyio.fail_after(5), pytest.raises(ResponseTooLarge):
        await gateway.step_log(PATH, LogWindowRequest(10), None)


async def test_the_log_ceiling_is_separate_from_the_ordinary_one(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    body = body_of([entry(i, "x" * 60) for i in range(500)])
    scripted_server.then(raw_response(200, body))
    gateway = make_gateway(scripted_server.url, max_response_bytes=1024)
    with anyio.fail_after(5):
        window = await gateway.step_log(PATH, LogWindowRequest(3), None)
    assert window.total_lines == 500 and len(body) > 1024


def peak_rss_kib() -> int:
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\s+(\d+)", status.read()).group(1))  # type: ignore[union-attr]


def reset_peak_rss() -> bool:
    """Linux lets a process reset its own high-water mark; elsewhere the test is skipped."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


async def peak_growth(server: ScriptedServer, body: bytes, read: Coroutine[Any, Any, T]) -> tuple[T, int]:
    """Serve `body` in 64 KiB chunks and await `read`; its result and how far the peak RSS grew meanwhile."""
    server.then(streamed(chunked(memoryview(body), 65536)))
    if not reset_peak_rss():
        read.close()
        pytest.skip("needs Linux /proc/self/clear_refs to measure peak memory")
    before = peak_rss_kib()
    with anyio.fail_after(60):
        result = await read
    return result, (peak_rss_kib() - before) * 1024


async def test_a_200000_line_log_is_windowed_with_peak_memory_far_below_its_size(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    lines = 200_000
    # Made before measuring, so the peak below is what reading the log costs.
    body = b"".join(generated_log(lines)())
    gateway = make_gateway(scripted_server.url, timeout=30.0)
    # tracemalloc slows this many small allocations twentyfold, so this size is measured
    # with the resident-set high-water mark; the tracemalloc test below uses fewer lines.
    window, grown = await peak_growth(
        scripted_server, body, gateway.step_log(PATH, LogWindowRequest(200, "tail"), None)
    )
    assert window.total_lines == lines
    assert [line.number for line in window.lines] == list(range(lines - 200, lines))
    assert window.lines[-1].text.endswith(f"module {lines - 1:06d}")
    assert grown < len(body) / 4, (grown, len(body))


async def test_the_traced_peak_of_reading_a_log_does_not_grow_with_the_log(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url, timeout=30.0)

    async def traced_peak(lines: int) -> tuple[int, int]:
        body = b"".join(generated_log(lines)())
        scripted_server.then(streamed(chunked(memoryview(body), 65536)))
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            with anyio.fail_after(60):
                window = await gateway.step_log(PATH, LogWindowRequest(100, "tail"), None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert window.total_lines == lines and len(window.lines) == 100
        return peak, len(body)

    # Both logs are past what the scanner holds at most (a run being gathered, about 1 MiB of runs
    # queued for their check on another thread, the window's runs: docs/adr/0030), which a
    # smaller log does not fill.
    small_peak, small_size = await traced_peak(20_000)
    large_peak, large_size = await traced_peak(200_000)
    # Ten times the log; the peak (socket chunks, the runs in flight, the window) stays where it was,
    # whether the check thread kept up (nothing queued) or not (the queue full) in either read.
    assert large_peak - small_peak < (large_size - small_size) / 10, (small_peak, large_peak)
    assert large_peak < large_size / 2


async def test_a_search_reads_a_200000_line_log_once_and_finds_a_failure_with_its_context(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    lines = 200_000
    body = b"".join(generated_log(lines)())
    failing = f'"line":150000,"data":"{log_data(150000)}"'.encode()
    seeded = base64.b64encode(b"--- FAIL: TestCheckout/pays_twice (0.01s)").decode()
    body = body.replace(failing, f'"line":150000,"data":"{seeded}"'.encode())
    gateway = make_gateway(scripted_server.url, timeout=30.0)
    search = LogSearchRequest(r"--- fail:", True, 2, 5)
    found, grown = await peak_growth(scripted_server, body, gateway.search_step_log(PATH, search, None))
    assert (found.total_lines, found.total_matches) == (lines, 1)
    [match] = found.matches
    assert (match.line.number, match.line.text) == (150000, "--- FAIL: TestCheckout/pays_twice (0.01s)")
    assert [x.number for x in match.before] == [149998, 149999]
    assert [x.number for x in match.after] == [150001, 150002]
    assert grown < len(body) / 4, (grown, len(body))


async def test_a_line_range_reads_lines_by_number(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    scripted_server.then(streamed(generated_log(5000)))
    gateway = make_gateway(scripted_server.url)
    with anyio.fail_after(30):
        window = await gateway.step_log(PATH, LogWindowRequest(10, "head", 2500, 2600), None)
    assert [line.number for line in window.lines] == list(range(2500, 2510))
    assert window.total_lines == 5000


async def test_a_pattern_re2_cannot_compile_is_refused_before_anything_is_sent(
    scripted_server: ScriptedServer, make_gateway: GatewayFactory
) -> None:
    gateway = make_gateway(scripted_server.url)
    with pytest.raises(InvalidPattern, match="RE2"):
        await gateway.search_step_log(PATH, LogSearchRequest(r"(?<=x)y"), None)
    assert scripted_server.requests == []
