"""What `resolve` answers: the ids a pasted reference stands for, their names and states, and the call that goes on from there."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.calls import ToolResult
from domain.woodpecker.results.budget import RESULT_BUDGET
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, known
from domain.woodpecker.results.render import Summarised, TextMode, fit
from domain.woodpecker.results.text import short

# Pipeline states after which get_pipeline_failure_summary has something to say.
_FAILED = ("failure", "error", "killed")


@dataclass(frozen=True, slots=True)
class Resolved:
    """A repository, maybe one of its pipelines, maybe one of that pipeline's steps, as Woodpecker stores them."""

    repository: Mapping[str, Any]
    pipeline: Mapping[str, Any] | None = None
    workflow: Mapping[str, Any] | None = None
    step: Mapping[str, Any] | None = None
    web_url: str | None = None


def _next(out: Mapping[str, Any]) -> str:
    repo = f"repo_id={out['repo_id']}"
    pipeline = f"{repo}, number={out.get('number')}"
    failed = out.get("pipeline_status") in _FAILED
    if "step_id" in out:
        where = f"{pipeline}, step_id={out['step_id']}"
        logs = f"get_step_logs({where}) reads its last lines; search_step_logs({where}, pattern=...) finds any line."
        return (
            f"get_pipeline_failure_summary({pipeline}) says why the pipeline failed; {logs}"
            if failed
            else logs
        )
    if "number" in out:
        if failed:
            return f"get_pipeline_failure_summary({pipeline}) says why it failed."
        return f"get_pipeline({pipeline}) shows its workflows and steps."
    return f"list_pipelines({repo}) lists its pipelines; get_repository({repo}) its settings."


def _fields(found: Resolved) -> dict[str, Any]:
    out: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "kind": "step"
        if found.step is not None
        else "pipeline"
        if found.pipeline is not None
        else "repository",
        "repo_id": found.repository.get("id"),
        "full_name": found.repository.get("full_name"),
    }
    if found.pipeline is not None:
        out["number"] = found.pipeline.get("number")
        out |= known(pipeline_status=found.pipeline.get("status"))
    if found.step is not None:
        out["step_id"] = found.step.get("id")
        out |= known(
            step_pid=found.step.get("pid"),
            step_name=found.step.get("name"),
            step_state=found.step.get("state"),
        )
        if found.workflow is not None:
            out |= known(workflow=found.workflow.get("name"))
    if found.web_url is not None:
        out["web_url"] = found.web_url
    out["next"] = _next(out)
    return out


def _summary(out: Mapping[str, Any]) -> str:
    text = f"Repository {short(out['full_name'])} is repo_id {out['repo_id']}"
    if "number" in out:
        text += f"; pipeline number {out['number']} ({short(out.get('pipeline_status'))})"
    if "step_id" in out:
        # By pid and id: the step's name and workflow, chosen by whoever can push, stay in the data.
        text += (
            f"; step pid {short(out.get('step_pid'))} is step_id {short(out['step_id'])} "
            f"({short(out.get('step_state'))}; its name and workflow are in the data)"
        )
    return f"{text}. Next: {out['next']}"


def shape_resolved(found: Resolved, *, budget: int = RESULT_BUDGET, text: TextMode = "full") -> ToolResult:
    """The ids and names as structured content and text (a handful of fields: well under any budget)."""
    out = _fields(found)
    return fit(lambda _: Summarised(out, _summary(out)), budget, text)
