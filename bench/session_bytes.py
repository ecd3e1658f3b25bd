"""`python -m bench.session_bytes`: the text bytes a model reads in a "why did my build fail?" session.

The session is the three lists a new user starts with (`list_repositories`, `get_pipeline_feed`,
`list_pipelines` of the repository whose build failed) and then docs/guide.md §8's worked session,
read from the page's `session` blocks. For each call it prints the bytes of the text content
(UTF-8), what a client that hands the model only `content` gives it; `--json` prints the figures
as JSON. Runs the ToolRunner in-process against the sandbox over loopback HTTP, on a sandbox
clock that stands still (a running pipeline stays running), so the figures are the same on
every machine.
"""

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.tools import ToolResult, ToolRunner
from ports.woodpecker import Credential
from sandbox.server import running_sandbox

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"
# The repository of the worked session (bench/logs), whose pipeline 2 failed.
LISTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_repositories", {}),
    ("get_pipeline_feed", {}),
    ("list_pipelines", {"repo_id": 6}),
)
STILL = 1_760_700_000.0  # the sandbox's clock: after every seeded pipeline was created


def worked_session() -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of each call docs/guide.md §8 shows, in page order (`<sandbox>` unfilled)."""
    text = GUIDE.read_text(encoding="utf-8")
    calls = []
    for block in re.findall(r"^```session\n> (\S+) (.*?)\n", text, flags=re.MULTILINE):
        tool, arguments = block
        calls.append((tool, json.loads(arguments)))
    return calls


def session() -> list[tuple[str, dict[str, Any]]]:
    return [*LISTS, *worked_session()]


async def run_session(url: str, token: str) -> list[tuple[str, dict[str, Any], ToolResult]]:
    """Each call of the session against the Woodpecker at `url`: its tool, its arguments as written
    (`<sandbox>` for the URL) and its result."""
    gateway = HttpxWoodpeckerGateway(url, trust_env=False, retries=0, timeout=30.0)
    runner = ToolRunner(WOODPECKER_TOOLS, gateway, default_credential=Credential(token), web_root=url)
    out = []
    try:
        for tool, arguments in session():
            filled = json.loads(json.dumps(arguments).replace("<sandbox>", url))
            result = await runner.run(tool, filled, None)
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.text}")
            out.append((tool, arguments, result))
    finally:
        await gateway.aclose()
    return out


def text_bytes(result: ToolResult) -> int:
    return len(result.text.encode("utf-8"))


def measure() -> dict[str, Any]:
    with running_sandbox("3.17", clock=lambda: STILL) as sandbox:
        ran = asyncio.run(run_session(sandbox.url, sandbox.admin_token))
    sizes = [text_bytes(result) for _, _, result in ran]
    rows = [
        {"tool": tool, "arguments": args, "text_bytes": n}
        for (tool, args, _), n in zip(ran, sizes, strict=True)
    ]
    return {"calls": rows, "lists_bytes": sum(sizes[: len(LISTS)]), "session_bytes": sum(sizes)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    options = parser.parse_args(argv)
    found = measure()
    if options.json:
        json.dump(found, sys.stdout, indent=2)
        print()
        return 0
    print(f"{'call':<72} {'text bytes':>10}")
    for row in found["calls"]:
        args = json.dumps(row["arguments"], separators=(",", ":"))
        call = f"{row['tool']} {args}"
        print(f"{call[:72]:<72} {row['text_bytes']:>10,}")
    print(f"{'the three lists':<72} {found['lists_bytes']:>10,}")
    print(f"{'the whole session':<72} {found['session_bytes']:>10,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
