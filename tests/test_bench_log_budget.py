"""`python -m bench.log_budget` measures the parts of a log read on the sandbox's real bytes and bounds the time ratio from them.

Checked for meaning, never for speed: the runs it times are the scanner's runs of the served
log, every one of them passes the real shape check, and the floor is the largest of its three
limits (the CPU on the cores, the part that holds the GIL, the download itself).
"""

from bench import log_budget


def test_the_runs_timed_are_the_whole_log_cut_at_entry_boundaries() -> None:
    body = log_budget.body_of(10_000)
    runs = log_budget.runs_of(body, size=4096)
    assert len(runs) > 10
    assert b"[" + b",".join(runs) + b"]" == body
    assert all(run.startswith(b'{"id":') and run.endswith(b"}") for run in runs)


def test_every_part_is_measured_on_runs_the_shape_check_accepts() -> None:
    parts = log_budget.per_byte_parts(log_budget.body_of(10_000))
    assert set(parts) == {"shape_check", "shape_check_searching", "count", "join", "bounds"}
    assert all(seconds >= 0 for seconds in parts.values())


def test_the_floor_is_the_tightest_of_cores_gil_and_download() -> None:
    parts = {"shape_check": 0.4, "shape_check_searching": 0.5, "count": 0.1, "join": 0.0, "bounds": 0.3}
    fast = {"wall": 0.4, "client_cpu": 0.3, "server_cpu": 0.2}
    # Two cores: (0.3 + 0.2 + 0.5 + 0.1) / 2 = 0.55 s, above the GIL's 0.4 s and the download's 0.4 s.
    assert log_budget.floor(fast, parts, 2, window=False) == {
        "cpu_seconds": 1.1,
        "gil_seconds": 0.4,
        "floor_seconds": 0.55,
        "floor_ratio": 1.38,
    }
    # A window checks without the search's literals and splits each run for its bounds, which
    # counts it too: 0.4 + 0.3 = 0.7 s of reading, 0.3 + 0.3 = 0.6 s under the GIL, (0.5 + 0.7) / 2
    # = 0.6 s on two cores: here the GIL is the floor.
    assert log_budget.floor(fast, parts, 2, window=True) == {
        "cpu_seconds": 1.2,
        "gil_seconds": 0.6,
        "floor_seconds": 0.6,
        "floor_ratio": 1.5,
    }
    # On many cores the download itself is the floor.
    assert (
        log_budget.floor(fast, {**parts, "count": 0.0, "bounds": 0.0}, 64, window=False)["floor_ratio"] == 1.0
    )
    # A process whose CPU cannot be read (no /proc) counts as none, never as a failure.
    unknown = {**fast, "server_cpu": None}
    assert log_budget.floor(unknown, parts, 2, window=False)["cpu_seconds"] == 0.9
