"""The simulated Woodpecker as an ASGI app: gin's routing, fallbacks and permission middleware, plus a request log."""

import asyncio
import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from sandbox import api_admin, api_crons, api_pipelines, api_repos, api_settings
from sandbox.api_common import go_int
from sandbox.http import Abort, Ctx, Route, Router, empty, json_response, text
from sandbox.models import Org
from sandbox.seed import build_world
from sandbox.seed_history import add_history
from sandbox.world import World

# gin's NoRoute: the web UI's index.html, status 200, for any unrouted path or method.
WEB_UI = (
    b'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="UTF-8" />\n'
    b'<title>Woodpecker</title>\n<script type="module" src="/web-config.js"></script>\n'
    b'</head>\n<body>\n<div id="app"></div>\n</body>\n</html>\n'
)
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CONTROL_PREFIX = "/_sandbox/"


@dataclass
class RecordedRequest:
    """One request as the sandbox saw it. `login` is whose token was used; the token itself is never kept."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int
    login: str | None
    state_changing: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fault:
    """An injected failure: the next `times` matching requests get `status` and `body` instead of an answer."""

    method: str
    path: str
    status: int
    body: str = ""
    times: int = 1
    delay: float = 0.0


@dataclass
class Echo:
    """An echoing upstream (a debugging proxy, a hostile server) in front of the API: the next
    `times` 2xx JSON answers to `method` + raw `path` carry the request's Authorization header, as
    a debugging proxy adds it: a member `_echo` of every object of the answer (`into="answer"`), or
    one more line at the end of a step's log (`into="log"`). Nothing else about the answer changes."""

    method: str
    path: str
    into: Literal["answer", "log"] = "answer"
    times: int = 1


ECHO_MEMBER = "_echo"


@dataclass
class SandboxState:
    """What outlives a reset: version, tokens, clock; and the log, the faults and the current world."""

    version: str
    tokens: dict[str, str]
    clock: Callable[[], float] = time.time
    lock: threading.RLock = field(default_factory=threading.RLock)
    requests: list[RecordedRequest] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    echoes: list[Echo] = field(default_factory=list)
    history: int = 0  # pipelines of sandbox/seed_history.py added to the bench repository (0: none)
    world: World = field(init=False)

    def __post_init__(self) -> None:
        self.world = self._seeded()

    def _seeded(self) -> World:
        world = build_world(self.version, self.tokens, self.clock)
        if self.history:
            add_history(world, self.history)
        return world

    def reset(self) -> None:
        """Re-seed the world and clear the log, the faults and the echoes; the tokens stay the same."""
        with self.lock:
            self.world = self._seeded()
            self.requests.clear()
            self.faults.clear()
            self.echoes.clear()


def all_routes() -> list[Route]:
    return [
        *api_admin.ROUTES,
        *api_repos.ROUTES,
        *api_pipelines.ROUTES,
        *api_settings.ROUTES,
        *api_crons.ROUTES,
    ]


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.startswith("Bearer "):
        return auth[len("Bearer ") :].strip() or None
    return request.headers.get("x-gitlab-token") or request.query_params.get("access_token") or None


def _set_repo(ctx: Ctx, by_name: bool) -> None:
    world, user = ctx.world, ctx.user
    if by_name:
        repo = world.repo_by_name(ctx.params["repo_full_name"].lstrip("/"))
    else:
        repo_id = go_int(ctx.params["repo_id"])
        if repo_id is None:
            raise Abort(empty(400))
        repo = world.repos.get(repo_id)
    if repo is None:
        raise Abort(empty(401 if user is None else 404))
    ctx.repo = repo
    ctx.perm = world.repo_perm(user, repo)


def _must_user(ctx: Ctx) -> None:
    if ctx.user is None:
        raise Abort(text(401, "User not authorized"))


def _must_admin(ctx: Ctx) -> None:
    _must_user(ctx)
    assert ctx.user is not None
    if not ctx.user.admin:
        raise Abort(text(403, "User not authorized"))


def _must_pull_or_push(ctx: Ctx, push: bool) -> None:
    assert ctx.perm is not None
    if ctx.perm.push if push else ctx.perm.pull:
        return
    # A signed-in user without access learns nothing: 404 with an empty body.
    raise Abort(empty(404 if ctx.user is not None else 401))


def _must_repo_admin(ctx: Ctx) -> None:
    assert ctx.perm is not None
    if ctx.user is None:
        raise Abort(text(401, "User not authorized"))
    if not ctx.perm.admin:
        raise Abort(text(403, "User not authorized"))


def _set_org(ctx: Ctx) -> None:
    org_id = go_int(ctx.params["org_id"])
    if org_id is None:
        raise Abort(text(400, "Invalid organization ID"))
    # store.OrgGet answers a non-nil empty org with ErrRecordNotExist, and SetOrg checks only for nil: a
    # missing id is the empty org, id 0, whose secrets and registries are all those with org_id 0 (every
    # global and repository one). Its "Organization not found" is never reached (a real 3.17.0 showed it).
    org = ctx.world.orgs.get(org_id)
    ctx.org = org if org is not None else Org(id=0, name="", is_user=False, forge_id=0)


def _must_org(ctx: Ctx, admin: bool) -> None:
    if ctx.user is None:
        raise Abort(text(401, "User not authorized"))
    assert ctx.org is not None
    if not ctx.world.passes_org(ctx.user, ctx.org, admin):
        raise Abort(text(403, "user not authorized"))


def authorize(ctx: Ctx, access: str) -> None:
    """Run the middleware chain Woodpecker's router puts in front of a route."""
    if access == "anon":
        return
    if access == "user":
        _must_user(ctx)
    elif access == "admin":
        _must_admin(ctx)
    elif access in ("repo", "lookup", "pull", "push", "repo_admin"):
        _set_repo(ctx, by_name=access == "lookup")
        if access == "repo":
            return
        _must_pull_or_push(ctx, push=False)
        if access == "push":
            _must_pull_or_push(ctx, push=True)
        elif access == "repo_admin":
            _must_repo_admin(ctx)
    elif access.startswith("org"):
        _set_org(ctx)
        if access == "org_member":
            _must_org(ctx, admin=False)
        elif access in ("org_admin", "org_admin_admin"):
            _must_org(ctx, admin=True)
            if access == "org_admin_admin":
                _must_admin(ctx)
    else:
        raise AssertionError(f"unknown access rule {access}")


def _headers(version: str) -> dict[str, str]:
    return {
        "X-Woodpecker-Version": version,
        "Cache-Control": "no-cache, no-store, max-age=0, must-revalidate, value",
        "Expires": "Thu, 01 Jan 1970 00:00:00 GMT",
        "Access-Control-Allow-Origin": "*",
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "X-XSS-Protection": "1; mode=block",
    }


class SandboxApp:
    """ASGI entry point. All state changes happen under the state lock, so tests may reset from another thread."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state
        self.router = Router(all_routes())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        raw_path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1")
        raw_path = raw_path.split("?", 1)[0]
        body = await request.body()
        if raw_path.startswith(CONTROL_PREFIX):
            response = self._control(request.method, raw_path, body)
        else:
            fault = self._take_fault(request.method, raw_path)
            if fault is not None:
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                response = text(fault.status, fault.body) if fault.body else empty(fault.status)
                self._record(request, raw_path, body, response.status_code)
            else:
                response = self._echo(request, self._handle(request, raw_path, body), raw_path)
            for key, value in _headers(self.state.world.version_string).items():
                response.headers.setdefault(key, value)
        await response(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _take_fault(self, method: str, raw_path: str) -> Fault | None:
        with self.state.lock:
            for fault in self.state.faults:
                if fault.method == method and fault.path == raw_path and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    def _echo(self, request: Request, response: Response, raw_path: str) -> Response:
        """The answer as an `Echo` in front of the API would pass it on (unchanged when none matches)."""
        if not 200 <= response.status_code < 300 or not response.headers.get("content-type", "").startswith(
            "application/json"
        ):
            return response
        try:
            value = json.loads(bytes(response.body))
        except (AttributeError, ValueError):
            return response  # a streamed answer (a big log) or no JSON: passed on as it is
        with self.state.lock:
            echo = next(
                (
                    e
                    for e in self.state.echoes
                    if e.method == request.method and e.path == raw_path and e.times > 0
                ),
                None,
            )
            if echo is None:
                return response
            echo.times -= 1
        header = request.headers.get("authorization", "")
        if echo.into == "log" and isinstance(value, list):
            last = value[-1] if value and isinstance(value[-1], dict) else {"id": 0, "step_id": 0, "time": 0}
            line = {**last, "id": int(last.get("id", 0)) + 1, "line": int(last.get("line", -1)) + 1}
            line["data"] = base64.b64encode(f"Authorization: {header}".encode()).decode("ascii")
            value = [*value, line]
        else:
            member = {"request_headers": {"Authorization": header}}
            if isinstance(value, dict):
                value = {**value, ECHO_MEMBER: member}
            elif isinstance(value, list):
                value = [{**v, ECHO_MEMBER: member} if isinstance(v, dict) else v for v in value]
        echoed = json_response(value, response.status_code)
        for key, item in response.headers.items():
            if key.lower() not in ("content-length", "content-type"):
                echoed.headers.setdefault(key, item)
        return echoed

    def _record(
        self, request: Request, raw_path: str, body: bytes, status: int, login: str | None = None
    ) -> None:
        parsed: Any = None
        if body:
            try:
                parsed = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError):
                parsed = None
        with self.state.lock:
            if login is None:
                user = self.state.world.user_for_token(_token(request))
                login = user.login if user else None
            self.state.requests.append(
                RecordedRequest(
                    method=request.method,
                    path=raw_path,
                    query=dict(parse_qsl(request.url.query, keep_blank_values=True)),
                    body=parsed,
                    status=status,
                    login=login,
                    state_changing=request.method not in _SAFE_METHODS,
                )
            )

    def _handle(self, request: Request, raw_path: str, body: bytes) -> Response:
        method = request.method
        with self.state.lock:
            world = self.state.world
            world.settle()
            user = world.user_for_token(_token(request))
            found = self.router.find(method, raw_path)
            if found is None:
                response = self._no_route(method, raw_path, request.url.query)
            else:
                route, params = found
                ctx = Ctx(
                    world=world,
                    method=method,
                    params=params,
                    query=QueryParams(request.url.query),
                    body=body,
                    content_type=request.headers.get("content-type", ""),
                    user=user,
                )
                try:
                    authorize(ctx, route.access)
                    response = route.handler(ctx)
                except Abort as abort:
                    response = abort.response
            self._record(request, raw_path, body, response.status_code, user.login if user else None)
            return response

    def _no_route(self, method: str, raw_path: str, query: str) -> Response:
        if method == "OPTIONS":
            # The Options middleware answers every preflight itself.
            return Response(
                b"",
                status_code=200,
                headers={
                    "Allow": "HEAD,GET,POST,PUT,PATCH,DELETE,OPTIONS",
                    "Access-Control-Allow-Headers": "authorization, origin, content-type, accept",
                    "Access-Control-Allow-Methods": "GET,POST,PUT,PATCH,DELETE,OPTIONS",
                },
            )
        if len(raw_path) > 1 and raw_path.endswith("/") and self.router.find(method, raw_path.rstrip("/")):
            # gin's RedirectTrailingSlash: 301 for GET, 307 for everything else.
            location = raw_path.rstrip("/") + (f"?{query}" if query else "")
            return Response(b"", status_code=301 if method == "GET" else 307, headers={"Location": location})
        return Response(WEB_UI, status_code=200, media_type="text/html; charset=UTF-8")

    # ------------------------------------------------------------------ control routes (not Woodpecker)

    def _control(self, method: str, raw_path: str, body: bytes) -> Response:
        route = (method, raw_path.rstrip("/"))
        if route == ("GET", "/_sandbox/requests"):
            with self.state.lock:
                return json_response([r.to_json() for r in self.state.requests])
        if route == ("DELETE", "/_sandbox/requests"):
            with self.state.lock:
                self.state.requests.clear()
            return empty(204)
        if route == ("POST", "/_sandbox/reset"):
            self.state.reset()
            return empty(204)
        if route == ("POST", "/_sandbox/faults"):
            try:
                spec = json.loads(body)
                fault = Fault(
                    method=str(spec["method"]).upper(),
                    path=str(spec["path"]),
                    status=int(spec["status"]),
                    body=str(spec.get("body", "")),
                    times=int(spec.get("times", 1)),
                    delay=float(spec.get("delay", 0.0)),
                )
            except (ValueError, KeyError, TypeError):
                return text(400, 'expected {"method", "path", "status", "body"?, "times"?, "delay"?}')
            with self.state.lock:
                self.state.faults.append(fault)
            return empty(204)
        if route == ("POST", "/_sandbox/echoes"):
            try:
                spec = json.loads(body)
                into: Literal["answer", "log"] = "log" if spec.get("into", "answer") == "log" else "answer"
                if spec.get("into", into) != into:
                    raise ValueError("into")
                echo = Echo(str(spec["method"]).upper(), str(spec["path"]), into, int(spec.get("times", 1)))
            except (ValueError, KeyError, TypeError, AttributeError):
                return text(400, 'expected {"method", "path", "into"?: "answer" | "log", "times"?}')
            with self.state.lock:
                self.state.echoes.append(echo)
            return empty(204)
        if route == ("GET", "/_sandbox/info"):
            return json_response(
                {"version": self.state.world.version_string, "logins": sorted(self.state.tokens)}
            )
        return text(404, "unknown sandbox control route")
