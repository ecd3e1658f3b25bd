"""JsonLinesAuditSink: one JSON object per line, to stderr or a file, and recording never raises."""

import json
from pathlib import Path

import pytest

from adapters.audit_jsonl import JsonLinesAuditSink
from ports.audit import AuditUnwritable

EVENT = {
    "event": "guard",
    "tool": "approve_pipeline",
    "targets": {"repo_id": 1, "number": 2},
    "outcome": "asked",
}


def test_events_go_to_stderr_one_json_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    sink = JsonLinesAuditSink()
    sink.record(EVENT)
    sink.record({**EVENT, "outcome": "approved"})
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["asked", "approved"]


def test_events_are_appended_to_a_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"earlier":true}\n')
    sink = JsonLinesAuditSink(str(path))
    sink.record(EVENT)
    sink.record({"text": "line\nbreak"})
    lines = path.read_text().splitlines()
    assert (
        len(lines) == 3 and json.loads(lines[1]) == EVENT and json.loads(lines[2]) == {"text": "line\nbreak"}
    )


def test_an_unwritable_file_neither_raises_nor_stays_silent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sink = JsonLinesAuditSink(str(tmp_path))  # a directory cannot be opened for appending
    sink.record(EVENT)
    sink.record(EVENT)
    err = capsys.readouterr().err
    assert err.count("audit sink could not write") == 1 and str(tmp_path) not in err


def test_a_value_json_cannot_encode_is_written_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    JsonLinesAuditSink().record({"odd": {1, 2}, "obj": object()})
    assert json.loads(capsys.readouterr().err)["odd"] == "{1, 2}"


@pytest.mark.parametrize("unwritable", ["directory", "full disk"])
def test_a_required_line_the_file_cannot_take_raises_and_says_so_every_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unwritable: str
) -> None:
    # ADR 0081: a guarded write does not go ahead without its `asked` or `approved` line.
    path = str(tmp_path) if unwritable == "directory" else "/dev/full"
    sink = JsonLinesAuditSink(path)
    for _ in range(2):
        with pytest.raises(AuditUnwritable) as raised:
            sink.require(EVENT)
        assert raised.value.reason and path not in raised.value.reason
    err = capsys.readouterr().err
    assert err.count("the audit file (WOODPECKER_MCP_AUDIT_FILE) could not be written") == 2
    assert str(tmp_path) not in err


def test_a_required_line_is_written_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    JsonLinesAuditSink(str(path)).require(EVENT)
    assert json.loads(path.read_text()) == EVENT
