"""Point 5 of API-NOTES §7: base64 `data` in logs and configs, lines numbered from 0, null when a step has no log."""

import base64
import json

import pytest

from sandbox.seed import BIG_LOG_EXIT_CODES, BIG_LOG_STEPS, HOSTILE_STRINGS
from sandbox.server import Sandbox
from tests.sandbox._client import admin, json_of


def test_step_log_entries_carry_base64_data_numbered_from_zero(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        entries = json_of(http.get("/api/repos/1/logs/2/10204"))
    assert [e["line"] for e in entries] == list(range(len(entries)))
    assert all(e["step_id"] == 10204 and e["type"] == 0 for e in entries)
    text = [base64.b64decode(e["data"]).decode("utf-8") for e in entries]
    assert text[0] == "+ make test"
    assert HOSTILE_STRINGS[1] in text
    assert [e["id"] for e in entries] == sorted(e["id"] for e in entries)


def test_a_step_without_output_answers_null(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        pipeline = json_of(http.get("/api/repos/1/pipelines/13"))
        pending_step = next(s for s in pipeline["workflows"][0]["children"] if s["state"] == "pending")
        response = http.get(f"/api/repos/1/logs/13/{pending_step['id']}")
    assert response.status_code == 200
    assert response.content == b"null"


def test_a_step_of_another_pipeline_is_not_found(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        response = http.get("/api/repos/1/logs/1/10204")  # step 10204 belongs to pipeline #2
        bad = http.get("/api/repos/1/logs/2/abc")
    assert (response.status_code, response.content) == (404, b"")
    assert bad.status_code == 400


def test_pipeline_config_data_is_base64_yaml(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        configs = json_of(http.get("/api/repos/1/pipelines/2/config"))
    assert configs[0]["name"] == ".woodpecker.yaml"
    assert base64.b64decode(configs[0]["data"]).decode("utf-8").startswith("# pipeline for acme/web")


def test_deleted_step_logs_answer_null_afterwards(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        assert http.delete("/api/repos/1/logs/2/10204").status_code == 204
        assert http.get("/api/repos/1/logs/2/10204").content == b"null"


def test_the_big_log_steps_are_where_the_constants_say(sandbox: Sandbox) -> None:
    with admin(sandbox) as http:
        for lines, (repo_id, number, step_id) in BIG_LOG_STEPS.items():
            pipeline = json_of(http.get(f"/api/repos/{repo_id}/pipelines/{number}"))
            step = next(s for w in pipeline["workflows"] for s in w["children"] if s["id"] == step_id)
            assert step["exit_code"] == BIG_LOG_EXIT_CODES[lines]
            assert step["name"] == f"log-{lines}"


def test_the_ten_thousand_line_log_streams_complete_and_in_order(sandbox: Sandbox) -> None:
    repo_id, number, step_id = BIG_LOG_STEPS[10_000]
    with admin(sandbox) as http:
        response = http.get(f"/api/repos/{repo_id}/logs/{number}/{step_id}")
    entries = json_of(response)
    assert len(entries) == 10_000
    assert [e["line"] for e in entries] == list(range(10_000))
    times = [e["time"] for e in entries]
    assert times == sorted(times) and times[0] == 0
    lengths = [len(base64.b64decode(e["data"])) for e in entries[:50]]
    assert all(50 <= n <= 100 for n in lengths)
    per_entry = len(response.content) / len(entries)
    assert 120 <= per_entry <= 200


@pytest.mark.slow
def test_the_million_line_log_is_streamed_not_buffered(sandbox: Sandbox) -> None:
    repo_id, number, step_id = BIG_LOG_STEPS[1_000_000]
    with (
        admin(sandbox) as http,
        http.stream("GET", f"/api/repos/{repo_id}/logs/{number}/{step_id}") as response,
    ):
        assert response.status_code == 200
        assert "content-length" not in response.headers  # chunked: generated while it is sent
        head = b""
        for chunk in response.iter_bytes():
            head += chunk
            if len(head) > 4096:
                break
    first = json.loads(head[1 : head.index(b"}") + 1])
    assert (first["line"], first["time"], first["step_id"]) == (0, 0, step_id)
