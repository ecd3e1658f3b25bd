#!/usr/bin/env python3
"""Start an installed server over stdio with the official MCP client, list its tools, and say how many.

    python scripts/list_tools.py --expect 71 -- /path/to/venv/bin/woodpecker-ci-mcp
    python scripts/list_tools.py --expect 71 --mcpb unpacked-bundle/manifest.json

It imports nothing from this checkout, only the `mcp` package of the Python running it, so
CI runs it with the fresh environment the built wheel went into (`make dist-check`) and for
the Claude Desktop bundle's entry point (`make bundle-check`): what it proves is that the
thing a user installs starts and answers `tools/list`. Exit 1 when the count differs or the
server does not answer within the timeout.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


async def list_tool_names(argv: list[str], env: dict[str, str], cwd: str | None) -> list[str]:
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    async with Client(server) as client:
        listed = await client.list_tools()
    return [tool.name for tool in listed.tools]


def bundle_command(manifest_path: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment a host builds from an MCPB manifest, user configuration left empty.

    `${__dirname}` is the unpacked bundle; `${user_config.*}` become empty strings, which the
    server treats as unset (it starts and lists its tools, and asks for setup on a call).
    """
    config = json.loads(manifest_path.read_text(encoding="utf-8"))["server"]["mcp_config"]

    def fill(text: str) -> str:
        text = text.replace("${__dirname}", str(manifest_path.parent.resolve()))
        for name in json.loads(manifest_path.read_text(encoding="utf-8")).get("user_config", {}):
            text = text.replace("${user_config." + name + "}", "")
        return text

    return [fill(config["command"]), *map(fill, config.get("args", []))], {
        k: fill(v) for k, v in config.get("env", {}).items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", type=int, required=True, help="the number of tools the server must list")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--cwd", help="the server's working directory")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--mcpb", type=Path, help="start the server the way a host starts this bundle manifest"
    )
    parser.add_argument("command", nargs="*", help="the server command and its arguments")
    options = parser.parse_args()
    if options.mcpb is not None:
        options.command, bundle_env = bundle_command(options.mcpb)
        options.env += [f"{k}={v}" for k, v in bundle_env.items()]
    if not options.command:
        parser.error("give the server command, or --mcpb")
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
