"""The command line serves the sandbox and prints one JSON line with its address and tokens."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from sandbox.cli import main

CHECKOUT = Path(__file__).resolve().parents[2]


def _serve(*args: str) -> "subprocess.Popen[str]":
    """`python -m sandbox` with `args`, from the checkout; stdout is piped (its first line is the JSON)."""
    # stderr is not read, so it must not be a pipe that could fill up and block the server.
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    return subprocess.Popen(
        [sys.executable, "-m", "sandbox", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=CHECKOUT,
        env=env,
        text=True,
    )


@pytest.mark.slow
def test_api_only_prints_one_json_line_and_serves_until_terminated() -> None:
    with _serve("--api-only", "--port", "0") as process:
        assert process.stdout is not None
        try:
            info = json.loads(process.stdout.readline())
            assert info["url"].startswith("http://127.0.0.1:")
            assert info["version"] == "3.17.0"
            assert set(info["tokens"]) >= {info["admin_login"], info["user_login"]}
            assert {b["lines"] for b in info["big_logs"]} == {10_000, 40_000, 200_000, 1_000_000}
            version = httpx.get(f"{info['url']}/version", timeout=10)
            me = httpx.get(
                f"{info['url']}/api/user",
                headers={"Authorization": f"Bearer {info['tokens'][info['admin_login']]}"},
                timeout=10,
            )
            assert version.json()["version"] == "3.17.0"
            assert me.json()["login"] == info["admin_login"]
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                raise
        assert code == 0
        assert process.stdout.read() == ""  # exactly one line


@pytest.mark.slow
def test_the_311_mode_reports_its_version() -> None:
    with _serve("--api-only", "--woodpecker-version", "3.11") as process:
        assert process.stdout is not None
        try:
            info = json.loads(process.stdout.readline())
            assert httpx.get(f"{info['url']}/version", timeout=10).json()["version"] == "3.11.0"
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_without_api_only_the_sandbox_entry_point_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "--api-only" in capsys.readouterr().err


def test_tokens_are_random_per_start() -> None:
    from sandbox.server import new_tokens

    first, second = new_tokens(), new_tokens()
    assert first.keys() == second.keys()
    assert all(first[k] != second[k] and len(first[k]) == 64 for k in first)


@pytest.mark.slow
def test_history_seeds_that_many_pipelines_in_the_bench_repository_and_a_reset_keeps_them() -> None:
    from sandbox.seed import BENCH_REPO_ID

    with _serve("--api-only", "--history", "60") as process:
        assert process.stdout is not None
        try:
            info = json.loads(process.stdout.readline())
            auth = {"Authorization": f"Bearer {info['tokens'][info['admin_login']]}"}
            listed = httpx.get(
                f"{info['url']}/api/repos/{BENCH_REPO_ID}/pipelines",
                params={"perPage": 50},
                headers=auth,
                timeout=10,
            ).json()
            assert len(listed) == 50 and listed[0]["number"] == 4 + 60  # after the bench repository's four
            restarts = [p for p in listed if p["parent"]]
            assert restarts and all(p["status"] == "success" for p in restarts)
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_a_history_too_short_to_hold_its_facts_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--api-only", "--history", "2"]) == 2
    assert "--history takes at least" in capsys.readouterr().err


def test_a_reset_seeds_the_history_again() -> None:
    from sandbox.app import SandboxState
    from sandbox.seed import BENCH_REPO_ID

    state = SandboxState(
        version="3.17", tokens={"ada": "a" * 64, "bob": "b" * 64, "eve": "e" * 64}, history=20
    )
    state.reset()
    assert len(state.world.repo_pipelines(BENCH_REPO_ID)) == 4 + 20
