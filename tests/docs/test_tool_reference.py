"""docs/tools.md is exactly what scripts/render_tool_reference.py renders from the domain catalogue."""

import importlib.util
import re
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from domain.tools import Catalogue
from domain.woodpecker.catalogue import WOODPECKER_TOOLS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "render_tool_reference.py"
REFERENCE = ROOT / "docs" / "tools.md"


@pytest.fixture(scope="module")
def renderer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_tool_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_tool_reference_is_what_the_catalogue_renders(renderer: ModuleType) -> None:
    assert REFERENCE.read_text(encoding="utf-8") == renderer.render(WOODPECKER_TOOLS), (
        "docs/tools.md is out of date: run `python scripts/render_tool_reference.py`"
    )


def test_the_reference_has_one_section_per_catalogue_tool_in_catalogue_order(renderer: ModuleType) -> None:
    headings = re.findall(r"^### `([a-z_]+)`$", renderer.render(WOODPECKER_TOOLS), flags=re.M)
    assert headings == list(WOODPECKER_TOOLS.names)


def test_every_guarded_tool_says_that_it_asks_and_no_other_tool_does(renderer: ModuleType) -> None:
    text = renderer.render(WOODPECKER_TOOLS)
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    for section in sections:
        name = section.split("`")[1]
        tool = WOODPECKER_TOOLS.get(name)
        marker = "**asks a person:" in section.splitlines()[2]
        assert marker is tool.guarded, name
        assert ("Never asks a person." in section) is (not tool.guarded), name


def test_the_headline_counts_come_from_the_catalogue(renderer: ModuleType) -> None:
    headline = next(line for line in renderer.render(WOODPECKER_TOOLS).splitlines() if line.startswith("**"))
    tools = WOODPECKER_TOOLS.tools
    reads, guarded = sum(t.is_read for t in tools), sum(t.guarded for t in tools)
    always = sum(bool(t.guard and t.guard.always) for t in tools)
    assert headline.startswith(
        f"**{len(tools)} tools: {reads} read, {len(tools) - reads} write. {guarded} ask a person "
        f"({always} always, {guarded - always} under"
    )


def test_a_changed_catalogue_changes_the_rendered_reference(renderer: ModuleType) -> None:
    first = WOODPECKER_TOOLS.tools[0]
    edited = Catalogue((replace(first, description="A different description."), *WOODPECKER_TOOLS.tools[1:]))
    assert renderer.render(edited) != renderer.render(WOODPECKER_TOOLS)
    assert "A different description." in renderer.render(edited)


def test_check_mode_fails_on_a_drifted_file_and_passes_on_a_fresh_one(
    renderer: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "tools.md"
    assert renderer.main(["--check", "--output", str(target)]) == 1  # missing counts as drift
    assert renderer.main(["--output", str(target)]) == 0
    assert renderer.main(["--check", "--output", str(target)]) == 0
    target.write_text(
        target.read_text(encoding="utf-8").replace(f"{len(WOODPECKER_TOOLS)} tools", "70 tools"),
        encoding="utf-8",
    )
    assert renderer.main(["--check", "--output", str(target)]) == 1
    assert "out of date" in capsys.readouterr().err


def test_table_cells_never_break_the_table(renderer: ModuleType) -> None:
    for line in renderer.render(WOODPECKER_TOOLS).splitlines():
        if line.startswith("| `") and "Parameter" not in line:
            unescaped = re.sub(r"\\\|", "", line)
            assert unescaped.count("|") in (5, 6, 7), line
