"""The prompts a caller is listed, their texts, and their arguments' completions (domain/woodpecker/prompts.py).

A prompt names only tools this caller can call: the catalogue's, narrowed by the caller's list,
without the ones the operator's policy denies. Completing a repository is a read-only
`list_repositories` call through the guarded use case, as a resource's completion is.
"""

import re
from collections.abc import Mapping
from dataclasses import replace

from domain.guard.policy import denied, runs_unasked
from domain.tools import Catalogue
from domain.woodpecker import prompts, resources
from domain.woodpecker.prompts import PromptSpec
from domain.woodpecker.references import NotAReference, WebRoot
from ports.use_cases.guarded import CallContext, Complete, GuardedCalls

# What a completion may offer: an owner/name of plain characters, nothing else Woodpecker said.
_FULL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}(?:/[A-Za-z0-9._-]{1,100}){1,4}$")


class Prompts:
    """prompts/list, prompts/get and the completion of a prompt's arguments, for one caller at a time."""

    def __init__(self, catalogue: Catalogue, guarded: GuardedCalls, web_root: str | None) -> None:
        self._catalogue = catalogue
        self._guarded = guarded
        try:
            self._root = WebRoot.parse(web_root) if web_root else None
        except NotAReference:
            self._root = None

    def callable_tools(self, ctx: CallContext) -> frozenset[str]:
        """The tools a prompt may name for this caller."""
        return frozenset(
            name
            for name in self._catalogue.names
            if (ctx.listed is None or name in ctx.listed) and not denied(self._catalogue.get(name))
        )

    def listed(self, ctx: CallContext) -> tuple[PromptSpec, ...]:
        return prompts.listed(self.callable_tools(ctx))

    def text(self, name: str, arguments: Mapping[str, str], ctx: CallContext) -> tuple[PromptSpec, str]:
        """The prompt and its text.

        Raises:
            PromptError: no such prompt for this caller, or an argument it does not take as given.
        """
        callable_tools = self.callable_tools(ctx)
        return prompts.spec(name, callable_tools), prompts.render(name, arguments, self._root, callable_tools)

    async def complete(self, name: str, argument: str, value: str, ctx: CallContext) -> tuple[list[str], int]:
        """Values for a prompt's argument that the typed `value` starts or that a name holds; nothing
        for an unknown prompt or argument, one that is not completed, or when the listing fails."""
        callable_tools = self.callable_tools(ctx)
        spec = next((p for p in prompts.listed(callable_tools) if p.name == name), None)
        wanted = next((a for a in spec.arguments if a.name == argument), None) if spec else None
        if wanted is None or not wanted.completes_repositories or "#" in value:
            return [], 0
        tool = "list_repositories"
        if tool not in callable_tools or not runs_unasked(self._catalogue.get(tool)):
            return [], 0
        outcome = await self._guarded.call(tool, {}, replace(ctx, channel="token", asker=None))
        if not isinstance(outcome, Complete) or outcome.result.is_error:
            return [], 0
        # A pipeline is owner/name#N: the name is completed with its '#', the number is the person's.
        suffix = "#" if argument == "pipeline" else ""
        names = [
            repo.get("full_name")
            for repo in outcome.result.structured.get("repositories") or []
            if isinstance(repo, Mapping)
        ]
        candidates = [(f"{n}{suffix}", n) for n in names if isinstance(n, str) and _FULL_NAME.match(n)]
        return resources.complete(value, candidates)
