"""`python -m bench.history` keeps working: a tiny run, checked for shape, never for speed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_a_small_history_run_counts_the_requests_of_ours_and_of_the_floor(tmp_path: Path) -> None:
    out = tmp_path / "history.json"
    run = subprocess.run(
        [sys.executable, "-m", "bench.history", "--pipelines", "60", "--repeats", "1", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    figures = json.loads(out.read_text())
    # Two list pages (50, then 10) and each of the 60 finished pipelines, for ours and the floor alike.
    assert figures["requests"] == {"ours": 62, "bare_sequential": 62, "bare_concurrent": 62}
    assert figures["read"] == {**figures["read"], "pipelines": 60, "stopped_early": False}
    assert figures["answer_bytes"] == figures["structured_bytes"] + figures["text_bytes"] > 0
    assert "failed" in figures["summary"] and "answer:" in run.stdout
