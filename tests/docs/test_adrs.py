"""The architecture decision records keep their shape, and what they cite as confirmation exists."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADR_DIR = ROOT / "docs" / "adr"
TESTS = ROOT / "tests"
SECTIONS = ("## Context", "## Considered options", "## Decision", "## Consequences", "## Confirmation")
OUR_PACKAGES = ("domain", "ports", "adapters", "entrypoints", "sandbox")


def python_test_files() -> list[Path]:
    return [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]


def adrs() -> list[Path]:
    return sorted(ADR_DIR.glob("[0-9][0-9][0-9][0-9]-*.md"))


def confirmation(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("## Confirmation", 1)[1] if "## Confirmation" in text else ""


def test_the_decision_log_starts_at_0001_and_no_number_repeats() -> None:
    # Numbers are reserved per branch while work runs in parallel, so one may be missing until
    # its branch lands; none may be used twice.
    numbers = [int(p.name[:4]) for p in adrs()]
    assert numbers[0] == 1
    assert len(set(numbers)) == len(numbers)
    assert len(numbers) >= 12


@pytest.mark.parametrize("path", adrs(), ids=lambda p: p.name[:4])
def test_every_adr_has_the_required_sections(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# {path.name[:4]}. "), "the title must repeat the record's number"
    assert re.search(r"^- Status: (proposed|accepted|superseded by .+)$", text, re.M)
    assert re.search(r"^- Date: \d{4}-\d{2}-\d{2}$", text, re.M)
    positions = [text.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions), [s for s, p in zip(SECTIONS, positions, strict=True) if p < 0]
    assert positions == sorted(positions), "sections out of order"
    consequences = text.split("## Consequences", 1)[1].split("## Confirmation", 1)[0]
    assert "Good, because" in consequences and "Bad, because" in consequences


def _defined_tests() -> set[str]:
    names: set[str] = set()
    for source in python_test_files():
        names.update(re.findall(r"^\s*(?:async\s+)?def (test_\w+)", source.read_text(encoding="utf-8"), re.M))
        names.update(re.findall(r"^(Test\w+)\s*=", source.read_text(encoding="utf-8"), re.M))
    return names


def test_every_test_an_adr_names_exists() -> None:
    defined = _defined_tests()
    cited = {(p.name[:4], name) for p in adrs() for name in re.findall(r"`(test_\w+)`", confirmation(p))}
    missing = sorted(c for c in cited if c[1] not in defined)
    assert not missing, f"ADRs cite tests that do not exist: {missing}"


def test_every_path_an_adr_names_exists() -> None:
    cited = {
        (p.name[:4], ref)
        for p in adrs()
        for ref in re.findall(
            r"`((?:domain|ports|adapters|entrypoints|sandbox|tests|scripts|docs)/[\w./-]*)`",
            p.read_text(encoding="utf-8"),
        )
    }
    missing = sorted(c for c in cited if not _exists(c[1]))
    assert not missing, f"ADRs cite paths that do not exist: {missing}"


def _exists(cited: str) -> bool:
    """A cited path, or the package a cited module has since become under the same import name
    (an accepted record is never edited: `adapters/mcp_server.py` is `adapters/mcp_server/` now)."""
    path = ROOT / cited
    return path.exists() or (path.suffix == ".py" and (path.with_suffix("") / "__init__.py").exists())


def test_every_contract_is_explained_and_every_cited_contract_or_lint_rule_is_configured() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract_ids = {c["id"] for c in config["tool"]["importlinter"]["contracts"]}
    ruff_rules = set(config["tool"]["ruff"]["lint"]["select"])
    cited: set[str] = set()
    for path in adrs():
        text = " ".join(path.read_text(encoding="utf-8").split())
        for group in re.findall(r"contracts?(?: ids?)? ((?:`[a-z-]+`(?:, | and |,? )?)+)", text):
            for contract in re.findall(r"`([a-z-]+)`", group):
                assert contract in contract_ids, (path.name, contract)
                cited.add(contract)
        for rule in re.findall(r"rule `([A-Z]+\d+)`", text):
            assert any(rule.startswith(s) for s in ruff_rules), (path.name, rule)
    assert cited == contract_ids, f"contracts no ADR explains: {sorted(contract_ids - cited)}"


def test_no_test_patches_our_own_modules() -> None:
    # ADR 0005: fakes over mocks. Patching a module of ours couples a test to the implementation.
    ours = "|".join(OUR_PACKAGES)
    pattern = re.compile(rf"(?:mock\.patch(?:\.object)?|patch|monkeypatch\.setattr)\(\s*['\"](?:{ours})\.")
    offenders = [
        str(source.relative_to(ROOT))
        for source in python_test_files()
        if pattern.search(source.read_text(encoding="utf-8"))
    ]
    assert not offenders


def test_the_index_lists_every_record() -> None:
    index = (ADR_DIR / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in adrs() if f"]({p.name})" not in index] == []
