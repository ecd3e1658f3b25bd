"""The approval page's opener child cannot touch the JSON-RPC pipe, and a console browser is no browser
(guard.md §4b): `$BROWSER` is a program that records what it was given and where its stdio go."""

import os
import stat
import sys
from pathlib import Path

import pytest

from adapters.approval_page import _run_opener

URL = "http://127.0.0.1:1/approve/the-secret-part"


def _program(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _recorder(tmp_path: Path, name: str = "recorder") -> tuple[Path, Path]:
    log = tmp_path / "opened.txt"
    program = _program(
        tmp_path / name,
        "import os, sys\n"
        "out = os.fstat(1)\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(repr((sys.argv[1], sys.stdin.read(), out.st_dev, out.st_ino)) + '\\n')\n"
        "print('noise a browser prints')\n",
    )
    return program, log


def test_the_browser_gets_the_url_with_no_stdin_and_its_stdout_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _recorder(tmp_path)
    monkeypatch.setenv("BROWSER", str(program))
    assert _run_opener(URL) is True
    err = os.fstat(sys.stderr.fileno())
    assert log.read_text().splitlines() == [repr((URL, "", err.st_dev, err.st_ino))]


def test_a_console_browser_or_one_that_fails_is_no_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _recorder(tmp_path, "lynx")
    monkeypatch.setenv("BROWSER", str(program))
    assert _run_opener(URL) is False
    assert not log.exists()
    monkeypatch.setenv("BROWSER", str(_program(tmp_path / "broken", "import sys\nsys.exit(1)\n")))
    assert _run_opener(URL) is False
