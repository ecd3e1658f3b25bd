"""The simulated Woodpecker's records, serialised with Woodpecker 3.17's exact JSON field names and omitempty rules."""

import base64
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

EVENTS = (
    "push",
    "pull_request",
    "pull_request_closed",
    "pull_request_metadata",
    "tag",
    "release",
    "deployment",
    "cron",
    "manual",
)
STATUSES = (
    "skipped",
    "pending",
    "running",
    "success",
    "failure",
    "killed",
    "canceled",
    "error",
    "blocked",
    "declined",
    "created",
)
APPROVAL_MODES = ("none", "forks", "pull_requests", "all_events")
VISIBILITIES = ("public", "private", "internal")
FORGE_TYPES = ("github", "gitlab", "gitea", "forgejo", "bitbucket", "bitbucket-dc", "addon")
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "fatal", "panic", "disabled")


def _omit(out: JSON, key: str, value: Any) -> None:
    """Go's `omitempty`: leave the key out for a zero value (0, "", False, None, empty list or map)."""
    if value:
        out[key] = value


@dataclass
class User:
    id: int
    login: str
    email: str
    avatar_url: str
    forge_id: int = 1
    forge_remote_id: str = ""
    admin: bool = False
    org_id: int = 0

    def api(self, admin_env: bool = False) -> JSON:
        out: JSON = {"id": self.id}
        _omit(out, "forge_id", self.forge_id)
        out.update(
            forge_remote_id=self.forge_remote_id,
            login=self.login,
            email=self.email,
            avatar_url=self.avatar_url,
        )
        # `admin` is `omitempty` in Woodpecker: a non-admin user has no admin key at all.
        _omit(out, "admin", self.admin)
        _omit(out, "admin_env", admin_env)
        out["org_id"] = self.org_id
        return out


@dataclass
class Org:
    id: int
    name: str
    is_user: bool
    forge_id: int = 1
    private: bool = False

    def api(self) -> JSON:
        out: JSON = {}
        _omit(out, "id", self.id)
        _omit(out, "forge_id", self.forge_id)
        out.update(name=self.name, is_user=self.is_user)
        return out


@dataclass
class Perm:
    pull: bool
    push: bool
    admin: bool
    synced: int = 0
    created: int = 0
    updated: int = 0

    def api(self) -> JSON:
        return {
            "pull": self.pull,
            "push": self.push,
            "admin": self.admin,
            "synced": self.synced,
            "created": self.created,
            "updated": self.updated,
        }


def _list_or_null(items: list[str] | None) -> list[str] | None:
    return None if items is None else list(items)


@dataclass
class Repo:
    id: int
    forge_remote_id: str
    org_id: int
    owner: str
    name: str
    user_id: int
    visibility: str = "public"
    private: bool = False
    active: bool = True
    default_branch: str = "main"
    forge_id: int = 1
    timeout: int = 60
    require_approval: str = "forks"
    # Lists never set are NULL in Woodpecker's table (JSON null in answers); see docs/adr/0057.
    approval_allowed_users: list[str] | None = None
    allow_pr: bool = True
    allow_deploy: bool = False
    pr_enabled: bool = True
    config_file: str = ""
    cancel_previous_pipeline_events: list[str] | None = None
    netrc_trusted: list[str] | None = None
    trusted: dict[str, bool] = field(
        default_factory=lambda: {"network": False, "volumes": False, "security": False}
    )
    config_extension_endpoint: str = ""
    config_extension_exclusive: bool = False
    config_extension_netrc: bool = False
    registry_extension_endpoint: str = ""
    registry_extension_netrc: bool = False
    secret_extension_endpoint: str = ""
    secret_extension_netrc: bool = False
    forge_url_base: str = "https://forge.example.org"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def api(self) -> JSON:
        out: JSON = {}
        _omit(out, "id", self.id)
        _omit(out, "forge_id", self.forge_id)
        out.update(
            forge_remote_id=self.forge_remote_id,
            org_id=self.org_id,
            owner=self.owner,
            name=self.name,
            full_name=self.full_name,
            avatar_url=f"{self.forge_url_base}/avatars/{self.owner}",
            forge_url=f"{self.forge_url_base}/{self.full_name}",
            clone_url=f"{self.forge_url_base}/{self.full_name}.git",
            clone_url_ssh=f"git@forge.example.org:{self.full_name}.git",
        )
        _omit(out, "default_branch", self.default_branch)
        out["pr_enabled"] = self.pr_enabled
        _omit(out, "timeout", self.timeout)
        out.update(
            visibility=self.visibility,
            private=self.private,
            trusted=dict(self.trusted),
            require_approval=self.require_approval,
            approval_allowed_users=_list_or_null(self.approval_allowed_users),
            active=self.active,
            allow_pr=self.allow_pr,
            allow_deploy=self.allow_deploy,
            config_file=self.config_file,
            cancel_previous_pipeline_events=_list_or_null(self.cancel_previous_pipeline_events),
            netrc_trusted=_list_or_null(self.netrc_trusted),
            config_extension_endpoint=self.config_extension_endpoint,
            config_extension_exclusive=self.config_extension_exclusive,
            config_extension_netrc=self.config_extension_netrc,
            registry_extension_endpoint=self.registry_extension_endpoint,
            registry_extension_netrc=self.registry_extension_netrc,
            secret_extension_endpoint=self.secret_extension_endpoint,
            secret_extension_netrc=self.secret_extension_netrc,
        )
        return out


@dataclass
class Step:
    id: int
    uuid: str
    pipeline_id: int
    pid: int
    ppid: int
    name: str
    state: str
    exit_code: int = 0
    started: int = 0
    finished: int = 0
    type: str = "commands"
    error: str = ""

    def api(self) -> JSON:
        out: JSON = {
            "id": self.id,
            "uuid": self.uuid,
            "pipeline_id": self.pipeline_id,
            "pid": self.pid,
            "ppid": self.ppid,
            "name": self.name,
            "state": self.state,
        }
        _omit(out, "error", self.error)
        out["exit_code"] = self.exit_code
        _omit(out, "started", self.started)
        _omit(out, "finished", self.finished)
        _omit(out, "type", self.type)
        return out


@dataclass
class Workflow:
    id: int
    pipeline_id: int
    pid: int
    name: str
    state: str
    started: int = 0
    finished: int = 0
    agent_id: int = 0
    platform: str = ""
    error: str = ""
    environ: dict[str, str] = field(default_factory=dict)
    children: list[Step] = field(default_factory=list)

    def api(self) -> JSON:
        out: JSON = {
            "id": self.id,
            "pipeline_id": self.pipeline_id,
            "pid": self.pid,
            "name": self.name,
            "state": self.state,
        }
        _omit(out, "error", self.error)
        _omit(out, "started", self.started)
        _omit(out, "finished", self.finished)
        _omit(out, "agent_id", self.agent_id)
        _omit(out, "platform", self.platform)
        _omit(out, "environ", dict(self.environ))
        # Steps travel as `children` of their workflow.
        _omit(out, "children", [s.api() for s in self.children])
        return out


@dataclass
class Pipeline:
    id: int
    repo_id: int
    number: int
    event: str
    status: str
    branch: str
    commit: str
    ref: str
    message: str
    author: str
    created: int
    title: str = ""
    parent: int = 0
    event_reason: list[str] | None = None
    errors: list[JSON] | None = None
    updated: int = 0
    started: int = 0
    finished: int = 0
    deploy_to: str = ""
    deploy_task: str = ""
    rerun_count: int = 0
    refspec: str = ""
    author_avatar: str = ""
    author_email: str = ""
    forge_url: str = ""
    reviewed_by: str = ""
    reviewed: int = 0
    cancel_info: JSON | None = None
    workflows: list[Workflow] = field(default_factory=list)
    changed_files: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    pr_labels: list[str] = field(default_factory=list)
    pr_milestone: str = ""
    pr_draft: bool = False
    cron: str = ""
    from_fork: bool = False
    version: str = "3.17.0"
    release: JSON | None = None
    tag_title: str = ""
    timestamp: int = 0
    sender: str = ""

    def steps(self) -> list[Step]:
        return [s for w in self.workflows for s in w.children]

    def api(self, with_workflows: bool = True) -> JSON:
        # The repository id is `json:"-"` in Woodpecker: a pipeline never says which repo it belongs to.
        out: JSON = {
            "id": self.id,
            "number": self.number,
            "author": self.author,
            "parent": self.parent,
            "event": self.event,
            "event_reason": None if self.event_reason is None else list(self.event_reason),
            "status": self.status,
            "errors": None if self.errors is None else [dict(e) for e in self.errors],
            "created": self.created,
            "updated": self.updated,
            "started": self.started,
            "finished": self.finished,
            "deploy_to": self.deploy_to,
            "deploy_task": self.deploy_task,
            "commit": self.commit,
            "branch": self.branch,
            "rerun_count": self.rerun_count,
            "ref": self.ref,
            "refspec": self.refspec,
            "author_avatar": self.author_avatar,
            "forge_url": self.forge_url,
            "reviewed_by": self.reviewed_by,
            "reviewed": self.reviewed,
        }
        _omit(out, "cancel_info", None if self.cancel_info is None else dict(self.cancel_info))
        if with_workflows:
            _omit(out, "workflows", [w.api() for w in self.workflows])
        _omit(out, "changed_files", list(self.changed_files))
        _omit(out, "variables", dict(self.variables))
        _omit(out, "pr_labels", list(self.pr_labels))
        _omit(out, "pr_milestone", self.pr_milestone)
        _omit(out, "pr_draft", self.pr_draft)
        _omit(out, "cron", self.cron)
        _omit(out, "from_fork", self.from_fork)
        out["version"] = self.version
        _omit(out, "release", None if self.release is None else dict(self.release))
        _omit(out, "tag_title", self.tag_title)
        out.update(
            title=self.title,
            message=self.message,
            timestamp=self.timestamp,
            sender=self.sender,
            author_email=self.author_email,
        )
        # APIPipeline's deprecated mirror of release.is_prerelease (omitempty).
        _omit(out, "is_prerelease", bool(self.release and self.release.get("is_prerelease")))
        return out

    def feed(self, repo: "Repo") -> JSON:
        out: JSON = {"repo_id": repo.id}
        _omit(out, "full_name", repo.full_name)
        _omit(out, "id", self.id)
        _omit(out, "number", self.number)
        _omit(out, "event", self.event)
        _omit(out, "status", self.status)
        _omit(out, "created", self.created)
        _omit(out, "started", self.started)
        _omit(out, "finished", self.finished)
        _omit(out, "commit", self.commit)
        _omit(out, "branch", self.branch)
        _omit(out, "ref", self.ref)
        _omit(out, "refspec", self.refspec)
        _omit(out, "title", self.title)
        _omit(out, "author", self.author)
        _omit(out, "author_avatar", self.author_avatar)
        _omit(out, "author_email", self.author_email)
        _omit(out, "release", None if self.release is None else dict(self.release))
        _omit(out, "tag_title", self.tag_title)
        _omit(out, "message", self.message)
        return out


@dataclass
class LogEntry:
    id: int
    step_id: int
    time: int
    line: int
    data: bytes
    type: int = 0

    def api(self) -> JSON:
        # Go's []byte marshals as a base64 string, not the integer array the swagger claims.
        return {
            "id": self.id,
            "step_id": self.step_id,
            "time": self.time,
            "line": self.line,
            "data": base64.b64encode(self.data).decode("ascii"),
            "type": self.type,
        }


@dataclass
class Config:
    hash: str
    name: str
    data: bytes

    def api(self) -> JSON:
        return {"hash": self.hash, "name": self.name, "data": base64.b64encode(self.data).decode("ascii")}


@dataclass
class Secret:
    id: int
    org_id: int
    repo_id: int
    name: str
    value: str
    events: list[str]
    images: list[str] = field(default_factory=list)
    note: str = ""

    def api(self) -> JSON:
        # The value is stripped from every response (Secret.Value is omitempty and blanked first).
        return {
            "id": self.id,
            "org_id": self.org_id,
            "repo_id": self.repo_id,
            "name": self.name,
            "images": list(self.images),
            "events": sorted(self.events),
            "note": self.note,
        }


@dataclass
class Registry:
    id: int
    org_id: int
    repo_id: int
    address: str
    username: str
    password: str
    readonly: bool = False

    def api(self) -> JSON:
        # The password is always answered as "".
        return {
            "id": self.id,
            "org_id": self.org_id,
            "repo_id": self.repo_id,
            "address": self.address,
            "username": self.username,
            "password": "",
            "readonly": self.readonly,
        }


@dataclass
class Cron:
    id: int
    name: str
    repo_id: int
    creator_id: int
    schedule: str
    created: int
    next_exec: int = 0
    timezone: str = "UTC"
    branch: str = ""
    enabled: bool = False
    variables: dict[str, str] | None = None

    def api(self) -> JSON:
        return {
            "id": self.id,
            "name": self.name,
            "repo_id": self.repo_id,
            "creator_id": self.creator_id,
            "next_exec": self.next_exec,
            "schedule": self.schedule,
            "timezone": self.timezone,
            "created": self.created,
            "branch": self.branch,
            "enabled": self.enabled,
            "variables": None if self.variables is None else dict(self.variables),
        }


@dataclass
class Agent:
    id: int
    name: str
    owner_id: int
    token: str
    org_id: int = -1
    created: int = 0
    updated: int = 0
    last_contact: int = 0
    last_work: int = 0
    platform: str = ""
    backend: str = ""
    capacity: int = 0
    version: str = ""
    no_schedule: bool = False
    custom_labels: dict[str, str] | None = None

    def api(self) -> JSON:
        # The token is returned in clear text: that is Woodpecker's behaviour, not ours to fix here.
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "name": self.name,
            "owner_id": self.owner_id,
            "token": self.token,
            "last_contact": self.last_contact,
            "last_work": self.last_work,
            "platform": self.platform,
            "backend": self.backend,
            "capacity": self.capacity,
            "version": self.version,
            "no_schedule": self.no_schedule,
            "custom_labels": None if self.custom_labels is None else dict(self.custom_labels),
            "org_id": self.org_id,
        }


@dataclass
class Task:
    id: str
    pid: int
    name: str
    pipeline_id: int
    repo_id: int
    agent_id: int
    created: int
    running: bool
    labels: dict[str, str] = field(default_factory=dict)
    dependencies: list[str] | None = None
    run_on: list[str] | None = None
    dep_status: dict[str, str] = field(default_factory=dict)

    def api(self) -> JSON:
        return {
            "id": self.id,
            "pid": self.pid,
            "name": self.name,
            "labels": dict(self.labels),
            "dependencies": None if self.dependencies is None else list(self.dependencies),
            "run_on": None if self.run_on is None else list(self.run_on),
            "dep_status": dict(self.dep_status),
            "agent_id": self.agent_id,
            "pipeline_id": self.pipeline_id,
            "repo_id": self.repo_id,
            "concurrency_limit": 0,
            "concurrency_group": "",
            "created": self.created,
        }


@dataclass
class Forge:
    id: int
    type: str
    url: str
    client: str = ""
    oauth_client_secret: str = ""
    skip_verify: bool = False
    oauth_host: str = ""
    additional_options: dict[str, Any] | None = None

    def api(self, full: bool = True) -> JSON:
        out: JSON = {"id": self.id, "type": self.type, "url": self.url}
        if not full:
            # Non-admins (and anonymous callers) see the public view only.
            return out
        _omit(out, "client", self.client)
        _omit(out, "skip_verify", self.skip_verify)
        _omit(out, "oauth_host", self.oauth_host)
        _omit(out, "additional_options", dict(self.additional_options or {}))
        return out


@dataclass
class ForgeRepo:
    """A repository as the (simulated) forge knows it, whether or not Woodpecker has activated it."""

    forge_remote_id: str
    owner: str
    name: str
    private: bool
    default_branch: str = "main"
    branches: list[str] = field(default_factory=lambda: ["main"])
    pull_requests: list[tuple[str, str]] = field(default_factory=list)
    admins: tuple[str, ...] = ()
    # Old name -> current name of a renamed branch: GitHub answers a branch read of the old name with a
    # redirect that go-github's GetBranch(..., maxRedirects=1), Woodpecker's BranchHead, follows.
    renamed: dict[str, str] = field(default_factory=dict)
    # Names the forge also answers for this repository: it was renamed or transferred there at the forge,
    # which is what POST /api/repos/{id}/move follows (Woodpecker reads the target from the forge first).
    known_as: tuple[str, ...] = ()

    def answers_to(self, full_name: str) -> bool:
        return full_name == self.full_name or full_name in self.known_as

    def branch_head(self, branch: str) -> str | None:
        """The branch BranchHead resolves `branch` to (following one rename), or None when unknown."""
        resolved = self.renamed.get(branch, branch)
        return resolved if resolved in self.branches else None

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"
