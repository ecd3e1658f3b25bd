"""`python -m bench`: the whole benchmark suite in one run (see bench/suite.py)."""

from bench.suite import main

if __name__ == "__main__":
    raise SystemExit(main())
