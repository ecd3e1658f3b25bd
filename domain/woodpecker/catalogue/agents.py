"""Agents of the instance or of an organization."""

from collections.abc import Mapping
from typing import Any

from domain.tools import (
    Arg,
    BodyField,
    Endpoint,
    Fixed,
    GuardRule,
    Merged,
    Omitted,
    Param,
    Passed,
    Source,
    ToolSpec,
)
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, because
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    PAGING,
    PAGING_QUERY,
    WRITE_ADDS,
    WRITE_DESTRUCTIVE,
    asks_always,
    id_param,
    optional,
    read_tool,
    write_tool,
)
from domain.woodpecker.plans import Answers, Args, Call, Calls, FindInPages
from domain.woodpecker.read_back import gone
from domain.woodpecker.requests import Request, record, segment

_AGENT_ID = id_param("agent_id", "From list_agents.")

_AGENT_ORG_ID = id_param(
    "org_id",
    "Its agents (org admin); omit: the instance's (admin).",
    required=False,
)

_AGENT_NAME = Param("name", "string", True, "", constraints={"minLength": 1, "maxLength": 250})

_CUSTOM_LABELS = Param(
    "custom_labels",
    "object",
    False,
    "Refused: set WOODPECKER_AGENT_LABELS on the agent.",
    constraints={
        "additionalProperties": {"type": "string", "maxLength": 500},
        "propertyNames": {"minLength": 1, "maxLength": 100},
    },
)


def _instance_or_organization(
    method: str,
    path: str,
    *,
    query: Mapping[str, Source] | None = None,
    body: Mapping[str, BodyField] | None = None,
    success: int = 200,
) -> tuple[Endpoint, Endpoint]:
    """The instance's route for `path` without org_id, the organization's route with it."""
    return (
        Endpoint(
            method, "/api" + path, when=Omitted("org_id"), query=query or {}, body=body or {}, success=success
        ),
        Endpoint(
            method,
            "/api/orgs/{org_id}" + path,
            when=Passed("org_id"),
            query=query or {},
            body=body or {},
            success=success,
        ),
    )


# ------------------------------------------------------------------ the read-modify-write of an agent

AGENT_PAGE_SIZE = 50
# An organization with more agents than this is not walked further (bounded work per call).
AGENT_MAX_PAGES = 100


def org_agents(org_id: int, page: int) -> Request:
    return Request(
        "GET", f"/api/orgs/{segment(org_id)}/agents", {"page": str(page), "perPage": str(AGENT_PAGE_SIZE)}
    )


def merge_agent(current: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """Woodpecker overwrites both name and no_schedule: the one not passed comes from the stored agent."""
    stored = record(current, "agent")
    if "no_schedule" in args:
        no_schedule = args["no_schedule"]
    elif isinstance(stored.get("no_schedule"), bool):
        no_schedule = stored["no_schedule"]
    else:
        # Woodpecker always answers the flag. Without it, keeping "the stored value" would mean sending
        # false: a drained agent put back in service by a call that never named no_schedule, unasked.
        raise ValueError("the stored agent does not say whether it is drained (no_schedule)")
    return {"name": args["name"] if "name" in args else stored.get("name", ""), "no_schedule": no_schedule}


def _agent_patch(args: Args, answers: Answers) -> Request:
    if "org_id" in args:
        path = f"/api/orgs/{segment(args['org_id'])}/agents/{segment(args['agent_id'])}"
    else:
        path = f"/api/agents/{segment(args['agent_id'])}"
    return Request("PATCH", path, body=merge_agent(answers["current"], args))


def _of_an_organization(args: Args) -> bool:
    return "org_id" in args


def _of_the_instance(args: Args) -> bool:
    return "org_id" not in args


# The organization's routes have no GET for one agent: its record is found in the organization's list.
_READ_MERGE_WRITE = Calls(
    (
        Call(
            "current",
            lambda args, answers: Request("GET", f"/api/agents/{segment(args['agent_id'])}"),
            only_if=_of_the_instance,
        ),
        FindInPages(
            "current",
            lambda args, page: org_agents(args["org_id"], page),
            lambda args, entry: entry.get("id") == args["agent_id"],
            page_size=AGENT_PAGE_SIZE,
            max_pages=AGENT_MAX_PAGES,
            not_found=lambda args: (
                f"Agent {args['agent_id']} is not an agent of organization {args['org_id']}. "
                "Call list_agents with that org_id to see its agents."
            ),
            not_a_list="Woodpecker answered the organization's agents in an unexpected shape.",
            only_if=_of_an_organization,
        ),
        Call("patched", _agent_patch),
    )
)


def _stored_agent(args: Args) -> Mapping[str, Request | FindInPages] | None:
    """The stored agent, when no_schedule is false (the guard asks if it is drained now): the
    instance's by id, an organization's found in its list (the plan's own read)."""
    if args.get("no_schedule") is not False:
        return None
    if "org_id" in args:
        find = next(s for s in _READ_MERGE_WRITE.steps if isinstance(s, FindInPages))
        return {"agent": find}
    return {"agent": Request("GET", f"/api/agents/{segment(args['agent_id'])}")}


TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_agents",
        group="agents",
        admin="instance_scope",
        admin_when="org_id omitted",
        description=(
            "Build agents and their state (look here when pipelines stay pending). "
            "Without org_id: instance admin."
        ),
        params=(_AGENT_ORG_ID, *PAGING),
        endpoints=(*_instance_or_organization("GET", "/agents", query=PAGING_QUERY),),
        notes=(
            (
                "Woodpecker returns every agent's token in clear text: replace it with a redaction "
                "marker (keep the key, so it does not read as 'no token')."
            ),
            (
                "null when empty. The organization route exists only when the server allows "
                "user-registered agents. org_id -1 in a record marks an instance agent."
            ),
        ),
        answer=Listed("agents"),
    ),
    read_tool(
        "get_agent",
        group="agents",
        admin="always",
        description=("One agent. Instance admin only."),
        params=(_AGENT_ID,),
        endpoints=(Endpoint("GET", "/api/agents/{agent_id}"),),
        notes=("The API returns the token in clear text; redact it.",),
        answer=One("agent", "Agent {id}."),
    ),
    read_tool(
        "list_agent_tasks",
        group="agents",
        admin="always",
        untrusted_output=True,
        description=("What an agent runs now. Instance admin only."),
        params=(_AGENT_ID,),
        endpoints=(Endpoint("GET", "/api/agents/{agent_id}/tasks"),),
        notes=("null when the agent is idle.", "Task names and labels come from pipeline configs."),
        answer=Listed("tasks"),
    ),
    write_tool(
        "create_agent",
        group="agents",
        guard=GuardRule(
            when="always",
            condition="Every call asks, whatever the arguments.",
            targets=("name", "org_id"),
            body_bound=True,
            needs_current_state=False,
        ),
        annotations=WRITE_ADDS,
        admin="instance_scope",
        admin_when="org_id omitted",
        description=(
            "Creates an agent; its token, shown once, lets a machine take pipelines "
            "and secrets. Without org_id: instance admin. Always asks a person."
        ),
        params=(
            _AGENT_NAME,
            _AGENT_ORG_ID,
            Param(
                "no_schedule",
                "boolean",
                False,
                "Connects but gets no work.",
                constraints={"default": False},
            ),
            _CUSTOM_LABELS,
            CONFIRM_TOKEN,
        ),
        endpoints=(
            *_instance_or_organization(
                "POST", "/agents", body={"name": Arg("name"), "no_schedule": Arg("no_schedule")}
            ),
        ),
        notes=(
            "The one tool whose answer carries an agent token unredacted; say what it is.",
            "Instance agents get org_id -1 and the caller as owner_id.",
        ),
        answer=One(
            "agent",
            "Created agent {id}; its token is in this result, shown only this once.",
        ),
        question=Ask(
            "This will register a new agent{agent_scope}.",
            (
                "An agent takes workflows, with their secrets, from every repository it serves. Its token "
                "comes back in the answer, so it ends up in this conversation.",
            ),
            (("Agent name", "name"),),
            fields=True,
        ),
        why="An agent takes workflows with their secrets; its token lands in the conversation.",
        unsupported=("custom_labels", "an agent's labels come from WOODPECKER_AGENT_LABELS on its host"),
    ),
    write_tool(
        "update_agent",
        group="agents",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="org_id omitted",
        guard=GuardRule(
            when="undrains",
            condition=(
                "Asks when no_schedule is false and the stored agent has it true (or could not be "
                "read as false): a drained agent takes workflows again."
            ),
            targets=("agent_id", "org_id"),
            body_bound=True,
            needs_current_state=True,
        ),
        description=(
            "Renames an agent or sets no_schedule. Without org_id: instance admin. Asks a person"
            " before a drained agent takes work again."
        ),
        params=(
            _AGENT_ID,
            _AGENT_ORG_ID,
            optional(_AGENT_NAME),
            Param(
                "no_schedule",
                "boolean",
                False,
                "true: no new work; false on a drained agent asks.",
            ),
            _CUSTOM_LABELS,
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/agents/{agent_id}",
                when=Omitted("org_id"),
                step="before the update (current record)",
            ),
            Endpoint(
                "GET",
                "/api/orgs/{org_id}/agents",
                when=Passed("org_id"),
                step="before the update (current record: walk the pages until the id is found)",
                query={"perPage": Fixed("50")},
            ),
            *_instance_or_organization(
                "PATCH",
                "/agents/{agent_id}",
                body={"name": Merged("name"), "no_schedule": Merged("no_schedule")},
            ),
        ),
        notes=(
            (
                "Woodpecker overwrites name and no_schedule from the body: always send both, taking "
                "the one not passed from the current record."
            ),
            "Answers the agent with its token in clear text: redact it.",
            (
                "409 on a store failure (instance route), 500 (organization route); an agent of "
                "another organization answers 404 on the organization route."
            ),
            "A call with nothing to change is an error.",
        ),
        answer=One("agent", "Updated agent {id}."),
        question=Ask(
            "This will change agent {agent_id}{agent_owner}.",
            when=(
                because(
                    r.UNDRAINS_AGENT,
                    "The agent is drained (no_schedule), or this server could not read it: it takes "
                    "workflows again, with their secrets, from every repository it serves.",
                ),
            ),
            fields=True,
        ),
        why="A drained agent takes workflows with their secrets again.",
        current=_stored_agent,
        changes=("name", "no_schedule"),
        unsupported=("custom_labels", "an agent's labels come from WOODPECKER_AGENT_LABELS on its host"),
        plan=_READ_MERGE_WRITE,
    ),
    write_tool(
        "delete_agent",
        settled=gone("agent"),
        group="agents",
        annotations=WRITE_DESTRUCTIVE,
        admin="instance_scope",
        admin_when="org_id omitted",
        guard=asks_always("agent_id", "org_id"),
        description=(
            "Deletes an agent (drain it first with no_schedule). Without org_id: "
            "instance admin. Always asks a person."
        ),
        params=(_AGENT_ID, _AGENT_ORG_ID, CONFIRM_TOKEN),
        endpoints=(*_instance_or_organization("DELETE", "/agents/{agent_id}", success=204),),
        notes=("409 'Agent has running tasks' while it is busy. 204 on success (the swagger says 200).",),
        answer=Done("Deleted agent {agent_id}."),
        question=Ask(
            "This will delete agent {agent_id}{agent_owner}.",
            ("Its token stops working and its host cannot reconnect until a new agent is registered.",),
        ),
        why="Its host cannot reconnect until a new agent is registered.",
        hints={
            "conflict": "An agent with running tasks cannot be deleted: wait for them (list_agent_tasks) and try again."
        },
    ),
)
