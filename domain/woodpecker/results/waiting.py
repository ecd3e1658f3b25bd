"""What wait_for_pipeline answers: the pipeline's state, whether it finished, how long the call waited."""

from collections.abc import Mapping
from typing import Any

from domain.calls import ToolResult
from domain.woodpecker.results.budget import RESULT_BUDGET, size
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, known
from domain.woodpecker.results.failures import failed_steps
from domain.woodpecker.results.render import Summarised, TextMode, fit
from domain.woodpecker.results.text import short
from domain.woodpecker.waiting import BLOCKED, finished

PIPELINE_FIELDS = ("number", "status", "event", "branch", "commit", "created", "started", "finished")
FAILED_STEPS_SHOWN = 10  # a brief list: get_pipeline_failure_summary has the rest


def shape_wait(
    args: Mapping[str, Any],
    pipeline: Mapping[str, Any],
    *,
    waited: float,
    polls: int,
    budget: int = RESULT_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    """The pipeline as the last look found it, whether it has finished, and how long this call waited."""
    return fit(lambda inner: _wait(args, pipeline, waited, polls, inner), budget, text)


def _wait(
    args: Mapping[str, Any], pipeline: Mapping[str, Any], waited: float, polls: int, budget: int
) -> Summarised:
    status = pipeline.get("status")
    done = finished(status)
    failed = [
        {
            "workflow": workflow,
            **known(
                step_id=step.get("id"),
                pid=step.get("pid"),
                name=step.get("name"),
                state=step.get("state"),
                exit_code=step.get("exit_code"),
            ),
        }
        for workflow, step in (failed_steps(pipeline) if done else [])
    ]
    out: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "finished": done,
        **known(status=status),
        "waited_seconds": round(waited, 1),
        "window_seconds": args.get("timeout_seconds"),
        "polls": polls,
        "pipeline": {k: pipeline[k] for k in PIPELINE_FIELDS if k in pipeline},
    }
    if failed:
        out["failed_step_count"] = len(failed)
        out["failed_steps"] = failed[:FAILED_STEPS_SHOWN]
    out["next"] = _next(args, status, done, failed)
    # Only a huge pipeline's failed steps could pass the budget: show fewer, never cut one.
    while failed and len(out["failed_steps"]) > 1 and size(out) > budget:
        out["failed_steps"] = out["failed_steps"][:-1]
    return Summarised(out, _summary(args, status, done, waited, out.get("failed_steps", []), len(failed)))


def _where(args: Mapping[str, Any]) -> str:
    return f"repo_id={args.get('repo_id')}, number={args.get('number')}"


def _next(args: Mapping[str, Any], status: Any, done: bool, failed: list[dict[str, Any]]) -> str:
    if done and failed:
        return f"get_pipeline_failure_summary({_where(args)}) says why it failed."
    if done:
        return f"get_pipeline({_where(args)}) shows every workflow and step."
    if status == BLOCKED:
        return f"It waits for approval: approve_pipeline({_where(args)}) or decline_pipeline."
    return f"Call wait_for_pipeline({_where(args)}) again to keep waiting."


def _summary(
    args: Mapping[str, Any],
    status: Any,
    done: bool,
    waited: float,
    shown: list[dict[str, Any]],
    failed: int,
) -> str:
    what = f"Pipeline {args.get('number')} of repository {args.get('repo_id')}"
    after = f"after waiting {waited:.0f} s"
    if done:
        text = f"{what} finished: {short(status)} ({after})."
        if shown:
            steps = ", ".join(
                # By id and pid: a step's name and workflow, chosen by whoever can push, stay in the data.
                f"step_id {short(s.get('step_id'))} (pid {short(s.get('pid'))}, exit code {short(s.get('exit_code'))})"
                for s in shown
            )
            more = f" and {failed - len(shown)} more" if failed > len(shown) else ""
            text += f" Failed: {steps}{more}; get_pipeline_failure_summary says why."
        return text
    if status == BLOCKED:
        return (
            f"{what} has not finished: it is blocked, waiting for approval ({after}); waiting longer will "
            "not change that. approve_pipeline or decline_pipeline decides it."
        )
    return f"{what} has not finished: still {short(status)} {after}. Call wait_for_pipeline again to keep waiting."
