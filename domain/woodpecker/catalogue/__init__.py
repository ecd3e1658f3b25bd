"""The Woodpecker tools as data, one module per resource; this index puts them together in order.

Each resource module declares its tools in `TOOLS`, in the order clients list them. The tools of the
shared catalogue (catalogue.json with catalogue-beyond.json's entries) follow it exactly; a module's
`ADDED` names its documented additions (read-only, never guarded) and `ADDED_PARAMS` the parameters
it adds to a shared tool after that tool's own. The conformance test (tests/domain/test_catalogue.py)
accepts those by name and nothing else.
"""

from collections.abc import Mapping
from dataclasses import replace
from types import ModuleType

from domain.tools import Catalogue, Endpoint, Param, ToolSpec
from domain.woodpecker.catalogue import (
    account,
    agents,
    crons,
    forges,
    history,
    logs,
    organizations,
    pipelines,
    registries,
    repositories,
    secrets,
    server,
    users,
    validation,
)

# In the order the tools are listed: the shared catalogue's order, each addition after its group.
RESOURCES: tuple[ModuleType, ...] = (
    repositories,
    pipelines,
    history,
    validation,
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

ORGANIZATION_READ = "/api/orgs/{org_id}"


def _reads_its_organization_first(tool: ToolSpec) -> ToolSpec:
    """A tool with a route under an organization reads that organization before the call, as
    `requests.organization_addressed` says: listed here so the tool reference names that request."""
    steps = tuple(
        Endpoint("GET", ORGANIZATION_READ, when=e.when, step="before the call (the organization must exist)")
        for e in tool.endpoints
        if e.step is None
        and e.path.startswith(ORGANIZATION_READ)
        and (e.method, e.path) != ("GET", ORGANIZATION_READ)
    )
    return replace(tool, endpoints=steps[:1] + tool.endpoints) if steps else tool


WOODPECKER_TOOLS = Catalogue(
    tuple(_reads_its_organization_first(tool) for resource in RESOURCES for tool in resource.TOOLS)
)

_ADDED_NAMES = frozenset(name for resource in RESOURCES for name in getattr(resource, "ADDED", ()))
ADDED_TOOLS: tuple[ToolSpec, ...] = tuple(tool for tool in WOODPECKER_TOOLS if tool.name in _ADDED_NAMES)
ADDED_PARAMS: Mapping[str, tuple[Param, ...]] = {
    name: params for resource in RESOURCES for name, params in getattr(resource, "ADDED_PARAMS", {}).items()
}
