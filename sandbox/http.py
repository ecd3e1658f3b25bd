"""Request context, gin-like responses and a router that matches on the raw path the way Woodpecker's gin does."""

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from starlette.datastructures import QueryParams
from starlette.responses import Response, StreamingResponse

from sandbox.models import Org, Perm, Repo, User
from sandbox.world import World

JSON_TYPE = "application/json; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"


class BadBody(Exception):
    """The request body could not be bound: Woodpecker answers 400 (body text chosen by the handler)."""


class Abort(Exception):
    """Stop handling and answer this response (the middleware chain's c.Abort)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def go_json(value: Any) -> bytes:
    """Compact JSON like Go's encoding/json, with its HTML escaping of <, > and &."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("utf-8")


def json_response(value: Any, status: int = 200, indent: bool = False) -> Response:
    if indent:
        # gin's c.IndentedJSON (used by /api/queue/info).
        body = json.dumps(value, indent=4, ensure_ascii=False).encode("utf-8")
    else:
        body = go_json(value)
    return Response(body, status_code=status, media_type=JSON_TYPE)


def text(status: int, message: str) -> Response:
    """gin's c.String: a plain-text error or message body."""
    return Response(message.encode("utf-8"), status_code=status, media_type=TEXT_TYPE)


def empty(status: int) -> Response:
    """gin's c.AbortWithStatus / AbortWithError / c.Status: the status and no body at all."""
    return Response(b"", status_code=status)


def stream_json(chunks: Iterable[bytes]) -> Response:
    return StreamingResponse(iter(chunks), status_code=200, media_type=JSON_TYPE)


@dataclass
class Ctx:
    """One request as a handler sees it, after routing and the permission middleware."""

    world: World
    method: str
    params: dict[str, str]
    query: QueryParams
    body: bytes
    content_type: str
    user: User | None
    repo: Repo | None = None
    perm: Perm | None = None
    org: Org | None = None
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def me(self) -> User:
        """The signed-in user; only for routes behind a MustUser-like check."""
        assert self.user is not None, "route reached without a user"
        return self.user

    @property
    def the_repo(self) -> Repo:
        assert self.repo is not None, "route reached without SetRepo"
        return self.repo

    @property
    def the_org(self) -> Org:
        assert self.org is not None, "route reached without SetOrg"
        return self.org

    def bind(self) -> dict[str, Any]:
        """gin's c.Bind: JSON only with a JSON content type; anything else binds as a form and finds nothing."""
        if "json" not in self.content_type.lower():
            return {}
        return self.decode()

    def decode(self) -> dict[str, Any]:
        """json.NewDecoder(body).Decode(&struct): empty, invalid or non-object bodies fail."""
        try:
            value = json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadBody(str(exc)) from exc
        if not isinstance(value, dict):
            raise BadBody("json: cannot unmarshal into Go value of type struct")
        return value


Handler = Callable[[Ctx], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    handler: Handler
    access: str = "anon"

    @property
    def segments(self) -> list[str]:
        return self.pattern.strip("/").split("/") if self.pattern != "/" else []


def _match(segments: list[str], raw: list[str]) -> tuple[tuple[int, ...], dict[str, str]] | None:
    """Match raw path segments; the score prefers static over :param over *wildcard, left to right."""
    params: dict[str, str] = {}
    score: list[int] = []
    for i, seg in enumerate(segments):
        if seg.startswith("*"):
            # gin passes the wildcard with its leading slash; handlers trim it.
            params[seg[1:]] = "/" + unquote("/".join(raw[i:]))
            score.append(2)
            return tuple(score), params
        if i >= len(raw):
            return None
        if seg.startswith(":"):
            if raw[i] == "":
                return None
            params[seg[1:]] = unquote(raw[i])
            score.append(1)
        elif seg != raw[i]:
            return None
        else:
            score.append(0)
    if len(raw) != len(segments):
        return None
    return tuple(score), params


class Router:
    def __init__(self, routes: Iterable[Route]) -> None:
        self.routes = list(routes)
        self._by_method: dict[str, list[Route]] = {}
        for route in self.routes:
            self._by_method.setdefault(route.method, []).append(route)

    def find(self, method: str, raw_path: str) -> tuple[Route, dict[str, str]] | None:
        # Keep a trailing empty segment: "/api/user/" must not match "/api/user" (gin redirects instead).
        raw = raw_path[1:].split("/") if raw_path not in ("", "/") else []
        best: tuple[tuple[int, ...], Route, dict[str, str]] | None = None
        for route in self._by_method.get(method, []):
            found = _match(route.segments, raw)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], route, found[1])
        return None if best is None else (best[1], best[2])

    def patterns(self) -> Iterator[tuple[str, str]]:
        for route in self.routes:
            yield route.method, route.pattern
