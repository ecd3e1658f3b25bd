"""Middleware of the low-level server that lets a tool answer what the SDK would refuse unseen."""

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

# The `arguments` of a tools/call that are no JSON object (see `ArgumentsNotAnObject`); _NONE when they are one.
_NONE = object()
_ARGUMENTS_NOT_AN_OBJECT: ContextVar[object] = ContextVar("arguments_not_an_object", default=_NONE)


class ArgumentsNotAnObject:
    """A tools/call whose `arguments` are no JSON object (a string holding JSON, an array) reaches
    the tool as such, so that the tool's own validation says what is wrong and how to fix it. The
    SDK would refuse the request before any handler with "Invalid request parameters" and nothing
    more, which leaves a model no way to tell its mistake. The handler runs in this task, inside
    `call_next`, so it reads the value from a context variable."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping) and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, Mapping):
                token = _ARGUMENTS_NOT_AN_OBJECT.set(arguments)
                try:
                    return await call_next(replace(ctx, params={**params, "arguments": None}))
                finally:
                    _ARGUMENTS_NOT_AN_OBJECT.reset(token)
        return await call_next(ctx)


def call_arguments(params: types.CallToolRequestParams) -> Any:
    """The call's arguments as the client sent them, an object or not (see `ArgumentsNotAnObject`)."""
    raw = _ARGUMENTS_NOT_AN_OBJECT.get()
    return params.arguments if raw is _NONE else raw
