"""docs/http.md's table of limits names, for each limit, tests that exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HTTP_DOC = ROOT / "docs" / "http.md"


def limits_rows() -> list[str]:
    section = HTTP_DOC.read_text(encoding="utf-8").split("## Limits", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]


def test_every_test_the_limits_table_names_exists() -> None:
    rows = limits_rows()
    assert len(rows) >= 6
    named = 0
    for row in rows:
        current: Path | None = None
        for reference in re.findall(r"`((?:tests/[\w/]+\.py)?(?:::\w+)?)`", row):
            path, _, name = reference.partition("::")
            if path:
                current = ROOT / path
                assert current.is_file(), reference
            if name:
                assert current is not None, row
                source = current.read_text(encoding="utf-8")
                assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{name} is not in {current.name}"
                named += 1
    assert named >= 7
