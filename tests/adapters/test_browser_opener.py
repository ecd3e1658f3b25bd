"""The page is opened by a child that cannot touch the JSON-RPC pipe; a console browser is no browser."""

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from adapters.browser_opener import open_in_browser

URL = "http://127.0.0.1:1/approve/secret-part"


def _program(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _recorder(tmp_path: Path, name: str = "recorder") -> tuple[Path, Path]:
    log = tmp_path / "opened.txt"
    program = _program(
        tmp_path / name,
        "import os, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    same = os.path.samestat(os.fstat(1), os.fstat(2))\n"
        "    f.write(repr((sys.argv[1], sys.stdin.read(), same)) + '\\n')\n"
        "print('noise a browser prints')\n",
    )
    return program, log


def test_browser_gets_the_url_with_no_stdin_and_stdout_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _recorder(tmp_path)
    monkeypatch.setenv("BROWSER", str(program))
    assert asyncio.run(open_in_browser(URL)) is True
    assert log.read_text().splitlines() == [repr((URL, "", True))]


def test_a_console_browser_or_a_failing_one_is_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _recorder(tmp_path, "lynx")
    monkeypatch.setenv("BROWSER", str(program))
    assert asyncio.run(open_in_browser(URL)) is False
    assert not log.exists()
    failing = _program(tmp_path / "broken", "import sys\nsys.exit(1)\n")
    monkeypatch.setenv("BROWSER", str(failing))
    assert asyncio.run(open_in_browser(URL)) is False


def test_the_url_is_not_left_in_the_servers_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, _ = _recorder(tmp_path)
    monkeypatch.setenv("BROWSER", str(program))
    asyncio.run(open_in_browser(URL))
    assert all(URL not in value for value in os.environ.values())
