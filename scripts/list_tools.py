#!/usr/bin/env python3
"""Start an installed server over stdio with the official MCP client, list its tools, and say how many.

    python scripts/list_tools.py --expect 71 -- /path/to/venv/bin/woodpecker-ci-mcp
    python scripts/list_tools.py --expect 71 --env WOODPECKER_URL=http://x -- node server/index.js

It imports nothing from this checkout, only the `mcp` package of the Python running it, so
CI runs it with the fresh environment the built wheel went into (`make dist-check`) and for
the Claude Desktop bundle's entry point (`make bundle-check`): what it proves is that the
thing a user installs starts and answers `tools/list`. Exit 1 when the count differs or the
server does not answer within the timeout.
"""

import argparse
import os
import sys

import anyio
from mcp import Client, StdioServerParameters


async def list_tool_names(argv: list[str], env: dict[str, str], cwd: str | None) -> list[str]:
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    async with Client(server) as client:
        listed = await client.list_tools()
    return [tool.name for tool in listed.tools]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", type=int, required=True, help="the number of tools the server must list")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--cwd", help="the server's working directory")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("command", nargs="+", help="the server command and its arguments")
    options = parser.parse_args()
    # This environment (a launcher such as uvx needs its proxy and certificate settings), less
    # any of the server's own settings: only --env configures it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    env.update(entry.split("=", 1) for entry in options.env)

    async def run() -> list[str]:
        with anyio.fail_after(options.timeout):
            return await list_tool_names(options.command, env, options.cwd)

    names = anyio.run(run)
    print(f"{' '.join(options.command)}: {len(names)} tools listed")
    if len(names) != options.expect:
        print(f"expected {options.expect} tools, got {len(names)}: {names}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
