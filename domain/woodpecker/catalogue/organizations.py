"""Organizations: listing, reading, their permissions, deleting one."""

from domain.tools import Endpoint, Param, ToolSpec
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    ORG_ID,
    PAGING,
    PAGING_QUERY,
    WRITE_DESTRUCTIVE,
    asks_always,
    read_tool,
    write_tool,
)
from domain.woodpecker.read_back import gone

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_organizations",
        group="organizations",
        admin="always",
        description=("Organizations of the instance, not personal accounts. Instance admin only."),
        params=PAGING,
        endpoints=(Endpoint("GET", "/api/orgs", query=PAGING_QUERY),),
        notes=("Only entries with is_user=false; ordered by id; null when empty.",),
        answer=Listed("organizations"),
    ),
    read_tool(
        "get_organization",
        group="organizations",
        description=("An organization by id."),
        params=(ORG_ID,),
        endpoints=(Endpoint("GET", "/api/orgs/{org_id}"),),
        notes=(
            (
                "Needs membership (instance admins always pass). A single object, although the swagger "
                "declares an array."
            ),
        ),
        answer=One("organization", "Organization {id}."),
    ),
    read_tool(
        "lookup_organization",
        group="organizations",
        description=("An organization (or personal account) by forge name, with its org_id."),
        params=(
            Param(
                "name",
                "string",
                True,
                "Forge name; GitLab subgroups use slashes.",
                constraints={
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": r"^(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
                },
            ),
        ),
        endpoints=(Endpoint("GET", "/api/orgs/lookup/{name}"),),
        notes=(
            (
                "Searched within the caller's forge. 404 for an unknown name, and for a private "
                "organization unless the caller is an instance admin or it is the caller's own."
            ),
            "Wildcard route; slashes may travel literally.",
        ),
        answer=One("organization", "Organization {name} has id {id}."),
        wildcard="name",
    ),
    read_tool(
        "get_organization_permissions",
        group="organizations",
        description=("Whether this account is member or admin of an organization."),
        params=(ORG_ID,),
        endpoints=(Endpoint("GET", "/api/orgs/{org_id}/permissions"),),
        notes=("Answers {member, admin}, a single object (the swagger says array).",),
        answer=One("permissions", "Permissions of this account on organization {org_id}."),
    ),
    write_tool(
        "delete_organization",
        settled=gone("organization"),
        group="organizations",
        annotations=WRITE_DESTRUCTIVE,
        admin="always",
        guard=asks_always("org_id"),
        description=(
            "Deletes an organization from Woodpecker with its secrets and every repository of it"
            " Woodpecker holds, their pipelines and logs. Instance admin only. Always asks a person."
        ),
        params=(ORG_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/orgs/{org_id}", success=204),),
        notes=(
            "Needs organization admin and instance admin.",
            (
                "Deletes the organization's secrets, then every repository record of the organization as "
                "delete_repository with remove=true does (pipelines, logs, its secrets and registries), "
                "then the organization; its registries and agents are left behind (3.17.0)."
            ),
        ),
        answer=Done("Deleted organization {org_id}."),
        question=Ask(
            (
                "This will delete organization {org_id} from Woodpecker, with its secrets and every one of "
                "its repositories that Woodpecker holds: their pipelines, logs, secrets and settings."
            ),
            (
                "The repositories stay in the forge, but their Woodpecker history is gone. This cannot be "
                "undone.",
            ),
        ),
        why="Its secrets and its repositories' pipelines, logs and settings are gone for good.",
    ),
)
