"""The web UI's links to the sandbox's repositories, pipelines and steps: what a person copies from the address bar.

Woodpecker's web routes (web/src/router.ts): `/repos/{id}` and its pages, `/repos/{id}/pipeline/{number}`
and its pages, `/repos/{id}/pipeline/{number}/{pid}` (a step's pid, or a workflow's, which shows the
workflow's first step); and the older `/{owner}/{name}/...` and `/repos/{owner}/{name}/...` forms the web
UI still redirects, with `/{owner}/{name}/{number}` and `/{owner}/{name}/build/{number}/{pid}` of the
releases before 2.0. The server answers every one of them with the web UI's index page (gin's NoRoute).
Woodpecker itself writes the `/repos/{id}/pipeline/{number}[/{pid}]` form into the status it reports to
the forge, which is where most pasted links come from.
"""

from dataclasses import dataclass

from sandbox.world import World

REPO_PAGES = ("branches", "pull-requests", "settings", "manual")
PIPELINE_PAGES = ("changed-files", "config", "errors", "debug")


@dataclass(frozen=True, slots=True)
class WebLink:
    """One link and what it names: a repository, maybe a pipeline, maybe a step (by its id)."""

    url: str
    form: str
    repo_id: int
    full_name: str
    number: int | None = None
    step_id: int | None = None


def web_links(world: World, root: str) -> list[WebLink]:
    """Every link of the web UI at `root` to an activated repository, its pipelines and their steps."""
    links: list[WebLink] = []
    with world.lock:
        repos = sorted((r for r in world.repos.values() if r.id and r.active), key=lambda r: r.id)
        pipelines = sorted(world.pipelines.values(), key=lambda p: (p.repo_id, p.number))
    for repo in repos:
        name = repo.full_name
        ids = f"{root}/repos/{repo.id}"
        legacy = (f"{root}/{name}", f"{root}/repos/{name}")

        def link(url: str, form: str, number: int | None = None, step_id: int | None = None) -> None:
            links.append(WebLink(url, form, repo.id, name, number, step_id))  # noqa: B023 (used at once)

        link(ids, "repository")
        for page in REPO_PAGES:
            link(f"{ids}/{page}", f"repository {page}")
        for old in legacy:
            link(old, "older repository")
        for pipeline in (p for p in pipelines if p.repo_id == repo.id):
            n = pipeline.number
            link(f"{ids}/pipeline/{n}", "pipeline", n)
            for page in PIPELINE_PAGES:
                link(f"{ids}/pipeline/{n}/{page}", f"pipeline {page}", n)
            link(f"{legacy[0]}/pipeline/{n}", "older pipeline", n)
            link(f"{legacy[1]}/pipeline/{n}", "older pipeline", n)
            link(f"{legacy[0]}/{n}", "pipeline before 2.0", n)
            link(f"{legacy[0]}/build/{n}", "build before 2.0", n)
            for workflow in pipeline.workflows:
                if workflow.children:
                    link(f"{ids}/pipeline/{n}/{workflow.pid}", "workflow", n, workflow.children[0].id)
                for step in workflow.children:
                    link(f"{ids}/pipeline/{n}/{step.pid}", "step", n, step.id)
                    link(f"{legacy[0]}/pipeline/{n}/{step.pid}", "older step", n, step.id)
                    link(f"{legacy[0]}/build/{n}/{step.pid}", "step before 2.0", n, step.id)
    return links
