"""The Claude Desktop bundle's entry point (manifest.json `server.entry_point`).

The host runs it with `uv run` in the unpacked bundle, whose pyproject.toml is this
project's, so the environment has the server and its dependencies. It starts the same stdio
server as the `woodpecker-ci-mcp` command; the configuration arrives as environment
variables from the bundle's user configuration.
"""

import sys

from entrypoints.cli import main

if __name__ == "__main__":
    sys.exit(main([]))
