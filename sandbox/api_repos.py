"""Repository and current-user routes of the simulated Woodpecker (activation, patch, move, deactivate, feed)."""

import copy
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response

from sandbox.api_common import (
    field_opt_bool,
    field_opt_int,
    field_opt_str,
    field_str_list,
    go_bool,
    null_if_empty,
    paginate,
)
from sandbox.http import BadBody, Ctx, Route, empty, json_response, text
from sandbox.models import APPROVAL_MODES, EVENTS, JSON, VISIBILITIES, ForgeRepo, Org, Perm, Repo, User
from sandbox.world import World

MAX_TIMEOUT = 120  # minutes; WOODPECKER_MAX_PIPELINE_TIMEOUT's default


# ---------------------------------------------------------------------- the signed-in user


def get_self(ctx: Ctx) -> Response:
    return json_response(ctx.me.api())


def _push_or_admin_repos(world: World, user: User) -> list[Repo]:
    """Repositories joined with the user's stored perms that grant push or admin (the feed's condition)."""
    out = []
    for repo in world.repos.values():
        perm = world.perms.get((user.id, repo.id))
        if perm and (perm.push or perm.admin):
            out.append(repo)
    return out


def get_feed(ctx: Ctx) -> Response:
    world, user = ctx.world, ctx.me
    repos = _push_or_admin_repos(world, user)
    if go_bool(ctx.query.get("latest")):
        # One entry per active repository; a repository without pipelines has only repo fields.
        entries: list[JSON] = []
        for repo in sorted((r for r in repos if r.active), key=lambda r: r.full_name):
            pipelines = sorted(
                (p for p in world.pipelines.values() if p.repo_id == repo.id),
                key=lambda p: p.id,
                reverse=True,
            )
            if pipelines:
                entries.append(pipelines[0].feed(repo))
            else:
                entries.append({"repo_id": repo.id, "full_name": repo.full_name})
        return json_response(entries)
    by_id = {r.id: r for r in repos}
    pipelines = sorted(
        (p for p in world.pipelines.values() if p.repo_id in by_id), key=lambda p: p.id, reverse=True
    )
    feed = [p.feed(by_id[p.repo_id]) for p in pipelines[:50]]
    return json_response(null_if_empty(feed))


def post_token(ctx: Ctx) -> Response:
    token = ctx.world.new_token()
    ctx.world.sessions[token] = ctx.me.id
    return text(200, token)


def delete_token(ctx: Ctx) -> Response:
    # Rotating the user's hash invalidates every token issued so far.
    for token in [t for t, uid in ctx.world.sessions.items() if uid == ctx.me.id]:
        del ctx.world.sessions[token]
    return post_token(ctx)


def _forge_perm(world: World, user: User, fr: ForgeRepo) -> Perm:
    """What the forge reports for the user on a repository."""
    repo = next((r for r in world.repos.values() if r.forge_remote_id == fr.forge_remote_id), None)
    stored = world.perms.get((user.id, repo.id)) if repo else None
    admin = user.login in fr.admins or bool(stored and stored.admin)
    push = admin or bool(stored and stored.push)
    pull = push or bool(stored and stored.pull) or not fr.private
    return Perm(pull, push, admin)


def _repo_from_forge(fr: ForgeRepo, forge_id: int = 1) -> Repo:
    return Repo(
        id=0,
        forge_remote_id=fr.forge_remote_id,
        org_id=0,
        owner=fr.owner,
        name=fr.name,
        user_id=0,
        # The gitea driver's toRepo sets no visibility; activation sets it from the forge's private flag.
        visibility="",
        private=fr.private,
        active=False,
        allow_pr=False,
        default_branch=fr.default_branch,
        forge_id=forge_id,
        timeout=0,
        require_approval="",
        pr_enabled=True,
    )


def get_user_repos(ctx: Ctx) -> Response:
    world, user = ctx.world, ctx.me
    name = ctx.query.get("name", "")
    listed = [
        r
        for r in world.repos.values()
        if (p := world.perms.get((user.id, r.id))) and (p.pull or p.push or p.admin) and name in r.full_name
    ]
    if go_bool(ctx.query.get("all")):
        # Forge repositories the user can push to, merged with Woodpecker's records by forge_remote_id.
        out: list[JSON] = []
        seen: set[int] = set()
        for fr in world.forge_repos.values():
            perm = _forge_perm(world, user, fr)
            if not perm.push or name not in fr.full_name:
                continue
            existing = next((r for r in listed if r.forge_remote_id == fr.forge_remote_id), None)
            if existing is not None:
                out.append(existing.api())
                seen.add(existing.id)
            elif perm.admin:
                out.append(_repo_from_forge(fr).api())
        for repo in listed:
            if repo.id not in seen and world.forge_repo_for(repo) is None:
                stale = repo.api()
                stale["has_no_forge_repo"] = True
                out.append(stale)
        return json_response(out)
    out = []
    for repo in sorted((r for r in listed if r.active), key=lambda r: r.full_name):
        entry = repo.api()
        pipelines = world.repo_pipelines(repo.id)
        if pipelines:
            entry["last_pipeline"] = pipelines[0].api(with_workflows=False)
        out.append(entry)
    return json_response(out)


def refresh_repos(ctx: Ctx) -> Response:
    return json_response("Ok")


# ---------------------------------------------------------------------- repositories


def lookup_repo(ctx: Ctx) -> Response:
    return json_response(ctx.the_repo.api())


def get_repo(ctx: Ctx) -> Response:
    return json_response(ctx.the_repo.api())


def get_repo_permissions(ctx: Ctx) -> Response:
    assert ctx.perm is not None
    return json_response(ctx.perm.api())


def _get_or_create_org(world: World, owner: str, forge_id: int) -> Org:
    org = world.org_by_name(owner, forge_id)
    if org is None:
        org = Org(id=world.new_id(), name=owner, is_user=world.user_by_login(owner, forge_id) is not None)
        world.orgs[org.id] = org
    return org


def post_repo(ctx: Ctx) -> Response:
    world, user = ctx.world, ctx.me
    frid = ctx.query.get("forge_remote_id", "")
    if frid in ("", "0"):
        return text(400, "No forge_remote_id provided")
    repo = next(
        (r for r in world.repos.values() if r.forge_remote_id == frid and r.forge_id == user.forge_id), None
    )
    if repo is not None and repo.active:
        return text(409, "Repository is already active.")
    fr = world.forge_repos.get(frid)
    if fr is None:
        return text(500, "Could not fetch repository from forge.")
    perm = _forge_perm(world, user, fr)
    if not perm.admin:
        return text(403, "User has to be a admin of this repository")
    if repo is None:
        repo = _repo_from_forge(fr, user.forge_id)
        repo.id = world.new_id()
        repo.require_approval = "forks"
        repo.allow_pr = True
        repo.allow_deploy = False
        # WOODPECKER_DEFAULT_CANCEL_PREVIOUS_PIPELINE_EVENTS' default (an empty setting keeps it).
        repo.cancel_previous_pipeline_events = ["push", "pull_request"]
        repo.visibility = "private" if fr.private else "public"
        repo.timeout = 60
        world.repos[repo.id] = repo
    else:
        repo.owner, repo.name, repo.private = fr.owner, fr.name, fr.private
    repo.active = True
    repo.user_id = user.id
    repo.org_id = _get_or_create_org(world, repo.owner, user.forge_id).id
    now = world.now()
    world.perms[(user.id, repo.id)] = Perm(perm.pull, perm.push, perm.admin, now, now, now)
    return json_response(repo.api())


def get_all_repos(ctx: Ctx) -> Response:
    active_only = go_bool(ctx.query.get("active"))
    repos = sorted(
        (r for r in ctx.world.repos.values() if r.active or not active_only), key=lambda r: r.full_name
    )
    return json_response([r.api() for r in paginate(ctx.query, repos)])


def repair_all_repos(ctx: Ctx) -> Response:
    failed = [r.id for r in ctx.world.repos.values() if r.active and ctx.world.forge_repo_for(r) is None]
    if failed:
        return json_response({"error": "failed to repair some repos", "failed_repos": failed}, status=500)
    return empty(204)


_PATCH_FLAGS = (
    "allow_pr",
    "allow_deploy",
    "config_extension_exclusive",
    "config_extension_netrc",
    "registry_extension_netrc",
    "secret_extension_netrc",
)
_PATCH_STRINGS = (
    "config_file",
    "config_extension_endpoint",
    "registry_extension_endpoint",
    "secret_extension_endpoint",
)


@dataclass(frozen=True)
class _RepoPatch:
    """What a PATCH body asks to change (None: leave as is)."""

    timeout: int | None
    trusted: dict[str, bool | None] | None
    require_approval: str | None
    visibility: str | None
    allowed_users: list[str] | None
    cancel_events: list[str] | None
    netrc: list[str] | None
    flags: dict[str, bool | None]
    strings: dict[str, str | None]


def _read_repo_patch(body: dict[str, Any]) -> _RepoPatch:
    """Raises BadBody for a field of the wrong type."""
    trusted = body.get("trusted")
    if trusted is not None and not isinstance(trusted, dict):
        raise BadBody("trusted must be an object")
    return _RepoPatch(
        timeout=field_opt_int(body, "timeout"),
        trusted=None
        if trusted is None
        else {k: field_opt_bool(trusted, k) for k in ("network", "volumes", "security")},
        require_approval=field_opt_str(body, "require_approval"),
        visibility=field_opt_str(body, "visibility"),
        allowed_users=field_str_list(body, "approval_allowed_users"),
        cancel_events=field_str_list(body, "cancel_previous_pipeline_events"),
        netrc=field_str_list(body, "netrc_trusted"),
        flags={k: field_opt_bool(body, k) for k in _PATCH_FLAGS},
        strings={k: field_opt_str(body, k) for k in _PATCH_STRINGS},
    )


def _apply_trust(repo: Repo, admin: bool, patch: _RepoPatch) -> Response | None:
    """What only an instance admin may change: a timeout over the maximum, the trusted settings."""
    if patch.timeout is not None and patch.timeout > MAX_TIMEOUT and not admin:
        return text(403, f"Timeout is not allowed to be higher than max timeout ({MAX_TIMEOUT} min)")
    if patch.trusted is not None:
        changes = any(v is not None and v != repo.trusted[k] for k, v in patch.trusted.items())
        if changes and not admin:
            return text(403, "Insufficient privileges")
        for k, v in patch.trusted.items():
            if v is not None:
                repo.trusted[k] = v
    return None


def _apply_settings(repo: Repo, patch: _RepoPatch) -> Response | None:
    """The rest, in Woodpecker's order: a refused value stops there (and the caller stores nothing)."""
    for key in ("allow_pr", "allow_deploy"):
        if patch.flags[key] is not None:
            setattr(repo, key, patch.flags[key])
    if patch.require_approval is not None:
        if patch.require_approval not in APPROVAL_MODES:
            return text(400, "Invalid require-approval setting")
        repo.require_approval = patch.require_approval
    if patch.allowed_users is not None:
        repo.approval_allowed_users = patch.allowed_users
    if patch.timeout is not None:
        repo.timeout = patch.timeout
        if patch.timeout < 1:
            return text(400, "Timeout must be at least 1 minute")
    if patch.strings["config_file"] is not None:
        repo.config_file = patch.strings["config_file"]
    if patch.cancel_events is not None:
        if any(e not in EVENTS for e in patch.cancel_events):
            return empty(400)
        repo.cancel_previous_pipeline_events = patch.cancel_events
    if patch.netrc is not None:
        repo.netrc_trusted = patch.netrc
    if patch.visibility is not None:
        if patch.visibility not in VISIBILITIES:
            return text(400, "Invalid visibility type")
        repo.visibility = patch.visibility
    for key in _PATCH_STRINGS[1:]:
        if patch.strings[key] is not None:
            setattr(repo, key, patch.strings[key])
    for key in _PATCH_FLAGS[2:]:
        if patch.flags[key] is not None:
            setattr(repo, key, patch.flags[key])
    return None


def patch_repo(ctx: Ctx) -> Response:
    repo, user = ctx.the_repo, ctx.me
    try:
        patch = _read_repo_patch(ctx.bind())
    except BadBody:
        return empty(400)
    # PatchRepo changes the loaded record in memory and stores it only at the end: a refused value
    # answers before UpdateRepo, so nothing of the call is kept (a real 3.17.0 showed it).
    draft = copy.deepcopy(repo)
    refused = _apply_trust(draft, user.admin, patch)
    if refused is None:
        refused = _apply_settings(draft, patch)
    if refused is not None:
        return refused
    vars(repo).update(vars(draft))
    return json_response(repo.api())


def chown_repo(ctx: Ctx) -> Response:
    ctx.the_repo.user_id = ctx.me.id
    return json_response(ctx.the_repo.api())


def delete_repo(ctx: Ctx) -> Response:
    world, repo = ctx.world, ctx.the_repo
    body = repo.api()
    if go_bool(ctx.query.get("remove")):
        purge_repo(world, repo.id)
        return json_response(body)
    # Deactivate: history kept, owner cleared; the repository still answers GET and lookup.
    repo.active = False
    repo.user_id = 0
    return json_response(repo.api())


def purge_repo(world: World, repo_id: int) -> None:
    """Purge: the record, its pipelines, logs, secrets, registries, crons and perms all go."""
    repo = world.repos.pop(repo_id)
    for pid in [p.id for p in world.pipelines.values() if p.repo_id == repo.id]:
        for step in world.pipelines[pid].steps():
            world.logs.pop(step.id, None)
            world.big_logs.pop(step.id, None)
        world.configs.pop(pid, None)
        del world.pipelines[pid]
    for table in (world.secrets, world.registries):
        for key in [k for k, v in table.items() if v.repo_id == repo.id]:
            del table[key]
    for key in [k for k, c in world.crons.items() if c.repo_id == repo.id]:
        del world.crons[key]
    for pk in [k for k in world.perms if k[1] == repo.id]:
        del world.perms[pk]
    for name in [n for n, rid in world.redirections.items() if rid == repo.id]:
        del world.redirections[name]


def repair_repo(ctx: Ctx) -> Response:
    repo = ctx.the_repo
    if ctx.world.users.get(repo.user_id) is None:
        repo.user_id = ctx.me.id
    if ctx.world.forge_repo_for(repo) is None:
        return empty(500)
    return empty(204)


def move_repo(ctx: Ctx) -> Response:
    world, repo, user = ctx.world, ctx.the_repo, ctx.me
    to = ctx.query.get("to")
    if to is None:
        return empty(500)  # "missing required to query value", AbortWithError -> empty body
    # model.ParseRepo (3.17) cuts at the first slash, so a GitLab subgroup path (group/sub/project) moves too.
    owner, _, name = to.partition("/")
    if not owner or not name:
        return empty(500)
    # MoveRepo reads the target from the forge by name (forge.Repo(user, "", owner, name)): the forge
    # must hold a repository there (a 404 is 500), and the caller must administer it (else 401).
    target = next((f for f in world.forge_repos.values() if f.answers_to(to)), None)
    if target is None:
        return empty(500)
    if not _forge_perm(world, user, target).admin:
        return empty(401)
    holder = next(
        (r for r in world.repos.values() if r.id != repo.id and r.forge_remote_id == target.forge_remote_id),
        None,
    )
    if holder is not None:
        return empty(500)  # another record holds that forge repository: the store refuses the update
    # The record takes the target's identity (repo.Update(from)): its forge id, names and default branch,
    # whichever forge repository that is; a redirection from the old name is kept.
    world.redirections[repo.full_name] = repo.id
    if to != target.full_name:
        target.owner, target.name = owner, name  # the forge's current name of a renamed repository
    repo.forge_remote_id = target.forge_remote_id
    repo.owner, repo.name = owner, name
    repo.default_branch = target.default_branch
    repo.org_id = _get_or_create_org(world, owner, repo.forge_id).id
    if world.version == "3.11":
        # Woodpecker 3.11 performs the move and then answers 500 with an empty body.
        return empty(500)
    return empty(204)


def get_branches(ctx: Ctx) -> Response:
    world, repo = ctx.world, ctx.the_repo
    if world.users.get(repo.user_id) is None:
        return empty(404)  # no owner user (deactivated): the store lookup fails
    fr = world.forge_repo_for(repo)
    branches = fr.branches if fr else []
    return json_response(paginate(ctx.query, branches))


def get_pull_requests(ctx: Ctx) -> Response:
    world, repo = ctx.world, ctx.the_repo
    if world.users.get(repo.user_id) is None:
        return empty(404)
    fr = world.forge_repo_for(repo)
    prs = [{"index": idx, "title": title} for idx, title in (fr.pull_requests if fr else [])]
    return json_response(paginate(ctx.query, prs))


ROUTES = [
    Route("GET", "/api/user", get_self, "user"),
    Route("GET", "/api/user/feed", get_feed, "user"),
    Route("POST", "/api/user/token", post_token, "user"),
    Route("DELETE", "/api/user/token", delete_token, "user"),
    Route("GET", "/api/user/repos", get_user_repos, "user"),
    Route("POST", "/api/user/repos/refresh", refresh_repos, "user"),
    Route("GET", "/api/repos/lookup/*repo_full_name", lookup_repo, "lookup"),
    Route("POST", "/api/repos", post_repo, "user"),
    Route("GET", "/api/repos", get_all_repos, "admin"),
    Route("POST", "/api/repos/repair", repair_all_repos, "admin"),
    Route("GET", "/api/repos/:repo_id/permissions", get_repo_permissions, "repo"),
    Route("GET", "/api/repos/:repo_id", get_repo, "pull"),
    Route("GET", "/api/repos/:repo_id/branches", get_branches, "pull"),
    Route("GET", "/api/repos/:repo_id/pull_requests", get_pull_requests, "pull"),
    Route("PATCH", "/api/repos/:repo_id", patch_repo, "repo_admin"),
    Route("DELETE", "/api/repos/:repo_id", delete_repo, "repo_admin"),
    Route("POST", "/api/repos/:repo_id/chown", chown_repo, "repo_admin"),
    Route("POST", "/api/repos/:repo_id/repair", repair_repo, "repo_admin"),
    Route("POST", "/api/repos/:repo_id/move", move_repo, "repo_admin"),
]
