"""Benchmarks (not tests): `python -m bench` (`make bench`) runs them all; `python -m bench.<name>` runs one."""
