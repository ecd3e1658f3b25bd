"""A gateway in front of a real one that puts a text into one chosen answer at one chosen place: an upstream echoing the token, wherever and however a test generates it."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ports.woodpecker import (
    ApiResponse,
    Credential,
    LogLine,
    LogMatch,
    LogSearch,
    LogSearchRequest,
    LogWindow,
    LogWindowRequest,
    Request,
    WoodpeckerGateway,
)


def places(value: Any) -> int:
    """How many places `value` offers for an echo: in an object a new member, in a list a new item,
    then each place of each of their values, then the whole value replaced; in a string the middle
    of it; any other value replaced whole."""
    if isinstance(value, dict):
        return 2 + sum(places(v) for v in value.values())
    if isinstance(value, list):
        return 2 + sum(places(v) for v in value)
    return 1


def put(value: Any, place: int, echo: str) -> Any:
    """`value` with `echo` at place number `place` (modulo `places(value)`), in the order `places` gives."""
    place %= places(value)
    if isinstance(value, str):
        return value[: len(value) // 2] + echo + value[len(value) // 2 :]
    if not isinstance(value, dict | list):
        return echo
    if place == places(value) - 1:
        return echo
    if place == 0:
        return {**value, "echo": echo} if isinstance(value, dict) else [*value, echo]
    place -= 1
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    for key, item in items:
        if place < places(item):
            if isinstance(value, dict):
                return {**value, key: put(item, place, echo)}
            return [*value[:key], put(item, place, echo), *value[key + 1 :]]
        place -= places(item)
    raise AssertionError("a place beyond the value's places")


class EchoingGateway:
    """Passes every call to `inner`; answer number `answer` (0 first, counted over all calls) gets
    `echo` at place `place` (see `put`; in a log, in the text of one of its lines). `answers`
    counts the answers seen, `echoed` whether one was changed."""

    def __init__(self, inner: WoodpeckerGateway, *, answer: int = -1, place: int = 0, echo: str = "") -> None:
        self.inner = inner
        self.answer, self.place, self.echo = answer, place, echo
        self.answers = 0
        self.echoed = False

    def _turn(self) -> bool:
        mine = self.answers == self.answer
        self.answers += 1
        self.echoed |= mine
        return mine

    def _lines(self, lines: tuple[LogLine, ...]) -> tuple[LogLine, ...]:
        if not lines:
            return (LogLine(0, self.echo),)
        i = self.place % len(lines)
        return (*lines[:i], replace(lines[i], text=put(lines[i].text, 0, self.echo)), *lines[i + 1 :])

    def _matches(self, matches: tuple[LogMatch, ...]) -> tuple[LogMatch, ...]:
        if not matches:
            return (LogMatch(LogLine(0, self.echo)),)
        i = self.place % len(matches)
        echoed = replace(matches[i], line=self._lines((matches[i].line,))[0])
        return (*matches[:i], echoed, *matches[i + 1 :])

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        response = await self.inner.send(call, credential)
        if not self._turn():
            return response
        return ApiResponse(response.status, put(response.data, self.place, self.echo), response.headers)

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        log = await self.inner.step_log(path, window, credential)
        return replace(log, lines=self._lines(log.lines)) if self._turn() else log

    async def search_step_log(
        self, path: str, search: LogSearchRequest, credential: Credential | None
    ) -> LogSearch:
        found = await self.inner.search_step_log(path, search, credential)
        return replace(found, matches=self._matches(found.matches)) if self._turn() else found

    async def read_step_log(
        self, path: str, window: LogWindowRequest, search: LogSearchRequest, credential: Credential | None
    ) -> tuple[LogWindow, LogSearch]:
        log, found = await self.inner.read_step_log(path, window, search, credential)
        if not self._turn():
            return log, found
        if self.place % 2:
            return log, replace(found, matches=self._matches(found.matches))
        return replace(log, lines=self._lines(log.lines)), found

    async def aclose(self) -> None:
        close: Callable[[], Any] | None = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
