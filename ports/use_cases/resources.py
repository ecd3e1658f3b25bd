"""Reading a resource and completing a template's arguments: each is a read-only tool call through the guarded use case, with the caller's identity and list."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from domain.guard.policy import runs_unasked
from domain.tools import Catalogue
from domain.woodpecker import resources
from domain.woodpecker.resources import TEMPLATES, Template
from ports.use_cases.guarded import CallContext, Complete, GuardedCalls
from ports.use_cases.tools import ToolResult

# Template argument -> the tool that lists its values (called with the arguments already chosen).
_LISTERS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "repo_id": ("list_repositories", ()),
    "number": ("list_pipelines", ("repo_id",)),
    "step_id": ("get_pipeline", ("repo_id", "number")),
}


def _id(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _candidates(argument: str, structured: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(value, label) pairs out of a listing tool's result; only well-formed ids become values."""
    out: list[tuple[str, str]] = []
    if argument == "repo_id":
        for repo in structured.get("repositories") or []:
            if isinstance(repo, Mapping) and (i := _id(repo.get("id"))) is not None:
                out.append((str(i), str(repo.get("full_name", ""))))
    elif argument == "number":
        for pipeline in structured.get("pipelines") or []:
            if isinstance(pipeline, Mapping) and (n := _id(pipeline.get("number"))) is not None:
                out.append((str(n), f"{pipeline.get('branch', '')} {pipeline.get('status', '')}"))
    elif argument == "step_id":
        pipeline = structured.get("pipeline")
        for workflow in (pipeline.get("workflows") if isinstance(pipeline, Mapping) else None) or []:
            if not isinstance(workflow, Mapping):
                continue
            # The shaped pipeline lists a workflow's steps as `steps` (Woodpecker's `children`).
            for step in workflow.get("steps") or workflow.get("children") or []:
                if isinstance(step, Mapping) and (i := _id(step.get("id"))) is not None:
                    out.append((str(i), f"{workflow.get('name', '')}/{step.get('name', '')}"))
    return out


class Resources:
    """The resource templates a caller may read, their reads, and their arguments' completions."""

    def __init__(self, catalogue: Catalogue, guarded: GuardedCalls) -> None:
        self._catalogue = catalogue
        self._guarded = guarded

    def _may_call(self, tool: str, ctx: CallContext) -> bool:
        # A resource cannot ask anyone: a tool the operator's policy denies or makes ask (it then has
        # a guard) is served as a tool only, where it is refused or asked (ADR 0079).
        if tool not in self._catalogue:
            return False
        if not runs_unasked(self._catalogue.get(tool)):
            return False
        return ctx.listed is None or tool in ctx.listed

    def templates(self, ctx: CallContext) -> tuple[Template, ...]:
        """The templates whose tool this caller may call: a filtered tool's resource is not offered."""
        return tuple(t for t in TEMPLATES if self._may_call(t.tool, ctx))

    async def _run(self, tool: str, arguments: Mapping[str, Any], ctx: CallContext) -> ToolResult:
        # Never a dialog: every resource tool is read-only and never guarded.
        outcome = await self._guarded.call(tool, arguments, replace(ctx, channel="token", asker=None))
        if not isinstance(outcome, Complete):
            raise RuntimeError(f"{tool} asked for a confirmation; resource tools never do")
        return outcome.result

    async def read(self, uri: str, ctx: CallContext) -> ToolResult:
        """The tool result that `uri` stands for (an error result when the tool failed).

        Raises:
            NotAResource: not one of the templates, or its tool is not served to this caller.
        """
        read = resources.read_of(uri)
        if not self._may_call(read.tool, ctx):
            raise resources.not_served(read.template)
        return await self._run(read.tool, read.arguments, ctx)

    async def complete(
        self, template_uri: str, argument: str, value: str, chosen: Mapping[str, str], ctx: CallContext
    ) -> tuple[list[str], int]:
        """Values for `argument` of the template at `template_uri` that start with `value` or whose
        name holds it, from what this caller can see, and how many matched in all. Nothing when the
        template or argument is unknown, an earlier argument is missing, or the lister fails."""
        template = next((t for t in self.templates(ctx) if t.uri_template == template_uri), None)
        if template is None or argument not in template.arguments or argument not in _LISTERS:
            return [], 0
        tool, needs = _LISTERS[argument]
        if not self._may_call(tool, ctx):
            return [], 0
        given = {name: chosen.get(name, "") for name in needs}
        if not all(v.isascii() and v.isdigit() and len(v) <= 16 for v in given.values()):
            return [], 0
        result = await self._run(tool, {k: int(v) for k, v in given.items()}, ctx)
        if result.is_error:
            return [], 0
        return resources.complete(value, _candidates(argument, result.structured))
