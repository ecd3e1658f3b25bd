"""Cron routes of a repository, with their validation quirks."""

from starlette.responses import Response

from sandbox.api_common import (
    answer,
    field_opt_bool,
    field_opt_str,
    field_str,
    field_str_map,
    go_int,
    null_if_empty,
    paginate,
)
from sandbox.api_pipelines import new_cron_pipeline
from sandbox.cronexpr import CronError, next_exec, parse
from sandbox.http import BadBody, Ctx, Route, empty, json_response, text
from sandbox.models import Cron


def _cron_id(ctx: Ctx) -> int | Response:
    cid = go_int(ctx.params.get("cron"))
    if cid is None:
        return text(
            400,
            f"Error parsing cron id. strconv.ParseInt: parsing {ctx.params.get('cron')!r}: invalid syntax",
        )
    return cid


def _find_cron(ctx: Ctx) -> Cron | Response:
    cid = _cron_id(ctx)
    if isinstance(cid, Response):
        return cid
    cron = ctx.world.crons.get(cid)
    if cron is None or cron.repo_id != ctx.the_repo.id:
        return empty(404)
    return cron


def _validate_cron(cron: Cron) -> str | None:
    if not cron.name:
        return "name is required"
    if not cron.schedule:
        return "schedule is required"
    try:
        parse(cron.schedule)
    except CronError as exc:
        return f"can't parse schedule: {exc}"
    return None


def _branch_exists(ctx: Ctx, branch: str) -> bool:
    fr = ctx.world.forge_repo_for(ctx.the_repo)
    return fr is not None and fr.branch_head(branch) is not None


def list_crons(ctx: Ctx) -> Response:
    rows = sorted((c for c in ctx.world.crons.values() if c.repo_id == ctx.the_repo.id), key=lambda c: c.name)
    return json_response(null_if_empty([c.api() for c in paginate(ctx.query, rows)]))


def get_cron(ctx: Ctx) -> Response:
    return answer(_find_cron(ctx))


def create_cron(ctx: Ctx) -> Response:
    world = ctx.world
    try:
        body = ctx.bind()
        cron = Cron(
            id=0,
            name=field_str(body, "name").strip(),
            repo_id=ctx.the_repo.id,
            creator_id=ctx.me.id,
            schedule=field_str(body, "schedule").strip(),
            created=world.now(),
            timezone=field_str(body, "timezone").strip() or "UTC",
            branch=field_str(body, "branch").strip(),
            # Since 3.13 an omitted `enabled` is false: the job is created switched off.
            enabled=bool(field_opt_bool(body, "enabled")),
            variables=field_str_map(body, "variables"),
        )
    except BadBody as exc:
        return text(400, f"Error parsing request. {exc}")
    problem = _validate_cron(cron)
    if problem:
        return text(422, f"Error inserting cron. validate failed: {problem}")
    try:
        cron.next_exec = next_exec(cron.schedule, cron.timezone, world.clock())
    except CronError as exc:
        return text(400, f"Error inserting cron. schedule could not parsed: {exc}")
    if cron.branch and not _branch_exists(ctx, cron.branch):
        return text(400, "Error inserting cron. branch not resolved: branch not found")
    if any(c.repo_id == cron.repo_id and c.name == cron.name for c in world.crons.values()):
        return text(409, "cron with this exists for this repo already")
    cron.id = world.new_id()
    world.crons[cron.id] = cron
    return json_response(cron.api())


def patch_cron(ctx: Ctx) -> Response:
    world = ctx.world
    cid = _cron_id(ctx)
    if isinstance(cid, Response):
        return cid
    try:
        body = ctx.bind()
        name = field_opt_str(body, "name")
        schedule = field_opt_str(body, "schedule")
        timezone = field_opt_str(body, "timezone")
        branch = field_opt_str(body, "branch")
        enabled = field_opt_bool(body, "enabled")
        variables = field_str_map(body, "variables")
    except BadBody as exc:
        return text(400, f"Error parsing request. {exc}")
    found = _find_cron(ctx)
    if isinstance(found, Response):
        return found
    cron = Cron(**vars(found))
    now = world.clock()
    # Blank strings are ignored field by field.
    if branch is not None and branch.strip():
        if not _branch_exists(ctx, branch.strip()):
            return text(400, "Error inserting cron. branch not resolved: branch not found")
        cron.branch = branch.strip()
    if timezone is not None and timezone.strip():
        try:
            cron.next_exec = next_exec(cron.schedule, timezone.strip(), now)
        except CronError as exc:
            return text(400, f"Error inserting cron. schedule could not parsed: {exc}")
        cron.timezone = timezone.strip()
    if schedule is not None and schedule.strip():
        try:
            cron.next_exec = next_exec(schedule.strip(), cron.timezone, now)
        except CronError as exc:
            return text(400, f"Error inserting cron. schedule could not parsed: {exc}")
        cron.schedule = schedule.strip()
    if name is not None and name.strip():
        cron.name = name.strip()
    if enabled is not None:
        cron.enabled = enabled
        if enabled:
            try:
                cron.next_exec = next_exec(cron.schedule, cron.timezone, now)
            except CronError as exc:
                return text(500, f"Cron schedule could not parsed: {exc}")
    if variables is not None:
        cron.variables = variables
    cron.creator_id = ctx.me.id
    problem = _validate_cron(cron)
    if problem:
        return text(422, f"Error inserting cron. validate failed: {problem}")
    if any(
        c.id != cron.id and c.repo_id == cron.repo_id and c.name == cron.name for c in world.crons.values()
    ):
        return text(500, f"Error updating cron {name!r}. UNIQUE constraint failed")
    world.crons[cron.id] = cron
    return json_response(cron.api())


def delete_cron(ctx: Ctx) -> Response:
    found = _find_cron(ctx)
    if isinstance(found, Response):
        return found
    del ctx.world.crons[found.id]
    return empty(204)


def run_cron(ctx: Ctx) -> Response:
    found = _find_cron(ctx)
    if isinstance(found, Response):
        return found
    return new_cron_pipeline(ctx, found)


ROUTES = [
    Route("GET", "/api/repos/:repo_id/cron", list_crons, "push"),
    Route("POST", "/api/repos/:repo_id/cron", create_cron, "push"),
    Route("GET", "/api/repos/:repo_id/cron/:cron", get_cron, "push"),
    Route("POST", "/api/repos/:repo_id/cron/:cron", run_cron, "push"),
    Route("PATCH", "/api/repos/:repo_id/cron/:cron", patch_cron, "push"),
    Route("DELETE", "/api/repos/:repo_id/cron/:cron", delete_cron, "push"),
]
