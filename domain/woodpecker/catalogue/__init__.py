"""The Woodpecker tools as data, one module per resource; this index puts them together in order.

Each resource module declares its tools in `TOOLS`, in the order clients list them. The tools of the
shared catalogue (catalogue.json with catalogue-beyond.json's entries) follow it exactly; a module's
`ADDED` names its documented additions (read-only, never guarded) and `ADDED_PARAMS` the parameters
it adds to a shared tool after that tool's own. The conformance test (tests/domain/test_catalogue.py)
accepts those by name and nothing else.
"""

from collections.abc import Mapping
from types import ModuleType

from domain.tools import Catalogue, Param, ToolSpec
from domain.woodpecker.catalogue import (
    account,
    agents,
    crons,
    forges,
    logs,
    organizations,
    pipelines,
    registries,
    repositories,
    secrets,
    server,
    users,
)

# In the order the tools are listed: the shared catalogue's order, each addition after its group.
RESOURCES: tuple[ModuleType, ...] = (
    repositories,
    pipelines,
    logs,
    secrets,
    registries,
    crons,
    organizations,
    account,
    users,
    agents,
    forges,
    server,
)

WOODPECKER_TOOLS = Catalogue(tuple(tool for resource in RESOURCES for tool in resource.TOOLS))

_ADDED_NAMES = frozenset(name for resource in RESOURCES for name in getattr(resource, "ADDED", ()))
ADDED_TOOLS: tuple[ToolSpec, ...] = tuple(tool for tool in WOODPECKER_TOOLS if tool.name in _ADDED_NAMES)
ADDED_PARAMS: Mapping[str, tuple[Param, ...]] = {
    name: params for resource in RESOURCES for name, params in getattr(resource, "ADDED_PARAMS", {}).items()
}
