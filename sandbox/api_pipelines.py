"""Pipeline and log routes: numbering per repository, restart with parent, approve/decline only when blocked."""

import hashlib
import re
from datetime import datetime

from starlette.responses import Response

from sandbox.api_common import answer, field_str, field_str_map, go_int, paginate
from sandbox.http import BadBody, Ctx, Route, empty, json_response, stream_json, text
from sandbox.models import EVENTS, JSON, STATUSES, Config, Cron, Pipeline, Repo, Step, Task, Workflow
from sandbox.world import World

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_BUSY = ("running", "pending", "blocked")
# Branches whose (simulated) config filters every workflow out: creating a pipeline answers 204.
FILTERED_BRANCHES = ("gh-pages",)


def _rfc3339(value: str) -> int | None:
    if not _RFC3339.match(value):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def _number(ctx: Ctx) -> int | None:
    return go_int(ctx.params.get("pipeline_number"))


def _find(ctx: Ctx, lenient: bool = False) -> Pipeline | Response:
    """Parse :pipeline_number and load the pipeline (400 empty on a bad number, 404 empty if absent).

    `lenient`: handlers that ignore the parse error (`num, _ := ParseInt`) look up number 0 instead.
    """
    number = _number(ctx)
    if number is None:
        if not lenient:
            return empty(400)
        number = 0
    pipeline = ctx.world.pipeline(ctx.the_repo.id, number)
    return empty(404) if pipeline is None else pipeline


def list_pipelines(ctx: Ctx) -> Response:
    q = ctx.query
    pipelines = ctx.world.repo_pipelines(ctx.the_repo.id)
    if branch := q.get("branch"):
        pipelines = [p for p in pipelines if p.branch == branch]
    if ref := q.get("ref"):
        pipelines = [p for p in pipelines if ref in p.ref]
    if events := q.get("event"):
        wanted = events.split(",")
        if any(e not in EVENTS for e in wanted):
            return empty(400)
        pipelines = [p for p in pipelines if p.event in wanted]
    if status := q.get("status"):
        if status not in STATUSES:
            return empty(400)
        pipelines = [p for p in pipelines if p.status == status]
    if before := q.get("before"):
        limit = _rfc3339(before)
        if limit is None:
            return empty(400)
        pipelines = [p for p in pipelines if p.created < limit]
    if after := q.get("after"):
        limit = _rfc3339(after)
        if limit is None:
            return empty(400)
        pipelines = [p for p in pipelines if p.created > limit]
    # Always an array; list entries carry no workflows.
    return json_response([p.api(with_workflows=False) for p in paginate(q, pipelines)])


def get_pipeline(ctx: Ctx) -> Response:
    if ctx.params.get("pipeline_number") == "latest":
        branch = ctx.query.get("branch", ctx.the_repo.default_branch)
        candidates = [p for p in ctx.world.repo_pipelines(ctx.the_repo.id) if p.branch == branch]
        if not candidates:
            return empty(404)
        return json_response(max(candidates, key=lambda p: p.id).api())
    return answer(_find(ctx))


def get_config(ctx: Ctx) -> Response:
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    return json_response([c.api() for c in ctx.world.configs.get(found.id, [])])


def _meta_pipeline(p: Pipeline | None) -> JSON:
    if p is None:
        return {"commit": {"author": {}}}
    out: JSON = {
        "number": p.number,
        "created": p.created,
        "started": p.started,
        "finished": p.finished,
        "status": p.status,
        "event": p.event,
        "event_reason": p.event_reason,
        "forge_url": p.forge_url,
        "target": p.deploy_to,
        "task": p.deploy_task,
    }
    commit: JSON = {
        "sha": p.commit,
        "ref": p.ref,
        "refspec": p.refspec,
        "branch": p.branch,
        "message": p.message,
        "timestamp": p.timestamp,
        "author": {k: v for k, v in (("name", p.author), ("email", p.author_email)) if v},
        "changed_files": p.changed_files,
        "labels": p.pr_labels,
        "milestone": p.pr_milestone,
        "draft": p.pr_draft,
    }
    out["commit"] = {k: v for k, v in commit.items() if v or k == "author"}
    out.update(
        parent=p.parent, rerun_count=p.rerun_count, cron=p.cron, author=p.author, avatar=p.author_avatar
    )
    if p.release:
        out["release"] = dict(p.release)
    return {k: v for k, v in out.items() if v or k == "commit"}


def get_metadata(ctx: Ctx) -> Response:
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    world, repo = ctx.world, ctx.the_repo
    previous = [p for p in world.repo_pipelines(repo.id) if p.branch == found.branch and p.id < found.id]
    api = repo.api()
    meta_repo = {
        "id": repo.id,
        "name": repo.name,
        "owner": repo.owner,
        "org_id": repo.org_id,
        "remote_id": repo.forge_remote_id,
        "forge_url": api["forge_url"],
        "clone_url": api["clone_url"],
        "clone_url_ssh": api["clone_url_ssh"],
        "private": repo.private,
        "default_branch": repo.default_branch,
        "trusted": {k: v for k, v in repo.trusted.items() if v},
    }
    forge = world.forges.get(repo.forge_id)
    return json_response(
        {
            "repo": {k: v for k, v in meta_repo.items() if v or k == "trusted"},
            "curr": _meta_pipeline(found),
            "prev": _meta_pipeline(max(previous, key=lambda p: p.id) if previous else None),
            "workflow": {},
            "step": {},
            "sys": {
                "name": "woodpecker",
                "host": "ci.example.org",
                "url": "https://ci.example.org",
                "version": world.version_string,
            },
            "forge": {"type": forge.type, "url": forge.url} if forge else {},
        }
    )


def _fresh_workflows(
    world: World, pipeline_id: int, template: list[Workflow], environ: dict[str, str]
) -> list[Workflow]:
    """Workflows and steps of a new run: same names, everything pending, new ids."""
    out: list[Workflow] = []
    for wf in template:
        new_wf = Workflow(
            id=world.new_id(),
            pipeline_id=pipeline_id,
            pid=wf.pid,
            name=wf.name,
            state="pending",
            environ=dict(environ),
        )
        for step in wf.children:
            new_wf.children.append(
                Step(
                    id=world.new_id(),
                    uuid=f"{pipeline_id:08x}-0000-4000-8000-{step.pid:012x}",
                    pipeline_id=pipeline_id,
                    pid=step.pid,
                    ppid=step.ppid,
                    name=step.name,
                    state="pending",
                    type=step.type,
                )
            )
        out.append(new_wf)
    return out


def _default_workflows(world: World, pipeline_id: int) -> list[Workflow]:
    template = Workflow(id=0, pipeline_id=0, pid=1, name="build", state="pending")
    for pid, (name, kind) in enumerate(
        (("clone", "clone"), ("build", "commands"), ("test", "commands")), start=2
    ):
        template.children.append(
            Step(id=0, uuid="", pipeline_id=0, pid=pid, ppid=1, name=name, state="pending", type=kind)
        )
    return _fresh_workflows(world, pipeline_id, [template], {})


def _enqueue(world: World, pipeline: Pipeline, repo: Repo) -> None:
    for wf in pipeline.workflows:
        world.tasks.append(
            Task(
                id=str(wf.id),
                pid=wf.pid,
                name=wf.name,
                pipeline_id=pipeline.id,
                repo_id=repo.id,
                agent_id=0,
                created=pipeline.created,
                running=False,
                labels={"platform": "linux/amd64", "repo": repo.full_name},
            )
        )


def _config_for(world: World, repo: Repo) -> list[Config]:
    latest = world.repo_pipelines(repo.id)
    return list(world.configs.get(latest[0].id, [])) if latest else []


def _filtered() -> Response:
    """A branch the pipeline config filters out: 204 with no body, flagged in a header."""
    return Response(b"", status_code=204, headers={"Pipeline-Filtered": "true"})


def _head_commit(repo: Repo, branch: str) -> str:
    return hashlib.sha1(f"{repo.full_name}@{branch}".encode(), usedforsecurity=False).hexdigest()


def _store_new(world: World, pipeline: Pipeline, repo: Repo) -> None:
    """Give a new pipeline the default workflows and the latest config, store it and queue its tasks."""
    pipeline.workflows = _default_workflows(world, pipeline.id)
    world.configs[pipeline.id] = _config_for(world, repo)
    world.pipelines[pipeline.id] = pipeline
    _enqueue(world, pipeline, repo)


def create_pipeline(ctx: Ctx) -> Response:
    world, repo, user = ctx.world, ctx.the_repo, ctx.me
    try:
        body = ctx.decode()
        branch = field_str(body, "branch")
        variables = field_str_map(body, "variables")
    except BadBody:
        return empty(400)
    fr = world.forge_repo_for(repo)
    head = fr.branch_head(branch) if fr is not None else None
    if head is None:
        # BranchHead fails for an unknown branch: AbortWithError(500) -> empty body.
        return empty(500)
    if world.users.get(repo.user_id) is None:
        return empty(500)  # pipeline.Create loads the repository's owner: none (a real 3.17.0 showed it)
    if branch in FILTERED_BRANCHES:
        return _filtered()
    now = world.now()
    pipeline = Pipeline(
        id=world.new_id(),
        repo_id=repo.id,
        number=world.next_number(repo.id),
        event="manual",
        status="pending",
        branch=branch,
        # The branch as the call spelled it (createTmpPipeline), the commit of the one BranchHead found.
        commit=_head_commit(repo, head),
        ref=branch,
        message=f"MANUAL PIPELINE @ {branch}",
        author=user.login,
        created=now,
        updated=now,
        timestamp=now,
        sender=user.login,
        author_email=user.email,
        author_avatar=user.avatar_url,
        forge_url=f"{repo.api()['forge_url']}/src/branch/{branch}",
        variables=variables or {},
        version=world.version_string,
    )
    _store_new(world, pipeline, repo)
    return json_response(pipeline.api())


def new_cron_pipeline(ctx: Ctx, cron: Cron) -> Response:
    """POST /repos/{id}/cron/{cron}: run the job now (200 raw Pipeline, 204 filtered, 500 text on forge errors)."""
    world, repo = ctx.world, ctx.the_repo
    branch = cron.branch or repo.default_branch
    fr = world.forge_repo_for(repo)
    head = fr.branch_head(branch) if fr is not None else None
    if head is None or world.users.get(repo.user_id) is None:
        return text(500, f"Error creating pipeline for cron {cron.id}. branch not found")
    if branch in FILTERED_BRANCHES:
        return _filtered()
    now = world.now()
    pipeline = Pipeline(
        id=world.new_id(),
        repo_id=repo.id,
        number=world.next_number(repo.id),
        event="cron",
        status="pending",
        branch=branch,
        commit=_head_commit(repo, head),
        ref=f"refs/heads/{branch}",
        # For cron pipelines Woodpecker uses the job's name as message and sender.
        message=cron.name,
        sender=cron.name,
        author=cron.name,
        cron=cron.name,
        created=now,
        updated=now,
        timestamp=now,
        forge_url=f"{repo.api()['forge_url']}/src/branch/{branch}",
        variables=dict(cron.variables or {}),
        version=world.version_string,
    )
    _store_new(world, pipeline, repo)
    body = pipeline.api()
    body.pop("is_prerelease", None)  # the raw model, not APIPipeline
    return json_response(body)


def restart_pipeline(ctx: Ctx) -> Response:
    world, repo = ctx.world, ctx.the_repo
    if _number(ctx) is None:
        return empty(400)
    if world.users.get(repo.user_id) is None:
        return empty(404)  # the repository owner is loaded first; deactivated repos have none
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    old = found
    event, deploy_to, deploy_task = old.event, old.deploy_to, ctx.query.get("deploy_task", old.deploy_task)
    if "event" in ctx.query:
        event = ctx.query["event"]
        if event != "deployment":
            return empty(400)
        if not repo.allow_deploy:
            return empty(403)
        deploy_to = ctx.query.get("deploy_to", old.deploy_to)
    if old.status == "blocked":
        return text(400, "cannot restart a pipeline with status blocked")
    # Every other query key (deploy_task and even access_token included) becomes an environment variable.
    envs = {k: v for k, v in ctx.query.items() if k not in ("fork", "event", "deploy_to")}
    now = world.now()
    new_id = world.new_id()
    pipeline = Pipeline(**{**vars(old), "workflows": [], "cancel_info": None})
    pipeline.id = new_id
    pipeline.number = world.next_number(repo.id)
    pipeline.parent = old.number
    pipeline.rerun_count = old.rerun_count + 1
    pipeline.status = "pending"
    pipeline.event, pipeline.deploy_to, pipeline.deploy_task = event, deploy_to, deploy_task
    pipeline.created = pipeline.updated = now
    pipeline.started = pipeline.finished = 0
    pipeline.errors = None
    pipeline.reviewed_by, pipeline.reviewed = old.reviewed_by, old.reviewed
    pipeline.version = world.version_string
    template = old.workflows or _default_workflows(world, new_id)
    pipeline.workflows = _fresh_workflows(world, new_id, template, envs)
    world.configs[new_id] = list(world.configs.get(old.id, []))
    world.pipelines[new_id] = pipeline
    _enqueue(world, pipeline, repo)
    return json_response(pipeline.api())


def _drop_tasks(world: World, pipeline: Pipeline) -> None:
    world.tasks[:] = [t for t in world.tasks if t.pipeline_id != pipeline.id]


def cancel_pipeline(ctx: Ctx) -> Response:
    found = _find(ctx, lenient=True)
    if isinstance(found, Response):
        return found
    pipeline, world = found, ctx.world
    if pipeline.status not in _BUSY:
        return text(400, "Cannot cancel a non-running or non-pending or non-blocked pipeline")
    now = world.now()
    pending_only = True
    for wf in pipeline.workflows:
        if wf.state == "pending":
            wf.state = "skipped"
        else:
            pending_only = False
            if wf.state in ("running", "blocked"):
                wf.state = "killed"  # the agent stops it on the cancel signal
                wf.finished = now
        for step in wf.children:
            if step.state == "pending":
                step.state = "canceled"
            elif step.state in ("running", "blocked"):
                step.state = "killed"
                step.exit_code = 137
                step.finished = now
    pipeline.status = "canceled" if pending_only else "killed"
    pipeline.cancel_info = {"canceled_by_user": ctx.me.login}
    pipeline.finished = pipeline.updated = now
    _drop_tasks(world, pipeline)
    return empty(204)


def approve_pipeline(ctx: Ctx) -> Response:
    found = _find(ctx, lenient=True)
    if isinstance(found, Response):
        return found
    pipeline = found
    if pipeline.status != "blocked":
        return text(400, f"cannot approve a pipeline with status {pipeline.status}")
    now = ctx.world.now()
    pipeline.status = "pending"
    pipeline.reviewed_by, pipeline.reviewed, pipeline.updated = ctx.me.login, now, now
    for wf in pipeline.workflows:
        wf.state = "pending"
        for step in wf.children:
            step.state = "pending"
    _enqueue(ctx.world, pipeline, ctx.the_repo)
    return json_response(pipeline.api())


def decline_pipeline(ctx: Ctx) -> Response:
    found = _find(ctx, lenient=True)
    if isinstance(found, Response):
        return found
    pipeline = found
    if pipeline.status != "blocked":
        return empty(500)  # a plain error, not ErrBadRequest: 500 with an empty body
    now = ctx.world.now()
    pipeline.status = "declined"
    pipeline.reviewed_by, pipeline.reviewed, pipeline.updated = ctx.me.login, now, now
    for wf in pipeline.workflows:
        wf.state = "declined"
        for step in wf.children:
            step.state = "declined"
    return json_response(pipeline.api())


def delete_pipeline(ctx: Ctx) -> Response:
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    pipeline, world = found, ctx.world
    if pipeline.status in _BUSY:
        return text(422, f"Cannot delete pipeline with status {pipeline.status}")
    for step in pipeline.steps():
        world.logs.pop(step.id, None)
        world.big_logs.pop(step.id, None)
    world.configs.pop(pipeline.id, None)
    del world.pipelines[pipeline.id]
    return empty(204)


def _step(ctx: Ctx, pipeline: Pipeline) -> Step | Response:
    step_id = go_int(ctx.params.get("step_id"))
    if step_id is None:
        return empty(400)
    step = next((s for s in pipeline.steps() if s.id == step_id), None)
    return empty(404) if step is None else step


def get_step_logs(ctx: Ctx) -> Response:
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    step = _step(ctx, found)
    if isinstance(step, Response):
        return step
    big = ctx.world.big_logs.get(step.id)
    if big is not None:
        return stream_json(big.stream())
    entries = ctx.world.logs.get(step.id)
    # No entries: the store's Find leaves the slice nil, so the answer is JSON null.
    return json_response([e.api() for e in entries] if entries else None)


def delete_step_logs(ctx: Ctx) -> Response:
    found = _find(ctx)
    if isinstance(found, Response):
        return found
    step = _step(ctx, found)
    if isinstance(step, Response):
        return step
    if step.state in ("running", "pending"):
        return text(422, "Cannot delete logs for a pending or running step")
    ctx.world.logs.pop(step.id, None)
    ctx.world.big_logs.pop(step.id, None)
    return empty(204)


def delete_pipeline_logs(ctx: Ctx) -> Response:
    found = _find(ctx, lenient=True)
    if isinstance(found, Response):
        return found
    if found.status in _BUSY:
        return text(422, f"Cannot delete logs for pipeline with status {found.status}")
    for step in found.steps():
        ctx.world.logs.pop(step.id, None)
        ctx.world.big_logs.pop(step.id, None)
    return empty(204)


def pipeline_queue(ctx: Ctx) -> Response:
    world = ctx.world
    out = [
        p.feed(world.repos[p.repo_id])
        for p in sorted(world.pipelines.values(), key=lambda p: p.id)
        if p.status in ("pending", "running") and p.repo_id in world.repos
    ]
    return json_response(out)


ROUTES = [
    Route("GET", "/api/repos/:repo_id/pipelines", list_pipelines, "pull"),
    Route("POST", "/api/repos/:repo_id/pipelines", create_pipeline, "push"),
    Route("GET", "/api/repos/:repo_id/pipelines/:pipeline_number", get_pipeline, "pull"),
    Route("DELETE", "/api/repos/:repo_id/pipelines/:pipeline_number", delete_pipeline, "repo_admin"),
    Route("GET", "/api/repos/:repo_id/pipelines/:pipeline_number/config", get_config, "pull"),
    Route("GET", "/api/repos/:repo_id/pipelines/:pipeline_number/metadata", get_metadata, "push"),
    Route("POST", "/api/repos/:repo_id/pipelines/:pipeline_number", restart_pipeline, "push"),
    Route("POST", "/api/repos/:repo_id/pipelines/:pipeline_number/cancel", cancel_pipeline, "push"),
    Route("POST", "/api/repos/:repo_id/pipelines/:pipeline_number/approve", approve_pipeline, "push"),
    Route("POST", "/api/repos/:repo_id/pipelines/:pipeline_number/decline", decline_pipeline, "push"),
    Route("GET", "/api/repos/:repo_id/logs/:pipeline_number/:step_id", get_step_logs, "pull"),
    Route("DELETE", "/api/repos/:repo_id/logs/:pipeline_number/:step_id", delete_step_logs, "push"),
    Route("DELETE", "/api/repos/:repo_id/logs/:pipeline_number", delete_pipeline_logs, "push"),
    Route("GET", "/api/pipelines", pipeline_queue, "admin"),
]
