"""`make bench` keeps working: a tiny run of two sections, checked for shape, never for speed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _bench(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    """A quick `python -m bench` run without the peer (installed on demand, Python 3.13: it is for
    people's runs, not for these checks); its output and its results file."""
    out = tmp_path / "results.json"
    run = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", *args, "--no-peer", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run, json.loads(out.read_text())


def test_a_small_benchmark_run_measures_each_path_against_its_floor(tmp_path: Path) -> None:
    run, results = _bench(
        tmp_path,
        *("--only", "first_answer", "round_trip", "guard"),
        *("--calls", "10", "--spawns", "1", "--guard-iterations", "2"),
    )
    trip = results["round_trip"]
    assert trip["ours"]["n"] == 10 and trip["ratio_median"] > 0
    # The floor replays exactly what the tool sent upstream: one GET of the repository.
    assert [r["method"] for r in trip["upstream_requests"]] == ["GET"]
    # The SDK's bare server made the same read in the same session, its answer the body alone.
    assert trip["sdk_floor"]["calls"]["n"] == 10 and trip["sdk_floor"]["answer_bytes"] > 0
    assert "the SDK's bare read server" in run.stdout
    first = results["first_answer"]
    # One round: a spawn answered its first read, and a session timed its first call and later ones.
    assert first["ours"]["spawn_to_first_answer"]["n"] == 1 and first["ours"]["later_call_median_ms"] > 0
    assert first["peer"] is None and "first answer over stdio" in run.stdout
    guard = results["guard"]
    assert {"unguarded_write", "token", "dialog", "sealed", "floor"} == set(guard["paths"])
    # Each way of asking ends in exactly one approval reaching Woodpecker, as the guard promises; before
    # it, each call of the tool reads the pipeline once (issue 37: is there anything to approve?).
    for path, calls in (("token", 2), ("dialog", 1), ("sealed", 2)):
        sent = guard["upstream_requests"][path]
        assert [r["path"].rsplit("/", 1)[-1] for r in sent if r["method"] != "GET"] == ["approve"]
        reads = [r["path"] for r in sent if r["method"] == "GET"]
        assert len(reads) == calls and len(set(reads)) == 1 and not reads[0].endswith("/approve")
    assert results["machine"]["nproc"] >= 1
    assert results["peer"]["skipped"] == "not run (--no-peer)" and trip["peer"] is None
    assert "versus the peer" in run.stdout and "not run (--no-peer)" in run.stdout


def test_the_table_sets_each_figure_beside_the_peer_and_its_goal() -> None:
    """A recorded quick run that included the peer (the smoke run above skips it): every ratio ours/peer is printed with its goal."""
    from bench.table import render

    results = json.loads((ROOT / "tests" / "fixtures" / "bench_results_with_peer.json").read_text())
    table = render(results)
    assert "peer get_repo" in table and "peer (get_repo)" in table
    versus = table[table.index("versus the peer") :]
    for figure in ("read round trip above the GET", "HTTP calls/s", "HTTP p99", "40,000-line log tail"):
        assert figure in versus
    # The peer refuses a log over 8 MiB: the table says so rather than showing a time.
    assert "200,000-line log tail answered: ours yes, peer no" in versus


def test_the_round_trip_runs_through_the_sdks_own_client_too(tmp_path: Path) -> None:
    run, results = _bench(tmp_path, "--only", "round_trip", "--calls", "10", "--stdio-client", "sdk")
    trip = results["round_trip"]
    assert trip["client"] == "sdk" and trip["ours"]["n"] == 10 and trip["ratio_median"] > 0
    assert [r["method"] for r in trip["upstream_requests"]] == ["GET"]
    assert trip["sdk_floor"]["calls"]["n"] == 10 and trip["sdk_floor"]["server_cpu_ms_per_call"] >= 0
    # Without the peer the server runs from this environment, and the table says so.
    assert results["ours_from"] == "dev" and "client: the MCP SDK" in run.stdout
