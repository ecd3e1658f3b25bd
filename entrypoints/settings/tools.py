"""Which tools are registered and what their text carries: WOODPECKER_READ_ONLY, WOODPECKER_ALLOW_TOOLS,
WOODPECKER_DENY_TOOLS, WOODPECKER_TOOLSETS and WOODPECKER_MCP_TEXT."""

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BeforeValidator

from domain.config import ConfigError, parse_text_mode
from domain.tool_filter import select_tools
from domain.tools import Catalogue
from domain.toolsets import TOOLSETS_VARIABLE
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS
from entrypoints.settings.values import exact_flag
from entrypoints.settings.variables import line


def _text(raw: object) -> str:
    return parse_text_mode(None if raw is None else str(raw))


ReadOnly = Annotated[bool, exact_flag("WOODPECKER_READ_ONLY")]
TextMode = Annotated[Literal["full", "summary"], BeforeValidator(_text)]


@dataclass
class Selected:
    """The tools a server registers (None when a variable was refused), with its warning and error lines."""

    tools: Catalogue | None = None
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def select(allow: str | None, deny: str | None, toolsets: str | None, *, read_only: bool) -> Selected:
    """Toolsets narrow what the allow, deny and read-only settings left: a tool is registered
    only if every one of them keeps it. Every variable is checked, so one start reports them all."""
    found = Selected()
    try:
        selection = select_tools(WOODPECKER_TOOLS, allow=allow, deny=deny, read_only=read_only)
    except ConfigError as e:
        found.errors.append(line(str(e)))
        selection = None
    try:
        names = WOODPECKER_TOOLSETS.parse(toolsets, TOOLSETS_VARIABLE)
    except ConfigError as e:
        found.errors.append(line(str(e)))
    if found.errors or selection is None:
        return found
    found.tools = WOODPECKER_TOOLSETS.select(names, selection.catalogue)
    found.warnings.extend(line(w) for w in selection.warnings)
    if len(found.tools) == 0 and len(selection.catalogue) > 0:
        found.warnings.append(line(f"{TOOLSETS_VARIABLE} leaves no tools: the server will list none"))
    return found
