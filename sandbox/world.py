"""The simulated Woodpecker's whole state in memory, with the permission rules Woodpecker applies to it."""

import itertools
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sandbox.biglogs import BigLog
from sandbox.models import (
    Agent,
    Config,
    Cron,
    Forge,
    ForgeRepo,
    LogEntry,
    Org,
    Perm,
    Pipeline,
    Registry,
    Repo,
    Secret,
    Task,
    User,
)

VERSIONS = {"3.17": "3.17.0", "3.11": "3.11.0"}


@dataclass
class OrgMembership:
    member: bool
    admin: bool


@dataclass(frozen=True)
class Finish:
    """A running pipeline's end, due at clock time `at`: its status, and each running step's state and exit code."""

    at: float
    status: str
    steps: dict[int, tuple[str, int]]  # step id -> (state, exit code); other running steps succeed


@dataclass
class World:
    """Everything a Woodpecker server would keep in its database plus what its forge would answer."""

    version: str
    clock: Callable[[], float]
    lock: threading.RLock = field(default_factory=threading.RLock)
    users: dict[int, User] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)  # token -> user id
    orgs: dict[int, Org] = field(default_factory=dict)
    memberships: dict[tuple[int, str], OrgMembership] = field(default_factory=dict)  # (user id, org name)
    repos: dict[int, Repo] = field(default_factory=dict)
    forge_repos: dict[str, ForgeRepo] = field(default_factory=dict)  # forge_remote_id -> forge view
    perms: dict[tuple[int, int], Perm] = field(default_factory=dict)  # (user id, repo id)
    redirections: dict[str, int] = field(default_factory=dict)  # former full name -> repo id
    pipelines: dict[int, Pipeline] = field(default_factory=dict)
    logs: dict[int, list[LogEntry]] = field(default_factory=dict)  # step id -> entries
    big_logs: dict[int, BigLog] = field(default_factory=dict)  # step id -> generated log
    configs: dict[int, list[Config]] = field(default_factory=dict)  # pipeline id -> configs
    secrets: dict[int, Secret] = field(default_factory=dict)
    registries: dict[int, Registry] = field(default_factory=dict)
    crons: dict[int, Cron] = field(default_factory=dict)
    agents: dict[int, Agent] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)
    forges: dict[int, Forge] = field(default_factory=dict)
    finishes: dict[int, Finish] = field(default_factory=dict)  # pipeline id -> when and how it ends
    queue_paused: bool = False
    log_level: str = "info"
    worker_count: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(100_000))

    @property
    def version_string(self) -> str:
        return VERSIONS[self.version]

    def new_id(self) -> int:
        """A fresh id for any new row; one sequence for all tables keeps ids unique and readable."""
        return next(self._ids)

    def now(self) -> int:
        return int(self.clock())

    # ------------------------------------------------------------------ look-ups

    def user_for_token(self, token: str | None) -> User | None:
        if not token:
            return None
        uid = self.sessions.get(token)
        return None if uid is None else self.users.get(uid)

    def user_by_login(self, login: str, forge_id: int = 1) -> User | None:
        return next((u for u in self.users.values() if u.login == login and u.forge_id == forge_id), None)

    def org_by_name(self, name: str, forge_id: int = 1) -> Org | None:
        return next((o for o in self.orgs.values() if o.name == name and o.forge_id == forge_id), None)

    def repo_by_name(self, full_name: str) -> Repo | None:
        repo = next((r for r in self.repos.values() if r.full_name == full_name), None)
        if repo is None and full_name in self.redirections:
            # Woodpecker follows rename redirections recorded by move/repair.
            repo = self.repos.get(self.redirections[full_name])
        return repo

    def repo_pipelines(self, repo_id: int) -> list[Pipeline]:
        """The repository's pipelines, newest number first."""
        return sorted(
            (p for p in self.pipelines.values() if p.repo_id == repo_id), key=lambda p: p.number, reverse=True
        )

    def pipeline(self, repo_id: int, number: int) -> Pipeline | None:
        return next((p for p in self.pipelines.values() if p.repo_id == repo_id and p.number == number), None)

    def next_number(self, repo_id: int) -> int:
        return max((p.number for p in self.pipelines.values() if p.repo_id == repo_id), default=0) + 1

    def forge_repo_for(self, repo: Repo) -> ForgeRepo | None:
        return self.forge_repos.get(repo.forge_remote_id)

    # ------------------------------------------------------------------ permissions

    def repo_perm(self, user: User | None, repo: Repo) -> Perm:
        """Woodpecker's SetPerm: stored perms, widened for admins, public and internal repositories."""
        stored = self.perms.get((user.id, repo.id)) if user else None
        perm = Perm(**vars(stored)) if stored else Perm(False, False, False)
        if user is not None and user.admin:
            perm.pull = perm.push = perm.admin = True
        if repo.visibility == "public" or (repo.visibility == "internal" and user is not None):
            perm.pull = True
        return perm

    def membership(self, user: User, org: Org) -> OrgMembership:
        return self.memberships.get((user.id, org.name), OrgMembership(False, False))

    def passes_org(self, user: User, org: Org, admin: bool) -> bool:
        """MustOrgMember: instance admins and the user's own org always pass, else the forge decides."""
        if (org.name == user.login and org.forge_id == user.forge_id) or user.admin:
            return True
        if org.forge_id != user.forge_id:
            return False
        m = self.membership(user, org)
        return m.admin if admin else m.member

    def new_token(self) -> str:
        return secrets.token_hex(32)

    # ------------------------------------------------------------------ time

    def settle(self) -> None:
        """Let every running pipeline whose end is due (by `clock`) finish, as agents would have reported.

        Called before each request, so what a client reads follows the clock; a test moves the clock.
        """
        now = self.clock()
        for pipeline_id, finish in list(self.finishes.items()):
            if finish.at > now:
                continue
            del self.finishes[pipeline_id]
            pipeline = self.pipelines.get(pipeline_id)
            if pipeline is None or pipeline.status not in ("running", "pending"):
                continue  # deleted or cancelled meanwhile
            at = int(finish.at)
            for workflow in pipeline.workflows:
                for step in workflow.children:
                    if step.state in ("running", "pending"):
                        step.state, step.exit_code = finish.steps.get(step.id, ("success", 0))
                        step.started = step.started or at
                        step.finished = at
                failed = any(s.state in ("failure", "killed", "error") for s in workflow.children)
                if workflow.state in ("running", "pending"):
                    workflow.state = "failure" if failed else "success"
                    workflow.finished = at
            pipeline.status = finish.status
            pipeline.finished = pipeline.updated = at
            self.tasks = [t for t in self.tasks if t.pipeline_id != pipeline_id]
