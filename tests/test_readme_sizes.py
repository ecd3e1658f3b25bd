"""The README's install sizes are read by scripts/readme_sizes.py, which .ci/run runs after each set-up
on a fresh checkout: the figures must be where it reads them, and a wrong one must fail it."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("readme_sizes", ROOT / "scripts" / "readme_sizes.py")
assert _SPEC is not None and _SPEC.loader is not None
sizes = importlib.util.module_from_spec(_SPEC)
sys.modules["readme_sizes"] = sizes
_SPEC.loader.exec_module(sizes)


def test_both_figures_are_in_the_readme_where_the_script_reads_them() -> None:
    readme = (ROOT / "README.md").read_text()
    assert sizes.said(sizes.LEAN, readme) < 500_000_000 < sizes.said(sizes.DEV, readme)


def test_a_figure_off_by_more_than_a_third_fails_and_says_what_to_write(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert sizes.check("`make install`", 113_000_000, 110_000_000)
    assert not sizes.check("`make install`", 300_000_000, 110_000_000)
    assert "correct the README to about 300 MB" in capsys.readouterr().out


def test_ci_runs_it_after_each_set_up() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("make install\n") < ci.index("readme_sizes.py lean") < ci.index("make install-dev\n")
    assert ci.index("make install-dev\n") < ci.index("readme_sizes.py dev") < ci.index("make coverage\n")
