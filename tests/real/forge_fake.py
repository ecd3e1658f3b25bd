"""A small Gitea-compatible forge for a real Woodpecker server: OAuth login, users, repositories,
branches, config files, hooks, statuses, organisations. Standard library only, bound to 127.0.0.1.

Woodpecker's Gitea driver (server/forge/gitea, code.gitea.io/sdk/gitea v0.25.1) reads only what is
served here; every request the fake does not know is answered 404 and kept in `unknown`, so a
changed driver shows up as a list rather than as a silent difference.
"""

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

GITEA_VERSION = "1.24.0"
PAGE_MAX = 50
# A time Go's time.Time accepts (an empty string would fail to decode).
WHEN = "2026-01-01T00:00:00Z"


@dataclass
class ForgeUser:
    id: int
    login: str
    email: str
    token: str
    orgs_admin: set[str] = field(default_factory=set)  # organisations this user owns

    def api(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "login": self.login,
            "login_name": self.login,
            "full_name": self.login,
            "email": self.email,
            "avatar_url": f"{base}/avatars/{self.login}",
            "visibility": "public",
            "created": WHEN,
            "last_login": WHEN,
            "is_admin": False,
        }


@dataclass
class ForgeRepo:
    id: int
    owner: str
    name: str
    private: bool = False
    default_branch: str = "main"
    # branch name -> head commit sha
    branches: dict[str, str] = field(default_factory=dict)
    # commit sha -> {path: content}
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    # login -> (pull, push, admin)
    perms: dict[str, tuple[bool, bool, bool]] = field(default_factory=dict)
    hooks: list[dict[str, Any]] = field(default_factory=list)
    pulls: list[dict[str, Any]] = field(default_factory=list)
    fork_of: int | None = None  # the id of the repository this one is a fork of

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class Forge:
    """The forge's state; the HTTP handler below reads and changes it under `lock`."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, ForgeUser] = {}
        self.orgs: dict[str, set[str]] = {}  # org name -> member logins
        # One id per organisation, from the users' id space, as on Gitea: an id per answer, or one derived
        # from the name's hash, could equal a user's (PYTHONHASHSEED decides) and Woodpecker then mixes up
        # the two owners' records.
        self.org_ids: dict[str, int] = {}
        self.repos: dict[int, ForgeRepo] = {}
        self.codes: dict[str, str] = {}  # oauth code -> login
        self.statuses: list[dict[str, Any]] = []
        self.unknown: list[str] = []
        self.requests: list[str] = []
        self._ids = 100
        self.url = ""

    def new_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    def add_user(self, login: str) -> ForgeUser:
        with self.lock:
            user = ForgeUser(self.new_id(), login, f"{login}@example.org", f"forge-token-{login}")
            self.users[login] = user
            self.codes[f"code-{login}"] = login
            return user

    def add_org(self, name: str, owner: str, members: tuple[str, ...] = ()) -> None:
        with self.lock:
            self.orgs[name] = {owner, *members}
            self.org_ids[name] = self.new_id()
            self.users[owner].orgs_admin.add(name)

    def add_repo(
        self, owner: str, name: str, *, private: bool = False, **perms: tuple[bool, bool, bool]
    ) -> ForgeRepo:
        with self.lock:
            repo = ForgeRepo(self.new_id(), owner, name, private=private)
            repo.perms.update(perms)
            self.repos[repo.id] = repo
            return repo

    def commit(self, repo: ForgeRepo, branch: str, files: dict[str, str]) -> str:
        """A new head commit of `branch` holding exactly `files`; returns its sha."""
        with self.lock:
            sha = f"{self.new_id():040x}"
            repo.files[sha] = dict(files)
            repo.branches[branch] = sha
            return sha

    def repo_by_name(self, owner: str, name: str) -> ForgeRepo | None:
        return next((r for r in self.repos.values() if r.owner == owner and r.name == name), None)

    def user_for(self, headers: Any) -> ForgeUser | None:
        auth = headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        return next((u for u in self.users.values() if token and u.token == token), None)

    def perm(self, user: ForgeUser | None, repo: ForgeRepo) -> tuple[bool, bool, bool]:
        if user is None:
            return (not repo.private, False, False)
        if user.login == repo.owner or repo.owner in user.orgs_admin:
            return (True, True, True)
        return repo.perms.get(user.login, (not repo.private, False, False))

    def repo_api(self, repo: ForgeRepo, user: ForgeUser | None) -> dict[str, Any]:
        pull, push, admin = self.perm(user, repo)
        owner = self.users.get(repo.owner)
        owner_api = (
            owner.api(self.url)
            if owner
            else {
                "id": self.org_ids[repo.owner],
                "login": repo.owner,
                "full_name": repo.owner,
                "email": "",
                "avatar_url": f"{self.url}/avatars/{repo.owner}",
                "visibility": "public",
                "created": WHEN,
                "last_login": WHEN,
            }
        )
        html = f"{self.url}/{repo.full_name}"
        return {
            "id": repo.id,
            "owner": owner_api,
            "name": repo.name,
            "full_name": repo.full_name,
            "description": "",
            "empty": False,
            "private": repo.private,
            "fork": repo.fork_of is not None,
            "archived": False,
            "html_url": html,
            "clone_url": f"{html}.git",
            "ssh_url": f"git@forge.invalid:{repo.full_name}.git",
            "default_branch": repo.default_branch,
            "has_pull_requests": True,
            "permissions": {"admin": admin, "push": push, "pull": pull},
            "created_at": WHEN,
            "updated_at": WHEN,
            "archived_at": WHEN,
            "internal": False,
        }

    def push_payload(
        self, repo: ForgeRepo, branch: str, sender: str, message: str = "a change"
    ) -> dict[str, Any]:
        """What Gitea posts to a hook for a push of `branch`'s head."""
        sha = repo.branches[branch]
        commit = {
            "id": sha,
            "message": message,
            "url": f"{self.url}/{repo.full_name}/commit/{sha}",
            "author": {"name": sender, "email": f"{sender}@example.org", "username": sender},
            "committer": {"name": sender, "email": f"{sender}@example.org", "username": sender},
            "timestamp": WHEN,
            "added": [],
            "removed": [],
            "modified": ["README.md"],
        }
        user = self.users[sender]
        return {
            "ref": f"refs/heads/{branch}",
            "before": "0" * 40,
            "after": sha,
            "compare_url": f"{self.url}/{repo.full_name}/compare",
            "commits": [commit],
            "head_commit": commit,
            "repository": self.repo_api(repo, user),
            "pusher": user.api(self.url),
            "sender": user.api(self.url),
        }

    def fork(self, repo: ForgeRepo, owner: str) -> ForgeRepo:
        """`owner`'s fork of `repo`: a repository of its own (another id), with `repo`'s branches."""
        with self.lock:
            fork = self.add_repo(owner, repo.name)
            fork.fork_of = repo.id
            fork.branches = dict(repo.branches)
            fork.files = {sha: dict(files) for sha, files in repo.files.items()}
            return fork

    def open_pull_request(
        self, base: ForgeRepo, into: str, head: ForgeRepo, branch: str, files: dict[str, str], sender: str
    ) -> dict[str, Any]:
        """`sender` commits `files` to `branch` of `head` and opens a pull request of it into `base`'s
        branch `into`; returns what Gitea posts to `base`'s hooks. `head` is `base` itself for a pull
        request from one of its own branches, or a fork (Woodpecker's Gitea driver sets `from_fork` when
        the head's repo_id differs from the base's: server/forge/gitea/helper.go)."""
        with self.lock:
            sha = self.commit(head, branch, files)
            # Gitea keeps the head commit in the base repository too (refs/pull/N/head): Woodpecker reads
            # the pipeline's config from the base at that commit.
            base.files[sha] = dict(files)
            number = len(base.pulls) + 1
            user = self.users[sender].api(self.url)

            def side(repo: ForgeRepo, ref: str, at: str) -> dict[str, Any]:
                return {
                    "label": ref,
                    "ref": ref,
                    "sha": at,
                    "repo_id": repo.id,
                    "repo": self.repo_api(repo, None),
                }

            pull = {
                "id": self.new_id(),
                "number": number,
                "user": user,
                "title": f"a change from {head.full_name}",
                "body": "",
                "labels": [],
                "milestone": None,
                "state": "open",
                "draft": False,
                "html_url": f"{self.url}/{base.full_name}/pulls/{number}",
                "head": side(head, branch, sha),
                "base": side(base, into, base.branches[into]),
                "mergeable": True,
                "merged": False,
                "created_at": WHEN,
                "updated_at": WHEN,
            }
            base.pulls.append(pull)
            return {
                "action": "opened",
                "number": number,
                "pull_request": pull,
                "repository": self.repo_api(base, self.users[sender]),
                "sender": user,
            }


Route = tuple[str, re.Pattern[str], str]
_ROUTES: list[Route] = [
    (m, re.compile(p), name)
    for m, p, name in [
        ("GET", r"/api/v1/version", "version"),
        ("GET", r"/api/v1/settings/api", "settings"),
        ("POST", r"/login/oauth/access_token", "token"),
        ("GET", r"/api/v1/user", "me"),
        ("GET", r"/api/v1/user/repos", "my_repos"),
        ("GET", r"/api/v1/user/orgs", "my_orgs"),
        ("GET", r"/api/v1/repositories/(?P<id>\d+)", "repo_by_id"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)", "get_repo"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/hooks", "hooks"),
        ("POST", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/hooks", "add_hook"),
        ("DELETE", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/hooks/(?P<id>\d+)", "del_hook"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/contents/(?P<path>.*)", "contents"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/raw/(?P<path>.*)", "raw"),
        ("POST", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/statuses/(?P<sha>[^/]+)", "status"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/branches", "branches"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/branches/(?P<b>.+)", "branch"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/pulls", "pulls"),
        ("GET", r"/api/v1/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/pulls/(?P<n>\d+)/files", "pull_files"),
        ("GET", r"/api/v1/orgs/(?P<org>[^/]+)", "org"),
        ("GET", r"/api/v1/orgs/(?P<org>[^/]+)/members/(?P<login>[^/]+)", "org_member"),
        ("GET", r"/api/v1/users/(?P<login>[^/]+)/orgs/(?P<org>[^/]+)/permissions", "org_perm"),
        ("GET", r"/api/v1/users/(?P<login>[^/]+)", "get_user"),
    ]
]


def _handler(forge: Forge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, body: Any = None, raw: bytes | None = None) -> None:
            data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if raw is not None else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _dispatch(self) -> None:
            split = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(split.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with forge.lock:
                forge.requests.append(f"{self.command} {self.path}")
                for method, pattern, name in _ROUTES:
                    found = pattern.fullmatch(split.path)
                    if method == self.command and found:
                        params = {k: unquote(v) for k, v in found.groupdict().items()}
                        getattr(self, f"_{name}")(params, query, body)
                        return
                forge.unknown.append(f"{self.command} {self.path}")
            self._send(404, {"message": "not found"})

        do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _dispatch

        # -- helpers

        def _user(self) -> ForgeUser | None:
            return forge.user_for(self.headers)

        def _repo(self, params: dict[str, str]) -> ForgeRepo | None:
            repo = forge.repo_by_name(params["o"], params["r"])
            if repo is None or not forge.perm(self._user(), repo)[0]:
                self._send(404, {"message": "repo not found"})
                return None
            return repo

        def _page(self, items: list[Any], query: dict[str, str]) -> list[Any]:
            page = max(1, int(query.get("page", "1") or 1))
            limit = min(PAGE_MAX, max(1, int(query.get("limit", str(PAGE_MAX)) or PAGE_MAX)))
            return items[(page - 1) * limit : page * limit]

        # -- routes

        def _version(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            self._send(200, {"version": GITEA_VERSION})

        def _settings(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            self._send(
                200,
                {
                    "max_response_items": PAGE_MAX,
                    "default_paging_num": 30,
                    "default_git_trees_per_page": 1000,
                    "default_max_blob_size": 10485760,
                },
            )

        def _token(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            form = {k: v[-1] for k, v in parse_qs(b.decode()).items()}
            login = forge.codes.get(form.get("code", ""))
            if form.get("grant_type") == "refresh_token":
                login = next(
                    (
                        u.login
                        for u in forge.users.values()
                        if f"refresh-{u.login}" == form.get("refresh_token")
                    ),
                    None,
                )
            if login is None:
                self._send(400, {"error": "invalid_grant"})
                return
            self._send(
                200,
                {
                    "access_token": forge.users[login].token,
                    "token_type": "bearer",
                    "refresh_token": f"refresh-{login}",
                    "expires_in": 10 * 365 * 24 * 3600,
                },
            )

        def _me(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            user = self._user()
            self._send(401, {"message": "unauthorized"}) if user is None else self._send(
                200, user.api(forge.url)
            )

        def _get_user(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            user = forge.users.get(p["login"])
            self._send(404, {"message": "user not found"}) if user is None else self._send(
                200, user.api(forge.url)
            )

        def _my_repos(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            user = self._user()
            visible = [
                r
                for r in sorted(forge.repos.values(), key=lambda r: r.id)
                if forge.perm(user, r)[0]
                and (
                    user is not None
                    and (r.owner == user.login or user.login in r.perms or r.owner in user.orgs_admin)
                )
            ]
            self._send(200, [forge.repo_api(r, user) for r in self._page(visible, q)])

        def _my_orgs(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            user = self._user()
            mine = [o for o, members in sorted(forge.orgs.items()) if user and user.login in members]
            self._send(
                200,
                [
                    {
                        "id": forge.org_ids[o],
                        "name": o,
                        "username": o,
                        "full_name": o,
                        "avatar_url": "",
                        "visibility": "public",
                    }
                    for o in self._page(mine, q)
                ],
            )

        def _repo_by_id(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = forge.repos.get(int(p["id"]))
            if repo is None or not forge.perm(self._user(), repo)[0]:
                self._send(404, {"message": "repo not found"})
                return
            self._send(200, forge.repo_api(repo, self._user()))

        def _get_repo(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is not None:
                self._send(200, forge.repo_api(repo, self._user()))

        def _hooks(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is not None:
                self._send(200, self._page(repo.hooks, q))

        def _add_hook(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is None:
                return
            spec = json.loads(b or b"{}")
            hook = {
                "id": forge.new_id(),
                "type": spec.get("type", "gitea"),
                "config": spec.get("config", {}),
                "events": spec.get("events", []),
                "active": True,
                "created_at": WHEN,
                "updated_at": WHEN,
            }
            repo.hooks.append(hook)
            self._send(201, hook)

        def _del_hook(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is not None:
                repo.hooks = [h for h in repo.hooks if h["id"] != int(p["id"])]
                self._send(204)

        def _files_at(self, repo: ForgeRepo, ref: str) -> dict[str, str] | None:
            sha = repo.branches.get(ref, ref)
            return repo.files.get(sha)

        def _contents(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is None:
                return
            files = self._files_at(repo, q.get("ref", repo.default_branch)) or {}
            path = p["path"].strip("/")
            if path in files:
                self._send(
                    200,
                    {"name": path.rsplit("/", 1)[-1], "path": path, "type": "file", "size": len(files[path])},
                )
                return
            inside = sorted(f for f in files if f.startswith(path + "/") and "/" not in f[len(path) + 1 :])
            if not inside:
                self._send(404, {"message": "not found"})
                return
            self._send(
                200,
                [
                    {"name": f.rsplit("/", 1)[-1], "path": f, "type": "file", "size": len(files[f])}
                    for f in inside
                ],
            )

        def _raw(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is None:
                return
            files = self._files_at(repo, q.get("ref", repo.default_branch)) or {}
            content = files.get(p["path"].strip("/"))
            self._send(404, {"message": "not found"}) if content is None else self._send(
                200, raw=content.encode()
            )

        def _status(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            forge.statuses.append({"repo": f"{p['o']}/{p['r']}", "sha": p["sha"], **json.loads(b or b"{}")})
            self._send(
                201, {"id": len(forge.statuses), "status": "pending", "created_at": WHEN, "updated_at": WHEN}
            )

        def _branch_api(self, repo: ForgeRepo, name: str) -> dict[str, Any]:
            sha = repo.branches[name]
            return {
                "name": name,
                "commit": {
                    "id": sha,
                    "message": "head",
                    "url": f"{forge.url}/{repo.full_name}/commit/{sha}",
                    "timestamp": WHEN,
                },
                "protected": False,
            }

        def _branches(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is not None:
                self._send(200, [self._branch_api(repo, n) for n in self._page(sorted(repo.branches), q)])

        def _branch(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is None:
                return
            if p["b"] not in repo.branches:
                self._send(404, {"message": "branch not found"})
                return
            self._send(200, self._branch_api(repo, p["b"]))

        def _pulls(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            repo = self._repo(p)
            if repo is not None:
                self._send(200, self._page(repo.pulls, q))

        def _pull_files(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            self._send(
                200, [] if q.get("page", "1") != "1" else [{"filename": "README.md", "status": "modified"}]
            )

        def _org(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            if p["org"] not in forge.orgs:
                self._send(404, {"message": "org not found"})
                return
            self._send(
                200,
                {
                    "id": forge.org_ids[p["org"]],
                    "name": p["org"],
                    "username": p["org"],
                    "full_name": p["org"],
                    "avatar_url": "",
                    "visibility": "public",
                },
            )

        def _org_member(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            member = p["login"] in forge.orgs.get(p["org"], set())
            self._send(204 if member else 404)

        def _org_perm(self, p: dict[str, str], q: dict[str, str], b: bytes) -> None:
            user = forge.users.get(p["login"])
            owner = user is not None and p["org"] in user.orgs_admin
            self._send(
                200,
                {
                    "is_owner": owner,
                    "is_admin": owner,
                    "can_write": owner,
                    "can_read": True,
                    "can_create_repository": owner,
                },
            )

    return Handler


class ForgeServer:
    """The forge on a free 127.0.0.1 port, served from a daemon thread until `close`."""

    def __init__(self, forge: Forge | None = None) -> None:
        self.forge = forge or Forge()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.forge))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.forge.url = self.url
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `check` until it holds; a bounded wait for a real process, never a test's assertion."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f}s")
