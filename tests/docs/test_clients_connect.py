"""After docs/clients.md's own `add` lines, each real client's list command connects, and a refused
setting shows as docs/troubleshooting.md says, with the server's line where the page says it is.

The `add` lines run as documented (tests/docs/test_client_commands.py checks what they write), with
the sandbox for the Woodpecker the page names and this checkout's server first on PATH; Gemini's
documented folder-trust step is taken from the page too. Codex's `mcp list` does not start a server,
so it has no check here (the page says so).
"""

import json
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from adapters.mcp_http import build_http_app
from sandbox.server import Sandbox
from tests.docs.test_client_commands import (
    BIN,
    MCP_URL,
    PAGE,
    ROOT,
    SERVER,
    TOKEN,
    WOODPECKER_URL,
    adds,
    blocks,
    installed,
    is_http,
)
from tests.docs.test_client_commands import run as run_cli
from tests.fixtures.mcp import harness_for, serving

TROUBLESHOOTING = ROOT / "docs" / "troubleshooting.md"
REFUSED = "ELICITATION=yes"
CLIENTS = {"claude": "Claude Code", "gemini": "Gemini CLI"}

pytestmark = [pytest.mark.node, pytest.mark.slow]


def run(home: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A client's command line as test_client_commands runs it, with this checkout's server as
    `woodpecker-ci-mcp` on PATH."""
    return run_cli(home, argv, path_first=(SERVER.parent,))


def pointed(words: list[str], woodpecker: str, token: str, mcp_url: str | None = None) -> list[str]:
    """A documented line with the page's Woodpecker, token and MCP URL swapped for real ones."""
    swap = {WOODPECKER_URL: woodpecker, TOKEN: token, MCP_URL: mcp_url or MCP_URL}
    out = []
    for word in words:
        for old, new in swap.items():
            word = word.replace(old, new)
        out.append(word)
    return [str(BIN / out[0]), *out[1:]]


def with_setting(words: list[str], setting: str) -> list[str]:
    """`words` with one more variable, given with the flag the line gives its last one."""
    last = max(i for i, w in enumerate(words) if w.startswith("WOODPECKER_TOKEN="))
    return [*words[: last + 1], words[last - 1], setting, *words[last + 1 :]]


def trust_step(home: Path) -> None:
    """clients.md's `trustedFolders.json`, with the page's example folder as the one `gemini` runs in."""
    (block,) = [b for b in blocks("json") if "TRUST_FOLDER" in b]
    folders = json.loads(block)
    assert list(folders) == ["/home/you/project"], folders
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(home): folders["/home/you/project"]}), encoding="utf-8"
    )


def patient(home: Path, program: str) -> None:
    """Give Gemini's list a minute, not its 5 s, to see the server answer.

    `gemini mcp list` waits MCP_LIST_DEFAULT_TIMEOUT_MSEC (5 s) for a server unless its entry names a
    `timeout`; on a machine busy with the rest of the suite, starting a Python process alone can take
    longer, and the check would pass or fail by the machine's load. What is checked is that the
    documented entry connects, not how fast (start-up time is measured in bench/).
    """
    if program != "gemini":
        return
    path = home / ".gemini" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["mcpServers"]["woodpecker"]["timeout"] = 60_000
    path.write_text(json.dumps(settings), encoding="utf-8")


def stdio_add(program: str) -> list[str]:
    (words,) = [w for w in adds(program) if not is_http(w)]
    return words


def listed(home: Path, program: str) -> str:
    done = run(home, [str(BIN / program), "mcp", "list"])
    assert done.returncode == 0, done.stderr
    # Gemini CLI prints its list on stderr, Claude Code on stdout.
    line = [ln for ln in (done.stdout + done.stderr).splitlines() if "woodpecker:" in ln]
    assert len(line) == 1, (done.stdout, done.stderr)
    return line[0]


def is_connected(line: str) -> bool:
    return re.search(r"(?<!Dis)Connected", line) is not None and "Failed" not in line


def symptom(client: str) -> str:
    """What the troubleshooting table says `client`'s list command shows for a server that did not start."""
    text = TROUBLESHOOTING.read_text(encoding="utf-8")
    (row,) = re.findall(rf"^\| {re.escape(client)} \| `\w+ mcp list`: `([^`]+)`", text, flags=re.MULTILINE)
    return row


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path.resolve()


@installed("gemini")
def test_gemini_leaves_the_server_disabled_until_the_folder_is_trusted(home: Path, sandbox: Sandbox) -> None:
    # The trust step below is needed: without it the documented add line leaves the server off.
    added = run(home, pointed(stdio_add("gemini"), sandbox.url, sandbox.admin_token))
    assert added.returncode == 0, added.stderr
    patient(home, "gemini")
    assert "Disabled" in listed(home, "gemini")
    trust_step(home)
    assert is_connected(listed(home, "gemini"))


@pytest.mark.parametrize("program", sorted(CLIENTS))
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_each_documented_add_line_connects(
    home: Path, sandbox: Sandbox, program: str, transport: str
) -> None:
    if not (BIN / program).exists():
        pytest.skip(f"the pinned {program} CLI is not installed: run `make client-clis`")
    (words,) = [w for w in adds(program) if is_http(w) == (transport == "http")]
    if program == "gemini":
        trust_step(home)
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        async with serving(build_http_app(harness.server)) as base:
            argv = pointed(words, sandbox.url, sandbox.admin_token, f"{base}/mcp")
            with anyio.fail_after(120):
                added = await anyio.to_thread.run_sync(run, home, argv)
                assert added.returncode == 0, added.stderr
                patient(home, program)
                line = await anyio.to_thread.run_sync(listed, home, program)
    assert is_connected(line), f"{shlex.join(words)} then `{program} mcp list`: {line}"


@pytest.mark.parametrize("setting", [REFUSED, "WOODPECKER_READONLY=true"])
@pytest.mark.parametrize("program", sorted(CLIENTS))
def test_a_refused_setting_shows_as_the_troubleshooting_page_says(
    home: Path, sandbox: Sandbox, program: str, setting: str
) -> None:
    # A near miss of a restricting variable (issue 36) must not show "Connected" with every write tool.
    if not (BIN / program).exists():
        pytest.skip(f"the pinned {program} CLI is not installed: run `make client-clis`")
    if program == "gemini":
        trust_step(home)
    words = with_setting(pointed(stdio_add(program), sandbox.url, sandbox.admin_token), setting)
    assert run(home, words).returncode == 0
    patient(home, program)
    line = listed(home, program)
    assert symptom(CLIENTS[program]) in line and not is_connected(line), line
    if program == "claude":
        # "~/.cache/claude-cli-nodejs/<the project folder, each character but letters and digits as ->/..."
        project = re.sub(r"[^A-Za-z0-9]", "-", str(home))
        folder = home / ".cache" / "claude-cli-nodejs" / project / "mcp-logs-woodpecker"
        logged = "".join(p.read_text(encoding="utf-8") for p in folder.glob("*"))
        assert logged, f"no log in {folder}: {list((home / '.cache').rglob('*'))}"
        errors = [json.loads(ln).get("error", "").strip() for ln in logged.splitlines()]
        name = setting.split("=")[0]
        want = by_hand_line() if setting == REFUSED else f"woodpecker-ci-mcp: {name} is not a variable"
        assert any(e.startswith(f"Server stderr: {want}") for e in errors), errors


def by_hand_line() -> str:
    """The line troubleshooting.md says the by-hand command prints."""
    text = TROUBLESHOOTING.read_text(encoding="utf-8")
    (printed,) = re.findall(r"^prints `([^`]+)`", text, flags=re.MULTILINE)
    return printed


def test_the_by_hand_command_prints_what_the_page_says(tmp_path: Path) -> None:
    text = TROUBLESHOOTING.read_text(encoding="utf-8")
    (block,) = [
        b for b in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL) if REFUSED in b
    ]
    words = shlex.split(block)
    setting = dict(w.split("=", 1) for w in words if "=" in w)
    assert words[-1] == "woodpecker-ci-mcp" and setting.get("ELICITATION") == "yes"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), **setting}
    done = subprocess.run(
        [str(SERVER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == by_hand_line()


def test_the_pages_say_what_these_tests_check() -> None:
    # The checks above read the page; make sure the parts they read are there.
    assert "TRUST_FOLDER" in PAGE.read_text(encoding="utf-8")
    assert all(symptom(client) for client in CLIENTS.values())
