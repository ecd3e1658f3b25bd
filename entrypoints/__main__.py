"""`python -m entrypoints`: the same command as the `woodpecker-ci-mcp` console script."""

import sys

from entrypoints.cli import main

if __name__ == "__main__":
    sys.exit(main())
