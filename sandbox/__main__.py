"""`python -m sandbox --api-only`: run the simulated Woodpecker from the command line."""

import sys

from sandbox.cli import main

sys.exit(main())
