"""Which tools a server registers: WOODPECKER_ALLOW_TOOLS, WOODPECKER_DENY_TOOLS and WOODPECKER_READ_ONLY."""

import re
from collections.abc import Callable
from dataclasses import dataclass

from domain.config import ConfigError
from domain.tools import Catalogue, ToolSpec

_WHERE_NAMES_ARE = " (names are case-sensitive; see tools/list or docs/tools.md)"
ALLOW_VARIABLE = "WOODPECKER_ALLOW_TOOLS"
DENY_VARIABLE = "WOODPECKER_DENY_TOOLS"
READ_ONLY_VARIABLE = "WOODPECKER_READ_ONLY"
ESSENTIAL = "essential"

_TOOL_NAME_CHARS = re.compile(r"[a-z0-9_*]+")


@dataclass(frozen=True, slots=True)
class ToolSelection:
    catalogue: Catalogue
    warnings: tuple[str, ...]


def _looks_like_a_secret(entry: str) -> bool:
    """Tool names are short lower-case words joined by underscores; a pasted token is not."""
    if not _TOOL_NAME_CHARS.fullmatch(entry):
        return True
    if len(entry) >= 20 and any(ch.isdigit() for ch in entry):
        return True
    return len(entry) >= 16 and "_" not in entry


def _named(entry: str) -> str:
    return "an entry that looks like a token" if _looks_like_a_secret(entry) else f"entry '{entry}'"


def _entries(raw: str | None) -> list[str]:
    """Comma-separated, each trimmed; empty entries are ignored."""
    if raw is None:
        return []
    return [e.strip() for e in raw.split(",") if e.strip()]


def _matches(entry: str, catalogue: Catalogue) -> frozenset[str]:
    if entry == ESSENTIAL:
        return frozenset(t.name for t in catalogue if t.essential)
    if entry.endswith("*"):
        prefix = entry[:-1]
        return frozenset(t.name for t in catalogue if t.name.startswith(prefix))
    return frozenset({entry}) if entry in catalogue else frozenset()


def _syntax_error(variable: str, entry: str) -> str | None:
    if "*" in entry[:-1]:
        return (
            f"{variable}: {_named(entry)} has a * that is not at its end; "
            "only a trailing * (a prefix such as list_*) is supported"
        )
    if entry == ESSENTIAL and variable == DENY_VARIABLE:
        return f"{DENY_VARIABLE}: 'essential' can only be used in {ALLOW_VARIABLE}"
    return None


def _named_tools(
    variable: str,
    raw: str | None,
    catalogue: Catalogue,
    errors: list[str],
    check: Callable[[str, frozenset[str]], None] | None = None,
) -> set[str]:
    """The tools the entries of `raw` name. A misplaced * or an entry naming no tool is added to
    `errors`; `check` sees every other entry with the tools it names."""
    named: set[str] = set()
    for entry in _entries(raw):
        problem = _syntax_error(variable, entry)
        if problem is not None:
            errors.append(problem)
            continue
        hits = _matches(entry, catalogue)
        if not hits:
            errors.append(f"{variable}: {_named(entry)} matches no tool{_WHERE_NAMES_ARE}")
        elif check is not None:
            check(entry, hits)
        named |= hits
    return named


def select_tools(
    catalogue: Catalogue, *, allow: str | None, deny: str | None, read_only: bool
) -> ToolSelection:
    """The tools to register, in catalogue order, with warnings to print at startup.

    Allow entries (all tools when there are none) are united, read-only keeps read tools
    only, then deny entries are subtracted.

    Raises:
        ConfigError: naming every problem: a misplaced *, `essential` in the deny list, an
        entry that matches no tool, or an exact write-tool name allowed under read-only.
        An entry that looks like a pasted token is described, never echoed.
    """
    errors: list[str] = []
    warnings: list[str] = []
    write_names = frozenset(t.name for t in catalogue if not t.is_read)

    def allowed_under_read_only(entry: str, hits: frozenset[str]) -> None:
        if not read_only or not hits <= write_names:
            return
        if entry in catalogue:
            errors.append(
                f"{ALLOW_VARIABLE}: {entry} is a write tool, which {READ_ONLY_VARIABLE}=true never registers"
            )
        else:
            warnings.append(
                f"{ALLOW_VARIABLE}: {_named(entry)} matches only write tools, which {READ_ONLY_VARIABLE}=true leaves out"
            )

    allow_entries = _entries(allow)
    allowed = _named_tools(ALLOW_VARIABLE, allow, catalogue, errors, allowed_under_read_only)
    denied = _named_tools(DENY_VARIABLE, deny, catalogue, errors)
    if errors:
        raise ConfigError("; ".join(errors))

    def kept(tool: ToolSpec) -> bool:
        if allow_entries and tool.name not in allowed:
            return False
        if read_only and not tool.is_read:
            return False
        return tool.name not in denied

    selected = Catalogue(tuple(t for t in catalogue if kept(t)))
    if len(selected) == 0:
        warnings.append("the tool filter leaves no tools: the server will list none")
    return ToolSelection(catalogue=selected, warnings=tuple(warnings))
