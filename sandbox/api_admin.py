"""Instance routes: users, organizations, agents, forges, queue, log level, version and health."""

import re
from typing import Any

from starlette.responses import Response

from sandbox.api_common import (
    answer,
    field_bool,
    field_int,
    field_str,
    go_int,
    null_if_empty,
    paginate,
)
from sandbox.api_repos import purge_repo
from sandbox.http import BadBody, Ctx, Route, empty, json_response, text
from sandbox.models import FORGE_TYPES, JSON, LOG_LEVELS, Agent, Forge, Org, User

_LOGIN = re.compile(r"^[a-zA-Z0-9\-_.]+$")
SOURCE = "https://github.com/woodpecker-ci/woodpecker"
# The Ed25519 key a real server signs its extension requests with (only its public half, made for the
# sandbox: nothing here signs anything). Woodpecker answers it PEM-encoded, as text/plain.
SIGNATURE_PUBLIC_KEY = (
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAHs+T7m6Wb/KVUtjB7mNBqhulHbntihMi5CojkWhOxAs=\n"
    "-----END PUBLIC KEY-----\n"
)


# ---------------------------------------------------------------------- server


def version(ctx: Ctx) -> Response:
    return json_response({"source": SOURCE, "version": ctx.world.version_string})


def healthz(ctx: Ctx) -> Response:
    return empty(204)


def signature_public_key(ctx: Ctx) -> Response:
    return text(200, SIGNATURE_PUBLIC_KEY)


def get_log_level(ctx: Ctx) -> Response:
    return json_response({"log-level": ctx.world.log_level})


def set_log_level(ctx: Ctx) -> Response:
    try:
        level = field_str(ctx.bind(), "log-level")
    except BadBody:
        return empty(400)
    if level not in (*LOG_LEVELS, ""):
        return empty(400)  # zerolog.ParseLevel failed: AbortWithError -> empty body
    ctx.world.log_level = level
    return json_response({"log-level": level})


def _queue_task(ctx: Ctx, task: Any) -> JSON:
    world = ctx.world
    out: JSON = task.api()
    pipeline = world.pipelines.get(task.pipeline_id)
    agent = world.agents.get(task.agent_id)
    out["pipeline_number"] = pipeline.number if pipeline else 0
    out["agent_name"] = agent.name if agent else ""
    return out


def queue_info(ctx: Ctx) -> Response:
    world = ctx.world
    pending = [_queue_task(ctx, t) for t in world.tasks if not t.running]
    running = [_queue_task(ctx, t) for t in world.tasks if t.running]
    body = {
        "pending": pending,
        "waiting_on_deps": [],
        "running": running,
        "stats": {
            "worker_count": world.worker_count,
            "pending_count": len(pending),
            "waiting_on_deps_count": 0,
            "running_count": len(running),
        },
        "paused": world.queue_paused,
    }
    return json_response(body, indent=True)


def queue_pause(ctx: Ctx) -> Response:
    ctx.world.queue_paused = True
    return empty(204)


def queue_resume(ctx: Ctx) -> Response:
    ctx.world.queue_paused = False
    return empty(204)


def queue_norunning(ctx: Ctx) -> Response:
    # The real handler blocks until nothing runs; the sandbox never runs anything for real.
    return empty(204)


# ---------------------------------------------------------------------- users


def list_users(ctx: Ctx) -> Response:
    users = sorted(ctx.world.users.values(), key=lambda u: u.login)
    return json_response(null_if_empty([u.api() for u in paginate(ctx.query, users)]))


def _lookup_user(ctx: Ctx) -> User | Response:
    forge_id = go_int(ctx.query.get("forge_id", "1"))
    if forge_id is None:
        return empty(400)
    remote = ctx.query.get("forge_remote_id", "")
    world = ctx.world
    if remote not in ("", "0"):
        user = next(
            (u for u in world.users.values() if u.forge_id == forge_id and u.forge_remote_id == remote), None
        )
    else:
        user = world.user_by_login(ctx.params["login"], forge_id)
    return empty(404) if user is None else user


def get_user(ctx: Ctx) -> Response:
    return answer(_lookup_user(ctx))


def post_user(ctx: Ctx) -> Response:
    world = ctx.world
    try:
        body = ctx.bind()
        login = field_str(body, "login")
        email = field_str(body, "email")
        avatar = field_str(body, "avatar_url")
        forge_id = max(field_int(body, "forge_id"), 1)
    except BadBody as exc:
        return text(400, str(exc))
    if not _LOGIN.match(login) or len(login) > 250:
        return text(400, "invalid user login")
    # `admin` in the body is ignored; the forge_remote_id of a pre-created account is "0".
    if world.user_by_login(login, forge_id) is not None:
        return text(500, "UNIQUE constraint failed: users.forge_id, users.login")
    if any(u.forge_id == forge_id and u.forge_remote_id == "0" for u in world.users.values()):
        return text(500, "UNIQUE constraint failed: users.forge_id, users.forge_remote_id")
    org = world.org_by_name(login, forge_id)
    if org is None:
        org = Org(id=world.new_id(), name=login, is_user=True, forge_id=forge_id)
        world.orgs[org.id] = org
    else:
        org.is_user = True
    user = User(
        id=world.new_id(),
        login=login,
        email=email,
        avatar_url=avatar,
        forge_id=forge_id,
        forge_remote_id="0",
        org_id=org.id,
    )
    world.users[user.id] = user
    return json_response(user.api())


def patch_user(ctx: Ctx) -> Response:
    world = ctx.world
    try:
        body = ctx.bind()
        login = field_str(body, "login")
        email = field_str(body, "email")
        avatar = field_str(body, "avatar_url")
        admin = field_bool(body, "admin")
        forge_id = max(field_int(body, "forge_id"), 1)
        remote = field_str(body, "forge_remote_id")
    except BadBody:
        return empty(400)
    # The row is found by the body's forge_id + forge_remote_id. When none matches, Woodpecker
    # overwrites an empty record (id 0), stores nothing and echoes it: the path login is never used.
    user = next(
        (u for u in world.users.values() if u.forge_id == forge_id and u.forge_remote_id == remote), None
    )
    if user is None:
        ghost = User(id=0, login=login, email=email, avatar_url=avatar, forge_id=0, admin=admin)
        return json_response(ghost.api())
    if any(
        u.id != user.id and u.forge_id == user.forge_id and u.login == login for u in world.users.values()
    ):
        return empty(409)
    # Every one of these is overwritten, even when the body left it out: that blanks the account.
    user.login, user.email, user.avatar_url, user.admin = login, email, avatar, admin
    return json_response(user.api())


def delete_user(ctx: Ctx) -> Response:
    found = _lookup_user(ctx)
    if isinstance(found, Response):
        return found
    world = ctx.world
    world.orgs.pop(found.org_id, None)
    del world.users[found.id]
    for token in [t for t, uid in world.sessions.items() if uid == found.id]:
        del world.sessions[token]
    return empty(204)


# ---------------------------------------------------------------------- organizations


def list_orgs(ctx: Ctx) -> Response:
    orgs = sorted((o for o in ctx.world.orgs.values() if not o.is_user), key=lambda o: o.id)
    return json_response(null_if_empty([o.api() for o in paginate(ctx.query, orgs)]))


def lookup_org(ctx: Ctx) -> Response:
    user = ctx.user
    if user is None:
        return empty(500)  # the handler dereferences the missing user: gin's recovery answers 500
    name = ctx.params["org_full_name"].lstrip("/")
    org = ctx.world.org_by_name(name, user.forge_id)
    if org is None:
        return empty(404)
    if org.private and not user.admin and org.name != user.login:
        return empty(404)
    return json_response(org.api())


def org_permissions(ctx: Ctx) -> Response:
    user, org = ctx.user, ctx.the_org
    if user is None:
        return json_response({"member": False, "admin": False})
    if (org.is_user and org.name == user.login and org.forge_id == user.forge_id) or (
        user.admin and not org.is_user
    ):
        return json_response({"member": True, "admin": True})
    if org.is_user or org.forge_id != user.forge_id:
        return json_response({"member": False, "admin": False})
    m = ctx.world.membership(user, org)
    return json_response({"member": m.member, "admin": m.admin})


def get_org(ctx: Ctx) -> Response:
    # A single object, although the swagger declares an array.
    return json_response(ctx.the_org.api())


def delete_org(ctx: Ctx) -> Response:
    """orgDelete (server/store/datastore/org.go, 3.17.0), outside a transaction: the secrets with the
    org's id, then every repository record of the org purged (pipelines, logs, its secrets, registries
    and perms), then the org row. The org's registries and agents stay, orphaned."""
    world, org = ctx.world, ctx.the_org
    for key in [k for k, v in world.secrets.items() if v.org_id == org.id]:
        del world.secrets[key]
    for repo_id in [r.id for r in world.repos.values() if r.org_id == org.id]:
        purge_repo(world, repo_id)
    if org.id not in world.orgs:
        # The empty org of a missing id (id 0): its secrets were every repository's and every global
        # one; then no org row of id 0 is found to delete: 404.
        return empty(404)
    del world.orgs[org.id]
    return empty(204)


# ---------------------------------------------------------------------- agents


def _agent_body(ctx: Ctx) -> tuple[str, bool]:
    body = ctx.bind()
    # custom_labels are ignored by create and update alike.
    return field_str(body, "name"), field_bool(body, "no_schedule")


def list_agents(ctx: Ctx) -> Response:
    agents = sorted(ctx.world.agents.values(), key=lambda a: a.id)
    return json_response(null_if_empty([a.api() for a in paginate(ctx.query, agents)]))


def _new_agent(ctx: Ctx, org_id: int) -> Response:
    try:
        name, no_schedule = _agent_body(ctx)
    except BadBody as exc:
        return text(400, str(exc))
    world = ctx.world
    now = world.now()
    agent = Agent(
        id=world.new_id(),
        name=name,
        owner_id=ctx.me.id,
        token=world.new_token(),
        org_id=org_id,
        created=now,
        updated=now,
        no_schedule=no_schedule,
    )
    world.agents[agent.id] = agent
    return json_response(agent.api())


def post_agent(ctx: Ctx) -> Response:
    return _new_agent(ctx, -1)


def _agent(ctx: Ctx) -> Agent | Response:
    aid = go_int(ctx.params.get("agent_id"))
    if aid is None:
        return empty(400)
    agent = ctx.world.agents.get(aid)
    return empty(404) if agent is None else agent


def get_agent(ctx: Ctx) -> Response:
    return answer(_agent(ctx))


def agent_tasks(ctx: Ctx) -> Response:
    found = _agent(ctx)
    if isinstance(found, Response):
        return found
    tasks = [t.api() for t in ctx.world.tasks if t.running and t.agent_id == found.id]
    return json_response(null_if_empty(tasks))


def patch_agent(ctx: Ctx) -> Response:
    try:
        name, no_schedule = _agent_body(ctx)
    except BadBody:
        return empty(400)
    found = _agent(ctx)
    if isinstance(found, Response):
        return found
    # Both are overwritten from the body: an omitted name blanks it.
    found.name, found.no_schedule, found.updated = name, no_schedule, ctx.world.now()
    return json_response(found.api())


def _delete_idle(ctx: Ctx, found: Agent | Response) -> Response:
    """Both agent routes refuse to delete an agent that still runs a task."""
    if isinstance(found, Response):
        return found
    if any(t.running and t.agent_id == found.id for t in ctx.world.tasks):
        return text(409, "Agent has running tasks")
    del ctx.world.agents[found.id]
    return empty(204)


def delete_agent(ctx: Ctx) -> Response:
    return _delete_idle(ctx, _agent(ctx))


def list_org_agents(ctx: Ctx) -> Response:
    agents = sorted((a for a in ctx.world.agents.values() if a.org_id == ctx.the_org.id), key=lambda a: a.id)
    return json_response(null_if_empty([a.api() for a in paginate(ctx.query, agents)]))


def post_org_agent(ctx: Ctx) -> Response:
    return _new_agent(ctx, ctx.the_org.id)


def _org_agent(ctx: Ctx) -> Agent | Response:
    aid = go_int(ctx.params.get("agent_id"))
    if aid is None:
        return text(400, "Invalid agent ID")
    agent = ctx.world.agents.get(aid)
    if agent is None or agent.org_id != ctx.the_org.id:
        return text(404, "Agent not found")
    return agent


def patch_org_agent(ctx: Ctx) -> Response:
    found = _org_agent(ctx)
    if isinstance(found, Response):
        return found
    try:
        name, no_schedule = _agent_body(ctx)
    except BadBody as exc:
        return text(400, str(exc))
    found.name, found.no_schedule, found.updated = name, no_schedule, ctx.world.now()
    return json_response(found.api())


def delete_org_agent(ctx: Ctx) -> Response:
    return _delete_idle(ctx, _org_agent(ctx))


# ---------------------------------------------------------------------- forges


def _full_view(ctx: Ctx) -> bool:
    return ctx.user is not None and ctx.user.admin


def list_forges(ctx: Ctx) -> Response:
    forges = sorted(ctx.world.forges.values(), key=lambda f: f.id)
    return json_response([f.api(full=_full_view(ctx)) for f in paginate(ctx.query, forges)])


def _forge(ctx: Ctx) -> Forge | Response:
    fid = go_int(ctx.params.get("forge_id"))
    if fid is None:
        return empty(400)
    forge = ctx.world.forges.get(fid)
    return empty(404) if forge is None else forge


def get_forge(ctx: Ctx) -> Response:
    found = _forge(ctx)
    return found if isinstance(found, Response) else json_response(found.api(full=_full_view(ctx)))


def _forge_fields(body: dict[str, Any]) -> dict[str, Any]:
    options = body.get("additional_options")
    if options is not None and not isinstance(options, dict):
        raise BadBody("additional_options must be an object")
    kind = field_str(body, "type")
    if kind and kind not in FORGE_TYPES:
        raise BadBody(f"unknown forge type {kind}")
    return {
        "type": kind,
        "url": field_str(body, "url"),
        "client": field_str(body, "client"),
        "oauth_client_secret": field_str(body, "oauth_client_secret"),
        "oauth_host": field_str(body, "oauth_host"),
        "skip_verify": field_bool(body, "skip_verify"),
        "additional_options": options,
    }


def post_forge(ctx: Ctx) -> Response:
    try:
        fields = _forge_fields(ctx.bind())
    except BadBody as exc:
        return text(400, str(exc))
    forge = Forge(id=ctx.world.new_id(), **fields)
    ctx.world.forges[forge.id] = forge
    return json_response(forge.api())


def patch_forge(ctx: Ctx) -> Response:
    try:
        fields = _forge_fields(ctx.bind())
    except BadBody:
        return empty(400)
    found = _forge(ctx)
    if isinstance(found, Response):
        return found
    secret = fields.pop("oauth_client_secret")
    # type, url, client, oauth_host, skip_verify and additional_options are all overwritten.
    for key, value in fields.items():
        setattr(found, key, value)
    if secret:
        found.oauth_client_secret = secret
    return json_response(found.api())


def delete_forge(ctx: Ctx) -> Response:
    found = _forge(ctx)
    if isinstance(found, Response):
        return found
    del ctx.world.forges[found.id]
    return empty(204)


ROUTES = [
    Route("GET", "/version", version),
    Route("GET", "/healthz", healthz),
    Route("GET", "/api/signature/public-key", signature_public_key, "anon"),
    Route("GET", "/api/log-level", get_log_level, "admin"),
    Route("POST", "/api/log-level", set_log_level, "admin"),
    Route("GET", "/api/queue/info", queue_info, "admin"),
    Route("POST", "/api/queue/pause", queue_pause, "admin"),
    Route("POST", "/api/queue/resume", queue_resume, "admin"),
    Route("GET", "/api/queue/norunningpipelines", queue_norunning, "admin"),
    Route("GET", "/api/users", list_users, "admin"),
    Route("POST", "/api/users", post_user, "admin"),
    Route("GET", "/api/users/:login", get_user, "admin"),
    Route("PATCH", "/api/users/:login", patch_user, "admin"),
    Route("DELETE", "/api/users/:login", delete_user, "admin"),
    Route("GET", "/api/orgs", list_orgs, "admin"),
    Route("GET", "/api/orgs/lookup/*org_full_name", lookup_org, "anon"),
    Route("GET", "/api/orgs/:org_id/permissions", org_permissions, "org"),
    Route("GET", "/api/orgs/:org_id", get_org, "org_member"),
    Route("DELETE", "/api/orgs/:org_id", delete_org, "org_admin_admin"),
    Route("GET", "/api/orgs/:org_id/agents", list_org_agents, "org_admin"),
    Route("POST", "/api/orgs/:org_id/agents", post_org_agent, "org_admin"),
    Route("PATCH", "/api/orgs/:org_id/agents/:agent_id", patch_org_agent, "org_admin"),
    Route("DELETE", "/api/orgs/:org_id/agents/:agent_id", delete_org_agent, "org_admin"),
    Route("GET", "/api/agents", list_agents, "admin"),
    Route("POST", "/api/agents", post_agent, "admin"),
    Route("GET", "/api/agents/:agent_id", get_agent, "admin"),
    Route("GET", "/api/agents/:agent_id/tasks", agent_tasks, "admin"),
    Route("PATCH", "/api/agents/:agent_id", patch_agent, "admin"),
    Route("DELETE", "/api/agents/:agent_id", delete_agent, "admin"),
    Route("GET", "/api/forges", list_forges, "anon"),
    Route("GET", "/api/forges/:forge_id", get_forge, "anon"),
    Route("POST", "/api/forges", post_forge, "admin"),
    Route("PATCH", "/api/forges/:forge_id", patch_forge, "admin"),
    Route("DELETE", "/api/forges/:forge_id", delete_forge, "admin"),
]
