"""Toolsets: named groups of tools an operator (WOODPECKER_TOOLSETS) or an HTTP caller (X-MCP-Toolsets) picks.

A toolset is a set of catalogue groups (`ToolSpec.group`), or `essential`, the tools marked
essential. Choosing toolsets only ever narrows: the operator's choice narrows the catalogue
the server registers, and a caller's header narrows that again, never beyond it. Unknown
names are refused with one line naming the entry, like the allow and deny lists.
"""

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from domain.config import ConfigError
from domain.tool_filter import ESSENTIAL
from domain.tools import Catalogue

TOOLSETS_VARIABLE = "WOODPECKER_TOOLSETS"
TOOLSETS_HEADER = "X-MCP-Toolsets"
ALL = "all"


@dataclass(frozen=True, slots=True)
class Toolsets:
    """Toolset name -> the catalogue groups it holds. `essential` and `all` are always known.

    `always`: tools every selection keeps (when the catalogue has them), because the answers and
    the docs send people to them first (the server's own state, who the token is).
    """

    groups: Mapping[str, frozenset[str]]
    always: frozenset[str] = frozenset()

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.groups, ESSENTIAL, ALL)

    def members(self, name: str, catalogue: Catalogue) -> frozenset[str]:
        if name == ALL:
            return frozenset(catalogue.names)
        if name == ESSENTIAL:
            return frozenset(t.name for t in catalogue if t.essential)
        groups = self.groups[name]
        return frozenset(t.name for t in catalogue if t.group in groups)

    def parse(self, raw: str | None, where: str) -> tuple[str, ...] | None:
        """The names in a comma list, or None when there are none (no narrowing).

        Raises:
            ConfigError: one line naming `where` and every unknown entry (with the name it most
                likely meant), and the known names.
        """
        if raw is None:
            return None
        names = tuple(dict.fromkeys(e.strip() for e in raw.split(",") if e.strip()))
        if not names:
            return None
        unknown = [name for name in names if name not in self.names]
        if unknown:
            shown = [self._shown(name) for name in unknown]
            listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
            verb = "is not a toolset" if len(shown) == 1 else "are not toolsets"
            raise ConfigError(f"{where}: {listed} {verb}; choose from {', '.join(self.names)}")
        return names

    def _shown(self, name: str) -> str:
        """An unknown entry as the error shows it: quoted with a guess, or "an entry" if it may be a secret."""
        if len(name) > 40 or not name.replace("_", "").replace("-", "").isalnum():
            return "an entry"
        folded = name.lower()
        meant = [n for n in self.names if n.startswith(folded) or folded.startswith(n)]
        meant = meant or difflib.get_close_matches(folded, self.names, n=1, cutoff=0.6)
        return f"'{name}' (did you mean {meant[0]}?)" if meant else f"'{name}'"

    def select(self, names: tuple[str, ...] | None, catalogue: Catalogue) -> Catalogue:
        """`catalogue` narrowed to the union of the named toolsets (all of it for None)."""
        if names is None:
            return catalogue
        chosen: set[str] = set(self.always)
        for name in names:
            chosen |= self.members(name, catalogue)
        return Catalogue(tuple(t for t in catalogue if t.name in chosen))


def admin_only(catalogue: Catalogue) -> frozenset[str]:
    """The tools the forge answers only for an instance admin (`ToolSpec.admin == "always"`).

    Per-client HTTP leaves them out of a non-admin's list (docs/adr/0029). Tools that need an
    admin only for some arguments (`instance_scope`, e.g. a global secret) stay listed: the
    other uses are open to everyone.
    """
    return frozenset(t.name for t in catalogue if t.admin == "always")
