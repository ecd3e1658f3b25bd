"""`python -m bench.result_sizes`: bytes per result for a sample of tools, in each text mode, against the sandbox.

For each sampled call it prints the bytes of `structuredContent`, of the text content and of
the two together as they go on the wire (each as a JSON value), so that RESULTS.md can show
what carrying the data in the text costs. `--json` prints the figures as JSON instead.
Runs the ToolRunner in-process against the sandbox over loopback HTTP (no MCP framing: that
adds the same few dozen bytes to every result).
"""

import argparse
import asyncio
import inspect
import json
import sys
from typing import Any

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.tools import ToolRunner
from ports.woodpecker import Credential
from sandbox.seed import BIG_LOG_STEPS
from sandbox.server import running_sandbox

# (label, tool, arguments)
SAMPLE: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("get_repository", "get_repository", {"repo_id": 1}),
    ("list_pipelines (13 of repository 1)", "list_pipelines", {"repo_id": 1}),
    ("get_pipeline (a failed one)", "get_pipeline", {"repo_id": 1, "number": 2}),
    (
        "get_step_logs (200 lines of the 10,000-line step)",
        "get_step_logs",
        {
            "repo_id": BIG_LOG_STEPS[10_000][0],
            "number": BIG_LOG_STEPS[10_000][1],
            "step_id": BIG_LOG_STEPS[10_000][2],
        },
    ),
)


def _bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


async def measure(mode: str | None) -> list[dict[str, Any]]:
    """The sample's sizes with the ToolRunner in this text mode (None: a runner that has no modes)."""
    rows = []
    with running_sandbox("3.17") as sandbox:
        gateway = HttpxWoodpeckerGateway(sandbox.url, trust_env=False, retries=0, timeout=30.0)
        kwargs: dict[str, Any] = {"default_credential": Credential(sandbox.admin_token)}
        if mode is not None:
            kwargs["text"] = mode
        runner = ToolRunner(WOODPECKER_TOOLS, gateway, **kwargs)
        try:
            for label, tool, args in SAMPLE:
                result = await runner.run(tool, args, None)
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.text}")
                structured, text = _bytes(result.structured), _bytes(result.text)
                rows.append(
                    {
                        "result": label,
                        "structured": structured,
                        "text": text,
                        "wire": structured + text,
                        "lines": len(result.structured.get("lines", [])) or None,
                    }
                )
        finally:
            await gateway.aclose()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    options = parser.parse_args(argv)
    modes: list[str | None] = (
        ["full", "summary"] if "text" in inspect.signature(ToolRunner.__init__).parameters else [None]
    )
    figures = {str(mode): asyncio.run(measure(mode)) for mode in modes}
    if options.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
        return 0
    for mode, rows in figures.items():
        print(f"text mode: {mode}")
        print(f"  {'result':52} {'structured':>10} {'text':>8} {'wire':>8}")
        for row in rows:
            print(f"  {row['result']:52} {row['structured']:>10,} {row['text']:>8,} {row['wire']:>8,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
