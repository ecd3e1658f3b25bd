"""The tool counts the README, the guides and `--help` state in prose are the catalogue's, so adding a
tool cannot leave them behind (docs/tools.md is rendered from the catalogue and checked elsewhere)."""

import re
from pathlib import Path

import pytest

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS
from entrypoints.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[2]
PROSE = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOTAL = len(WOODPECKER_TOOLS)
READS = sum(t.is_read for t in WOODPECKER_TOOLS)
GUARDED = sum(t.guarded for t in WOODPECKER_TOOLS)
WRITES = TOTAL - READS
ESSENTIAL = sum(t.essential for t in WOODPECKER_TOOLS)
# Counts written as words ("the eight everyday tools") are read as numbers.
WORDS = dict(
    zip("one two three four five six seven eight nine ten eleven twelve".split(), range(1, 13), strict=True)
)
_N = r"(\d+|" + "|".join(WORDS) + ")"

# What each phrase counts; the number in the text must be that count.
PHRASES: list[tuple[re.Pattern[str], int]] = [
    (re.compile(r"server with (\d+) tools"), TOTAL),
    (re.compile(r"(\d+)-tool catalogue"), TOTAL),
    (re.compile(r"of the (\d+) tools"), TOTAL),
    (re.compile(r"instead of (\d+)"), TOTAL),
    (re.compile(r"only the (\d+) read tools"), READS),
    (re.compile(r"registers the (\d+) read tools"), READS),
    (re.compile(r"none of the (\d+) write tools"), WRITES),
    (re.compile(r"(\d+) of the \d+ tools do something"), GUARDED),
    (re.compile(rf"the {_N} everyday tools"), ESSENTIAL),
    (re.compile(rf"the same {_N} as `WOODPECKER_ALLOW_TOOLS=essential`"), ESSENTIAL),
    (
        re.compile(r"`WOODPECKER_TOOLSETS=pipelines,logs` registers (\d+) tools"),
        len(WOODPECKER_TOOLSETS.select(("pipelines", "logs"), WOODPECKER_TOOLS)),
    ),
]


def counted(text: str) -> list[tuple[str, int, int]]:
    """Every (phrase, number in the text, the catalogue's count) the text states."""
    return [
        (m.group(0), WORDS.get(m.group(1)) or int(m.group(1)), want)
        for pattern, want in PHRASES
        for m in pattern.finditer(text)
    ]


@pytest.mark.parametrize("page", PROSE, ids=lambda p: p.name)
def test_every_count_in_prose_is_the_catalogues(page: Path) -> None:
    wrong = [(phrase, want) for phrase, got, want in counted(page.read_text(encoding="utf-8")) if got != want]
    assert wrong == [], f"{page.name}: these counts are stale; the catalogue says the second number"


def test_every_count_in_help_is_the_catalogues() -> None:
    # `--help` is prose too, and the first place a person reads what read-only mode registers.
    stated = counted(build_parser().format_help())
    assert stated, "--help states no tool count: the check below would pass by checking nothing"
    assert [(phrase, want) for phrase, got, want in stated if got != want] == [], "stale counts in --help"


def test_the_counts_are_stated_somewhere() -> None:
    # The check above passes on a page with no counts at all: make sure it has something to check.
    phrases = {phrase for page in PROSE for phrase, _, _ in counted(page.read_text(encoding="utf-8"))}
    assert len(phrases) >= 5, phrases


def test_the_toolsets_table_counts_each_toolsets_tools() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z]+)` \| (\d+) \|", text, flags=re.MULTILINE))
    want = {
        name: len(WOODPECKER_TOOLSETS.members(name, WOODPECKER_TOOLS)) for name in WOODPECKER_TOOLSETS.names
    }
    want |= {"all": TOTAL, "essential": sum(t.essential for t in WOODPECKER_TOOLS)}
    assert {name: int(count) for name, count in rows.items() if name in want} == want


def test_a_stale_count_is_found() -> None:
    assert counted(f"A server with {TOTAL - 1} tools over the API.") == [
        (f"server with {TOTAL - 1} tools", TOTAL - 1, TOTAL)
    ]
    assert counted("registers the nine everyday tools") == [("the nine everyday tools", 9, ESSENTIAL)]
