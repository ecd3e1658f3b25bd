"""The same requests to a real Woodpecker and to the sandbox, compared by shape: status codes, content
types, empty bodies, null vs [], key sets and value types. Values differ (ids, names, times) and are not
compared, except where a probe names what it checks.

Each server has its own objects; a probe names them by role ("the blocked pipeline", "a step with a
log"), and `subjects` finds each role on each server through the API.
"""

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx


@dataclass
class Target:
    name: str
    url: str
    tokens: dict[str, str]  # role (admin, user, outsider) -> token
    logins: dict[str, str]  # role -> login
    subjects: dict[str, Any] = field(default_factory=dict)

    def client(self, role: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0, follow_redirects=False)


@dataclass(frozen=True)
class Probe:
    name: str
    method: str
    path: str  # str.format over the target's subjects
    caller: str | None = "admin"
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None
    content_type: str | None = None  # None: JSON when a body is given
    # A value to compare (not only the shape): a function of the answer's JSON.
    value: Callable[[Any], Any] | None = None


@dataclass
class Answer:
    status: int
    kind: str  # json, text, html, empty
    body: Any
    text: str
    headers: dict[str, str]


def ask(target: Target, probe: Probe) -> Answer:
    # Names that may hold a slash (a registry address) go in one escaped segment, as our tools send them.
    subjects = {
        k: quote(v, safe="") if isinstance(v, str) and k.endswith(("_secret", "_registry")) else v
        for k, v in target.subjects.items()
    }
    path = probe.path.format(**subjects)
    kwargs: dict[str, Any] = {"params": probe.query}
    if probe.body is not None:
        if probe.content_type is None:
            kwargs["json"] = probe.body
        else:
            kwargs["content"] = probe.body if isinstance(probe.body, str | bytes) else json.dumps(probe.body)
            kwargs["headers"] = {"Content-Type": probe.content_type}
    with target.client(probe.caller) as http:
        response = http.request(probe.method, path, **kwargs)
    ctype = response.headers.get("content-type", "")
    body: Any = None
    if not response.content:
        kind = "empty"
    elif ctype.startswith("application/json"):
        kind = "json"
        body = response.json()
    elif ctype.startswith("text/html"):
        kind = "html"
    else:
        kind = "text"
    return Answer(response.status_code, kind, body, response.text[:200], dict(response.headers))


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list" if value else "[]"
    return "object"


def shape(value: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """(path, type) for every value in a JSON document; list items share the path `[]`."""
    yield path, _type(value)
    if isinstance(value, dict):
        for key, item in value.items():
            yield from shape(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from shape(item, f"{path}[]")


def _types(value: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path, kind in shape(value):
        out.setdefault(path, set()).add(kind)
    return out


def compare(real: Answer, sandbox: Answer) -> list[str]:
    """What differs, one line each: status, kind, then shape (paths present on one side, types)."""
    found: list[str] = []
    if real.status != sandbox.status:
        found.append(f"status real {real.status} sandbox {sandbox.status}")
    if real.kind != sandbox.kind:
        found.append(f"kind real {real.kind} sandbox {sandbox.kind}")
    if real.kind == sandbox.kind == "json":
        a, b = _types(real.body), _types(sandbox.body)
        for path in sorted(a.keys() | b.keys()):
            if path not in b:
                found.append(f"only real {path} {sorted(a[path])}")
            elif path not in a:
                found.append(f"only sandbox {path} {sorted(b[path])}")
            elif not a[path] & b[path] and not ({"list", "[]"} >= a[path] | b[path]):
                found.append(f"type {path} real {sorted(a[path])} sandbox {sorted(b[path])}")
    return found


# Fields Go leaves out when empty (omitempty) in the models the probes read: present on one side only
# when the data differs, so their absence on one side says nothing about the server.
OMITEMPTY = frozenset(
    {
        # Pipeline, Workflow, Step, Feed
        "cancel_info",
        "workflows",
        "changed_files",
        "variables",
        "pr_labels",
        "pr_milestone",
        "pr_draft",
        "cron",
        "from_fork",
        "release",
        "tag_title",
        "is_prerelease",
        "error",
        "started",
        "finished",
        "agent_id",
        "platform",
        "environ",
        "children",
        "type",
        "refspec",
        "title",
        "author",
        "author_avatar",
        "author_email",
        "message",
        "full_name",
        "id",
        "number",
        "event",
        "status",
        "created",
        "commit",
        "branch",
        "ref",
        "last_pipeline",
        # User, Repo, Org
        "admin",
        "admin_env",
        "forge_id",
        "avatar_url",
        "forge_url",
        "clone_url",
        "default_branch",
        "timeout",
        "has_forge_name_conflict",
        "has_no_forge_repo",
        # metadata.*
        "target",
        "task",
        "avatar",
        "email",
        "name",
        "rerun_count",
        "parent",
        "event_reason",
        "trusted",
        "private",
        "remote_id",
        "clone_url_ssh",
        "labels",
        "milestone",
        "draft",
        "timestamp",
        "sha",
        "docs",
        "field",
        "file",
        "data",
    }
)


def significant(diffs: list[str]) -> list[str]:
    """The differences that do not come from different data: status and kind always; `[]` against null;
    a path on one side only unless Go omits it when empty or its parent is already on one side only."""
    out: list[str] = []
    one_sided: list[str] = []
    for diff in diffs:
        words = diff.split(" ")
        if words[0] in ("status", "kind", "value"):
            out.append(diff)
        elif words[0] == "type":
            kinds = {" ".join(words[3:]).split(" sandbox ")[0], " ".join(words[3:]).split(" sandbox ")[1]}
            if kinds == {"['null']", "['[]']"}:
                out.append(diff)  # an empty list answered as null on one side and [] on the other
        else:
            path = words[2]
            if any(path.startswith(p + ".") or path.startswith(p + "[]") for p in one_sided):
                continue
            one_sided.append(path)
            key = path.rsplit(".", 1)[-1].removesuffix("[]")
            if key not in OMITEMPTY and not path.endswith("[]"):
                out.append(diff)
    return out


def _pipelines(http: httpx.Client, repo_id: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for page in range(1, 6):
        batch = http.get(f"/api/repos/{repo_id}/pipelines", params={"page": page, "perPage": 50}).json()
        out.extend(batch)
        if len(batch) < 50:
            break
    return out


def find_subjects(target: Target) -> dict[str, Any]:
    """The roles the probes name, found on this server: the active repository with the most kinds of
    pipeline, a pipeline of each status, a step with a log, its organisation, a cron, secrets, ..."""
    s: dict[str, Any] = {"user_login": target.logins["user"], "admin_login": target.logins["admin"]}
    with target.client("admin") as admin:
        repos = admin.get("/api/repos", params={"active": "true", "perPage": 50}).json()
        best: tuple[int, dict[str, Any], list[dict[str, Any]]] | None = None
        for repo in repos:
            pipelines = _pipelines(admin, repo["id"])
            score = len({p["status"] for p in pipelines})
            if best is None or score > best[0]:
                best = (score, repo, pipelines)
        assert best is not None
        _, repo, pipelines = best
        s["repo_id"], s["org_id"], s["repo_full_name"] = repo["id"], repo["org_id"], repo["full_name"]
        s["forge_remote_id"] = repo["forge_remote_id"]
        for p in pipelines:
            s.setdefault(f"{p['status']}_number", p["number"])
            if p.get("parent"):
                s.setdefault("restarted_number", p["number"])
            if p.get("from_fork") is True:
                s.setdefault("fork_number", p["number"])
        if "restarted_number" not in s and "declined_number" in s:
            # A seed without a re-run (the sandbox's acme/web): re-run its declined pipeline, as on the real one.
            rerun = admin.post(f"/api/repos/{repo['id']}/pipelines/{s['declined_number']}").json()
            s["restarted_number"] = rerun["number"]
        done = next(p for p in pipelines if p["status"] in ("success", "failure"))
        full = admin.get(f"/api/repos/{repo['id']}/pipelines/{done['number']}").json()
        step = full["workflows"][0]["children"][0]
        s["done_number"], s["step_id"] = done["number"], step["id"]
        crons = admin.get(f"/api/repos/{repo['id']}/cron").json() or []
        s["cron_id"] = crons[0]["id"] if crons else 0
        for scope, path in (
            ("repo", f"/api/repos/{repo['id']}"),
            ("org", f"/api/orgs/{repo['org_id']}"),
            ("global", "/api"),
        ):
            secrets = admin.get(f"{path}/secrets").json() or []
            s[f"{scope}_secret"] = secrets[0]["name"] if secrets else "none"
            registries = admin.get(f"{path}/registries").json() or []
            s[f"{scope}_registry"] = registries[0]["address"] if registries else "none"
        agents = admin.get("/api/agents").json() or []
        s["agent_id"] = agents[0]["id"] if agents else 0
    return s


READS: tuple[Probe, ...] = (
    Probe("version", "GET", "/version", caller=None),
    Probe("healthz", "GET", "/healthz", caller=None),
    Probe("api version (unrouted)", "GET", "/api/version"),
    Probe("unknown path", "GET", "/api/nothing-here"),
    Probe("wrong method", "PUT", "/api/user"),
    Probe("self", "GET", "/api/user"),
    Probe("self as user", "GET", "/api/user", caller="user"),
    Probe("self anonymous", "GET", "/api/user", caller=None),
    Probe("feed", "GET", "/api/user/feed"),
    Probe("feed latest", "GET", "/api/user/feed", query={"latest": "true"}),
    Probe("user repos", "GET", "/api/user/repos"),
    Probe("user repos all", "GET", "/api/user/repos", query={"all": "true"}),
    Probe("users", "GET", "/api/users"),
    Probe("users as user", "GET", "/api/users", caller="user"),
    Probe("users perPage 1", "GET", "/api/users", query={"perPage": "1"}, value=len),
    Probe("users perPage 500", "GET", "/api/users", query={"perPage": "500", "page": "1"}),
    Probe("user", "GET", "/api/users/{user_login}"),
    Probe("user missing", "GET", "/api/users/nobody-at-all"),
    Probe("orgs", "GET", "/api/orgs"),
    Probe("org", "GET", "/api/orgs/{org_id}"),
    Probe("org bad id", "GET", "/api/orgs/abc"),
    Probe("org missing", "GET", "/api/orgs/999999"),
    Probe("org permissions", "GET", "/api/orgs/{org_id}/permissions"),
    Probe("org permissions as user", "GET", "/api/orgs/{org_id}/permissions", caller="user"),
    Probe("org lookup", "GET", "/api/orgs/lookup/{user_login}"),
    Probe("org secrets", "GET", "/api/orgs/{org_id}/secrets"),
    Probe("org secret", "GET", "/api/orgs/{org_id}/secrets/{org_secret}"),
    Probe("org registries", "GET", "/api/orgs/{org_id}/registries"),
    Probe("org agents", "GET", "/api/orgs/{org_id}/agents"),
    Probe("repos (admin)", "GET", "/api/repos"),
    Probe("repos active", "GET", "/api/repos", query={"active": "true"}),
    Probe("repo", "GET", "/api/repos/{repo_id}"),
    Probe("repo bad id", "GET", "/api/repos/abc"),
    Probe("repo missing", "GET", "/api/repos/999999"),
    Probe("repo missing anonymous", "GET", "/api/repos/999999", caller=None),
    Probe("repo lookup", "GET", "/api/repos/lookup/{repo_full_name}"),
    Probe("repo lookup missing", "GET", "/api/repos/lookup/nobody/nothing"),
    Probe("repo permissions", "GET", "/api/repos/{repo_id}/permissions"),
    Probe("repo permissions as user", "GET", "/api/repos/{repo_id}/permissions", caller="user"),
    Probe("branches", "GET", "/api/repos/{repo_id}/branches"),
    Probe("branches perPage 1", "GET", "/api/repos/{repo_id}/branches", query={"perPage": "1"}, value=len),
    Probe("pull requests", "GET", "/api/repos/{repo_id}/pull_requests"),
    Probe("pipelines", "GET", "/api/repos/{repo_id}/pipelines"),
    Probe("pipelines perPage 2", "GET", "/api/repos/{repo_id}/pipelines", query={"perPage": "2"}, value=len),
    Probe("pipelines page 99", "GET", "/api/repos/{repo_id}/pipelines", query={"page": "99"}),
    Probe("pipelines bad status", "GET", "/api/repos/{repo_id}/pipelines", query={"status": "nope"}),
    Probe("pipelines bad event", "GET", "/api/repos/{repo_id}/pipelines", query={"event": "nope"}),
    Probe("pipelines bad before", "GET", "/api/repos/{repo_id}/pipelines", query={"before": "yesterday"}),
    Probe("pipelines status blocked", "GET", "/api/repos/{repo_id}/pipelines", query={"status": "blocked"}),
    Probe("pipelines branch none", "GET", "/api/repos/{repo_id}/pipelines", query={"branch": "no-such"}),
    Probe("pipeline done", "GET", "/api/repos/{repo_id}/pipelines/{done_number}"),
    Probe(
        "pipeline blocked",
        "GET",
        "/api/repos/{repo_id}/pipelines/{blocked_number}",
        value=lambda p: (p["status"], p["reviewed_by"], p["reviewed"] == 0),
    ),
    Probe(
        "pipeline declined",
        "GET",
        "/api/repos/{repo_id}/pipelines/{declined_number}",
        value=lambda p: (p["status"], bool(p["reviewed_by"]), p["reviewed"] > 0),
    ),
    Probe(
        "pipeline restarted",
        "GET",
        "/api/repos/{repo_id}/pipelines/{restarted_number}",
        value=lambda p: (p["parent"] > 0, bool(p["reviewed_by"])),
    ),
    Probe("pipeline killed", "GET", "/api/repos/{repo_id}/pipelines/{killed_number}"),
    Probe(
        "pipeline from a fork",
        "GET",
        "/api/repos/{repo_id}/pipelines/{fork_number}",
        value=lambda p: (p["event"], p["status"], p["from_fork"], p["reviewed_by"]),
    ),
    Probe("pipeline latest", "GET", "/api/repos/{repo_id}/pipelines/latest"),
    Probe("pipeline missing", "GET", "/api/repos/{repo_id}/pipelines/999999"),
    Probe("pipeline bad number", "GET", "/api/repos/{repo_id}/pipelines/abc"),
    Probe("pipeline config", "GET", "/api/repos/{repo_id}/pipelines/{done_number}/config"),
    Probe("pipeline metadata", "GET", "/api/repos/{repo_id}/pipelines/{done_number}/metadata"),
    Probe("step log", "GET", "/api/repos/{repo_id}/logs/{done_number}/{step_id}"),
    Probe("step log missing step", "GET", "/api/repos/{repo_id}/logs/{done_number}/999999"),
    Probe("repo secrets", "GET", "/api/repos/{repo_id}/secrets"),
    Probe("repo secret", "GET", "/api/repos/{repo_id}/secrets/{repo_secret}"),
    Probe("repo secret missing", "GET", "/api/repos/{repo_id}/secrets/nope"),
    Probe("repo registries", "GET", "/api/repos/{repo_id}/registries"),
    Probe("repo registry", "GET", "/api/repos/{repo_id}/registries/{repo_registry}"),
    Probe("crons", "GET", "/api/repos/{repo_id}/cron"),
    Probe("cron", "GET", "/api/repos/{repo_id}/cron/{cron_id}"),
    Probe("cron missing", "GET", "/api/repos/{repo_id}/cron/999999"),
    Probe("global secrets", "GET", "/api/secrets"),
    Probe("global secrets as user", "GET", "/api/secrets", caller="user"),
    Probe("global secret", "GET", "/api/secrets/{global_secret}"),
    Probe("global registries", "GET", "/api/registries"),
    Probe("global registry", "GET", "/api/registries/{global_registry}"),
    Probe("agents", "GET", "/api/agents"),
    Probe("agent", "GET", "/api/agents/{agent_id}"),
    Probe("agent tasks", "GET", "/api/agents/{agent_id}/tasks"),
    Probe("agent missing", "GET", "/api/agents/999999"),
    Probe("forges", "GET", "/api/forges"),
    Probe("forges as user", "GET", "/api/forges", caller="user"),
    Probe("forge", "GET", "/api/forges/1"),
    Probe("queue", "GET", "/api/pipelines"),
    Probe("queue info", "GET", "/api/queue/info"),
    Probe("log level", "GET", "/api/log-level"),
    Probe("signature key", "GET", "/api/signature/public-key"),
)

# Answers the guard decides from, and other state changes; run in this order after READS.
WRITES: tuple[Probe, ...] = (
    Probe("approve non-blocked", "POST", "/api/repos/{repo_id}/pipelines/{done_number}/approve"),
    Probe("decline non-blocked", "POST", "/api/repos/{repo_id}/pipelines/{done_number}/decline"),
    Probe("restart blocked", "POST", "/api/repos/{repo_id}/pipelines/{blocked_number}"),
    Probe("delete blocked", "DELETE", "/api/repos/{repo_id}/pipelines/{blocked_number}"),
    Probe("cancel finished", "POST", "/api/repos/{repo_id}/pipelines/{done_number}/cancel"),
    Probe(
        "restart bad event", "POST", "/api/repos/{repo_id}/pipelines/{done_number}", query={"event": "push"}
    ),
    Probe(
        "restart declined",
        "POST",
        "/api/repos/{repo_id}/pipelines/{declined_number}",
        value=lambda p: (p["status"], bool(p["reviewed_by"]), p["parent"] > 0),
    ),
    Probe(
        "approve blocked",
        "POST",
        "/api/repos/{repo_id}/pipelines/{blocked_number}/approve",
        value=lambda p: (p["status"], bool(p["reviewed_by"])),
    ),
    Probe(
        "trigger unknown branch", "POST", "/api/repos/{repo_id}/pipelines", body={"branch": "no-such-branch"}
    ),
    Probe("trigger no body", "POST", "/api/repos/{repo_id}/pipelines"),
    Probe("activate known active", "POST", "/api/repos", query={"forge_remote_id": "{forge_remote_id}"}),
    Probe("activate no id", "POST", "/api/repos"),
    Probe(
        "patch repo approval",
        "PATCH",
        "/api/repos/{repo_id}",
        body={"require_approval": "pull_requests"},
        value=lambda r: r["require_approval"],
    ),
    Probe("patch repo bad approval", "PATCH", "/api/repos/{repo_id}", body={"require_approval": "sometimes"}),
    Probe("patch repo bad visibility", "PATCH", "/api/repos/{repo_id}", body={"visibility": "secret"}),
    Probe("patch repo timeout 0", "PATCH", "/api/repos/{repo_id}", body={"timeout": 0}),
    Probe(
        "patch repo form body",
        "PATCH",
        "/api/repos/{repo_id}",
        body="allow_deploy=true",
        content_type="application/x-www-form-urlencoded",
    ),
    Probe("patch repo empty", "PATCH", "/api/repos/{repo_id}", body={}),
    Probe("patch repo as user", "PATCH", "/api/repos/{repo_id}", body={"timeout": 30}, caller="user"),
    Probe(
        "patch user email only",
        "PATCH",
        "/api/users/{user_login}",
        body={"email": "x@example.org"},
        value=lambda u: (u.get("login"), u.get("email"), u.get("admin", False)),
    ),
    Probe(
        "patch user admin",
        "PATCH",
        "/api/users/{user_login}",
        body={"admin": True},
        value=lambda u: (u.get("login"), u.get("email"), u.get("admin", False)),
    ),
    Probe(
        "patch user admin false",
        "PATCH",
        "/api/users/{user_login}",
        body={"admin": False, "login": "{user_login}"},
        value=lambda u: u.get("admin", False),
    ),
    Probe("patch user as user", "PATCH", "/api/users/{user_login}", body={"admin": True}, caller="user"),
    Probe(
        "patch agent name",
        "PATCH",
        "/api/agents/{agent_id}",
        body={"name": "renamed"},
        value=lambda a: (a.get("name"), a.get("no_schedule")),
    ),
    Probe(
        "patch agent no_schedule",
        "PATCH",
        "/api/agents/{agent_id}",
        body={"no_schedule": True},
        value=lambda a: (a.get("name"), a.get("no_schedule")),
    ),
    Probe(
        "patch repo secret events",
        "PATCH",
        "/api/repos/{repo_id}/secrets/{repo_secret}",
        body={"events": ["push"]},
        value=lambda s: (s.get("events"), s.get("images")),
    ),
    Probe(
        "patch repo secret empty value",
        "PATCH",
        "/api/repos/{repo_id}/secrets/{repo_secret}",
        body={"value": "", "images": ["alpine"]},
        value=lambda s: (s.get("events"), s.get("images")),
    ),
    Probe(
        "patch repo secret no events",
        "PATCH",
        "/api/repos/{repo_id}/secrets/{repo_secret}",
        body={"events": []},
    ),
    Probe(
        "create secret no events", "POST", "/api/repos/{repo_id}/secrets", body={"name": "x", "value": "y"}
    ),
    Probe(
        "create secret dup",
        "POST",
        "/api/repos/{repo_id}/secrets",
        body={"name": "{repo_secret}", "value": "y", "events": ["push"]},
    ),
    Probe("patch global secret", "PATCH", "/api/secrets/{global_secret}", body={"note": "n"}),
    Probe(
        "patch registry", "PATCH", "/api/repos/{repo_id}/registries/{repo_registry}", body={"username": "v"}
    ),
    Probe("create cron bad", "POST", "/api/repos/{repo_id}/cron", body={"name": "bad", "schedule": "* *"}),
    Probe("patch cron", "PATCH", "/api/repos/{repo_id}/cron/{cron_id}", body={"enabled": True}),
    Probe("set log level bad", "POST", "/api/log-level", body={"log-level": "loud"}),
    Probe("set log level", "POST", "/api/log-level", body={"log-level": "info"}),
    Probe("queue pause", "POST", "/api/queue/pause"),
    Probe("queue resume", "POST", "/api/queue/resume"),
    Probe("move no to", "POST", "/api/repos/{repo_id}/move"),
    Probe("move bad to", "POST", "/api/repos/{repo_id}/move", query={"to": "nameonly"}),
    Probe("move to missing forge repo", "POST", "/api/repos/{repo_id}/move", query={"to": "nobody/nothing"}),
    Probe("repair repo", "POST", "/api/repos/{repo_id}/repair"),
    Probe("chown", "POST", "/api/repos/{repo_id}/chown"),
    Probe("delete user missing", "DELETE", "/api/users/nobody-at-all"),
)


def _formatted(value: Any, subjects: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return value.format(**subjects)
    if isinstance(value, dict):
        return {k: _formatted(v, subjects) for k, v in value.items()}
    if isinstance(value, list):
        return [_formatted(v, subjects) for v in value]
    return value


def run(targets: tuple[Target, Target], probes: tuple[Probe, ...]) -> list[dict[str, Any]]:
    """Each probe to both targets (real first); one row per probe."""
    rows: list[dict[str, Any]] = []
    for probe in probes:
        answers = []
        for target in targets:
            concrete = Probe(
                probe.name,
                probe.method,
                probe.path,
                probe.caller,
                {k: _formatted(v, target.subjects) for k, v in probe.query.items()},
                _formatted(probe.body, target.subjects),
                probe.content_type,
                probe.value,
            )
            answers.append(ask(target, concrete))
        real, sandbox = answers
        diffs = compare(real, sandbox)
        if probe.value is not None and real.kind == sandbox.kind == "json":
            try:
                a, b = probe.value(real.body), probe.value(sandbox.body)
            except (KeyError, TypeError) as exc:
                a = b = f"unreadable: {exc!r}"
            if a != b:
                diffs.append(f"value real {a!r} sandbox {b!r}")
        rows.append(
            {
                "probe": probe.name,
                "request": f"{probe.method} {probe.path}" + (f"?{probe.query}" if probe.query else ""),
                "real": f"{real.status} {real.kind}",
                "sandbox": f"{sandbox.status} {sandbox.kind}",
                "real_text": real.text if real.kind != "json" else "",
                "sandbox_text": sandbox.text if sandbox.kind != "json" else "",
                "diffs": diffs,
                "significant": significant(diffs),
            }
        )
    return rows
