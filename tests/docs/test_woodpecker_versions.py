"""docs/woodpecker-versions.md's table is tests/real/versions.py's list: one row per difference, in order,
each naming a test that exists."""

import re
from pathlib import Path

from tests.real.versions import DIFFERENCES

ROOT = Path(__file__).resolve().parents[2]


def _rows() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "woodpecker-versions.md").read_text()
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()]
    return [(c[0], c[1]) for c in cells if len(c) == 2 and c[0] not in ("3.11.0", "---")]


def test_each_difference_has_its_row_and_nothing_else_does() -> None:
    assert _rows() == [(d.what, d.ours) for d in DIFFERENCES]


def test_each_difference_names_a_test_that_exists() -> None:
    for difference in DIFFERENCES:
        path, name = difference.test.split("::")
        source = (ROOT / path).read_text()
        assert re.search(rf"^(async )?def {name}\(", source, re.M), difference.test
