"""The guard's matrix on a real Woodpecker: one case per guarded tool (and per conditional rule's direction),
each naming objects of its own, so the cases run in any order on one server.

`seed_guard` makes the objects through Woodpecker's API, the forge fake and the agent (pipelines really
run). A case's `arrange` names (or makes) its target and says how to read it back over the API, what an
accepted call leaves there (`expect`, from the read before), and what to wait for or undo afterwards.
"""

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.real.forge_fake import ForgeRepo
from tests.real.harness import ADMIN, ORG, OUTSIDER, PIPELINE_OK, USER, Real, _login
from tests.real.scenario import FINISHED, _ok, _wait_status, pull_request, push

# A schedule that fires on January 1st only: no cron of these cases runs by itself during a test.
YEARLY = "0 3 1 1 *"
CONFIG = PIPELINE_OK  # one step that passes


@dataclass
class World:
    """What seed_guard made: Woodpecker ids by role."""

    repos: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> Woodpecker repo
    forge: dict[str, ForgeRepo] = field(default_factory=dict)  # role -> forge repo
    pipelines: dict[str, int] = field(default_factory=dict)  # role -> number in the app repository
    # role -> the pipeline as Woodpecker answered once it was held or finished, before any case ran
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)
    crons: dict[str, int] = field(default_factory=dict)  # name -> id in the app repository
    agents: dict[str, int] = field(default_factory=dict)  # name -> id
    forges: dict[str, int] = field(default_factory=dict)  # role -> id
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # login -> Woodpecker user
    org_id: int = 0  # acme's

    @property
    def app(self) -> int:
        return int(self.repos["app"]["id"])


@dataclass
class Env:
    real: Real
    world: World
    http: httpx.Client  # as the instance admin


def _nothing() -> None:
    return None


@dataclass
class Target:
    args: dict[str, Any]
    read: Callable[[], Any]  # what the call may change, read back over the API
    expect: Callable[[Any], Any]  # the read after an accepted call, from the read before
    settle: Callable[[], None] = _nothing  # after the accepted call: wait for what it started, undo a switch


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arrange: Callable[[Env], Target]
    asks: bool = True
    refused: str | None = None  # the error kind of a call that asks nobody and sends nothing
    says: tuple[str, ...] = ()  # lines the question has
    never_says: tuple[str, ...] = ()  # what the question never has
    outcomes: tuple[str, ...] | None = None  # the audit's outcomes of the whole case, when it names them
    # Versions whose answer to the accepted write is an error after it took effect (tests/real/versions.py):
    # the tool says the outcome is unknown, with what its read-back found.
    unknown_on: frozenset[str] = frozenset()


# --- the seeded world ----------------------------------------------------------------------------------


def _activate(http: httpx.Client, repo: ForgeRepo) -> dict[str, Any]:
    return dict(_ok(http.post("/api/repos", params={"forge_remote_id": str(repo.id)})).json())


def _trigger(http: httpx.Client, repo_id: int, branch: str) -> int:
    return int(_ok(http.post(f"/api/repos/{repo_id}/pipelines", json={"branch": branch})).json()["number"])


def _newest(http: httpx.Client, repo_id: int) -> int:
    return int(_ok(http.get(f"/api/repos/{repo_id}/pipelines", params={"perPage": 1})).json()[0]["number"])


def seed_guard(real: Real) -> World:
    w = World()
    forge = real.forge
    own = {
        "lib": forge.repo_by_name(ADMIN, "lib"),
        "repair_instance": forge.add_repo(ADMIN, "repair-all"),
        "repair_one": forge.add_repo(ADMIN, "repair-one"),
        "movable": forge.add_repo(ADMIN, "movable"),
        "move_to": forge.add_repo(ADMIN, "moved-here"),
        "doomed": forge.add_repo(ADMIN, "doomed"),
        "reactivate": forge.add_repo(ADMIN, "known-before"),
        "fresh": forge.add_repo(ADMIN, "never-seen"),
        "alices": forge.add_repo(USER, "alices"),
    }
    forge.add_org("doomed-org", owner=ADMIN)
    own["org_repo"] = forge.add_repo("doomed-org", "svc")
    app = forge.repo_by_name(ORG, "app")
    assert app is not None and all(own.values())
    own["app"] = app
    for repo in own.values():
        assert repo is not None
        forge.commit(repo, "main", {".woodpecker/build.yaml": CONFIG})
    w.forge = {k: v for k, v in own.items() if v is not None}
    for branch in ("held", "approve-me", "declined", "pull-base"):
        forge.commit(app, branch, {".woodpecker/build.yaml": CONFIG})
    with real.client(ADMIN) as http:
        for role in (
            "app",
            "lib",
            "repair_instance",
            "repair_one",
            "movable",
            "doomed",
            "reactivate",
            "org_repo",
        ):
            w.repos[role] = _activate(http, w.forge[role])
        with real.client(USER) as alice:
            w.repos["alices"] = _activate(alice, w.forge["alices"])
        gone = w.repos.pop("reactivate")["id"]
        _ok(http.delete(f"/api/repos/{gone}", params={"remove": "false"}))
        w.org_id = int(w.repos["app"]["org_id"])
        app_id = w.app
        _ok(http.patch(f"/api/repos/{w.repos['lib']['id']}", json={"require_approval": "pull_requests"}))

        # Held pipelines: every event waits for approval while three pushes arrive, then only forks' do.
        _ok(
            http.patch(
                f"/api/repos/{app_id}",
                json={"require_approval": "all_events", "cancel_previous_pipeline_events": []},
            )
        )
        for branch in ("held", "approve-me", "declined"):
            _ok(push(real, app, branch, ADMIN), 200, 202, 204)
            w.pipelines[branch] = _newest(http, app_id)
            _wait_status(http, app_id, w.pipelines[branch], {"blocked"}, 30)
        _ok(http.post(f"/api/repos/{app_id}/pipelines/{w.pipelines['declined']}/decline"))
        _ok(http.patch(f"/api/repos/{app_id}", json={"require_approval": "forks"}))
        # Pull requests under `forks`: one from mallory's fork of app is held (from_fork), one from a branch
        # of app itself is not. Into a branch of their own: a pull request's pipeline carries the branch it
        # goes into, and the start rules read that branch's pipelines (the clear-branch cases start main).
        for role, head, sender in (("fork", forge.fork(app, OUTSIDER), OUTSIDER), ("own_pull", app, USER)):
            files = {".woodpecker/build.yaml": CONFIG}
            _ok(pull_request(real, app, "pull-base", head, f"{role}-change", files, sender))
            w.pipelines[role] = _newest(http, app_id)
        w.seen["fork"] = _wait_status(http, app_id, w.pipelines["fork"], {"blocked"}, 30)
        for role in ("manual", "delete", "step_logs", "pipeline_logs", "finished"):
            w.pipelines[role] = _trigger(http, app_id, "main")
        for role in ("own_pull", "manual", "delete", "step_logs", "pipeline_logs", "finished"):
            w.seen[role] = _wait_status(http, app_id, w.pipelines[role], FINISHED)

        for name, branch in (
            ("run-held", "held"),
            ("run-main", "main"),
            ("move-me", "main"),
            ("rename-me", "main"),
            ("doomed-cron", "main"),
        ):
            cron = {"name": name, "schedule": YEARLY, "branch": branch}
            w.crons[name] = int(_ok(http.post(f"/api/repos/{app_id}/cron", json=cron)).json()["id"])

        at = f"/api/repos/{app_id}"
        for name, events, images in (
            ("ev_secret", ["push"], []),
            ("img_secret", ["push"], ["alpine"]),
            ("narrow_secret", ["push", "manual"], []),
            ("doomed_secret", ["push"], []),
        ):
            _ok(
                http.post(
                    f"{at}/secrets", json={"name": name, "value": "v", "events": events, "images": images}
                )
            )
        _ok(
            http.post(
                f"/api/orgs/{w.org_id}/secrets", json={"name": "org_shadow", "value": "v", "events": ["push"]}
            )
        )
        for address in ("rotate.example.org", "relabel.example.org", "doomed.example.org"):
            _ok(http.post(f"{at}/registries", json={"address": address, "username": "u", "password": "p"}))

        for login in ("promoted", "remailed", "leaving"):
            # Signed in through the forge: POST /api/users gives every account it makes the remote id "0",
            # so a second one fails as a duplicate, and create_user's own case needs that one.
            forge.add_user(login)
            _login(real.url, login)
            w.users[login] = dict(_ok(http.get(f"/api/users/{login}")).json())
        for name, drained in (("drained", True), ("to-drain", False), ("gone-agent", False)):
            agent = _ok(http.post("/api/agents", json={"name": name, "no_schedule": drained})).json()
            w.agents[name] = int(agent["id"])
        for role in ("update", "delete"):
            body = {
                "type": "gitea",
                "url": f"https://{role}.forge.example.org",
                "client": "c",
                "oauth_client_secret": "s",
            }
            w.forges[role] = int(_ok(http.post("/api/forges", json=body)).json()["id"])
    return w


# --- reads ---------------------------------------------------------------------------------------------


def _get(http: httpx.Client, path: str, **params: Any) -> tuple[int, Any]:
    response = http.get(path, params=params)
    return response.status_code, response.json() if response.status_code == 200 else None


def _pipelines(http: httpx.Client, repo_id: int) -> list[dict[str, Any]]:
    return list(_ok(http.get(f"/api/repos/{repo_id}/pipelines", params={"perPage": 50})).json() or [])


def _wait_all(env: Env, repo_id: int) -> Callable[[], None]:
    """Wait until every pipeline of the repository is finished or held (what an accepted start began)."""

    def settle() -> None:
        for p in _pipelines(env.http, repo_id):
            if p["status"] not in FINISHED | {"blocked"}:
                _wait_status(env.http, repo_id, int(p["number"]), FINISHED)

    return settle


def _same(value: Any) -> Any:
    return value


# --- repositories --------------------------------------------------------------------------------------


def _repo_fields(env: Env, repo_id: int, *names: str) -> Callable[[], dict[str, Any]]:
    def read() -> dict[str, Any]:
        repo = _ok(env.http.get(f"/api/repos/{repo_id}")).json()
        return {n: repo.get(n) for n in names}

    return read


def update_repository_lowers_approval(env: Env) -> Target:
    lib = int(env.world.repos["lib"]["id"])
    read = _repo_fields(env, lib, "require_approval", "trusted", "visibility", "allow_pr", "allow_deploy")
    return Target(
        {"repo_id": lib, "require_approval": "none"}, read, lambda b: {**b, "require_approval": "none"}
    )


def update_repository_grants_trust(env: Env) -> Target:
    lib = int(env.world.repos["lib"]["id"])
    read = _repo_fields(env, lib, "trusted", "require_approval", "visibility")
    return Target(
        {"repo_id": lib, "trusted_network": True},
        read,
        lambda b: {**b, "trusted": {**b["trusted"], "network": True}},
    )


def update_repository_raises_approval(env: Env) -> Target:
    lib = int(env.world.repos["lib"]["id"])
    read = _repo_fields(env, lib, "require_approval", "trusted", "visibility")
    return Target(
        {"repo_id": lib, "require_approval": "all_events"},
        read,
        lambda b: {**b, "require_approval": "all_events"},
    )


def _repair(env: Env, role: str, args: dict[str, Any]) -> Target:
    # Repair reads the repository from the forge again: a default branch changed there since lands here.
    repo = env.world.forge[role]
    branch = f"default-{env.real.forge.new_id()}"
    env.real.forge.commit(repo, branch, {".woodpecker/build.yaml": CONFIG})
    with env.real.forge.lock:
        repo.default_branch = branch
    read = _repo_fields(env, int(env.world.repos[role]["id"]), "default_branch")
    return Target(args, read, lambda b: {"default_branch": branch})


def repair_instance(env: Env) -> Target:
    return _repair(env, "repair_instance", {"scope": "instance"})


def repair_one_repository(env: Env) -> Target:
    return _repair(
        env, "repair_one", {"scope": "repository", "repo_id": int(env.world.repos["repair_one"]["id"])}
    )


def move_repository(env: Env) -> Target:
    repo, to = int(env.world.repos["movable"]["id"]), env.world.forge["move_to"]
    read = _repo_fields(env, repo, "full_name", "forge_remote_id")
    return Target(
        {"repo_id": repo, "to": to.full_name},
        read,
        lambda b: {"full_name": to.full_name, "forge_remote_id": str(to.id)},
    )


def chown_repository(env: Env) -> Target:
    repo = int(env.world.repos["alices"]["id"])
    root = int(_ok(env.http.get("/api/user")).json()["id"])

    def read() -> int:
        # The owner is not in the API's answer (Repo.UserID is json:"-"): read the server's own record.
        with sqlite3.connect(env.real.db()) as db:
            (owner,) = db.execute("SELECT user_id FROM repos WHERE id = ?", (repo,)).fetchone()
        return int(owner)

    return Target({"repo_id": repo}, read, lambda b: root)


def delete_repository(env: Env) -> Target:
    repo = int(env.world.repos["doomed"]["id"])
    return Target({"repo_id": repo}, lambda: env.http.get(f"/api/repos/{repo}").status_code, lambda b: 404)


def _lookup(env: Env, repo: ForgeRepo) -> Callable[[], Any]:
    def read() -> Any:
        status, found = _get(env.http, f"/api/repos/lookup/{repo.full_name}")
        return status, (found or {}).get("active")

    return read


def activate_known_repository(env: Env) -> Target:
    repo = env.world.forge["reactivate"]
    return Target({"forge_remote_id": str(repo.id)}, _lookup(env, repo), lambda b: (200, True))


def activate_new_repository(env: Env) -> Target:
    repo = env.world.forge["fresh"]
    return Target({"forge_remote_id": str(repo.id)}, _lookup(env, repo), lambda b: (200, True))


# --- pipelines -----------------------------------------------------------------------------------------


def _runs(env: Env, keep: Callable[[dict[str, Any]], bool]) -> Callable[[], list[str]]:
    def read() -> list[str]:
        return sorted(str(p["event"]) for p in _pipelines(env.http, env.world.app) if keep(p))

    return read


def _trigger_on(env: Env, branch: str) -> Target:
    read = _runs(env, lambda p: p["branch"] == branch and p["event"] == "manual")
    return Target(
        {"repo_id": env.world.app, "branch": branch},
        read,
        lambda b: sorted([*b, "manual"]),
        _wait_all(env, env.world.app),
    )


def trigger_on_a_held_branch(env: Env) -> Target:
    return _trigger_on(env, "held")


def trigger_on_a_clear_branch(env: Env) -> Target:
    return _trigger_on(env, "main")


def _restart(env: Env, number: int, event: str) -> Target:
    read = _runs(env, lambda p: p.get("parent") == number)
    return Target(
        {"repo_id": env.world.app, "number": number},
        read,
        lambda b: sorted([*b, event]),
        _wait_all(env, env.world.app),
    )


def restart_a_declined_pipeline(env: Env) -> Target:
    return _restart(env, env.world.pipelines["declined"], "push")


def restart_a_manual_pipeline(env: Env) -> Target:
    return _restart(env, env.world.pipelines["manual"], "manual")


def _review(env: Env, number: int) -> Callable[[], tuple[str, str, int]]:
    def read() -> tuple[str, str, int]:
        p = _ok(env.http.get(f"/api/repos/{env.world.app}/pipelines/{number}")).json()
        return p["status"], p["reviewed_by"], p["reviewed"]

    return read


def _approve(env: Env, role: str) -> Target:
    number = env.world.pipelines[role]

    def read() -> tuple[bool, str]:
        status, reviewed_by, _ = _review(env, number)()
        return status == "blocked", reviewed_by

    return Target(
        {"repo_id": env.world.app, "number": number},
        read,
        lambda b: (False, ADMIN),
        _wait_all(env, env.world.app),
    )


def approve_pipeline(env: Env) -> Target:
    return _approve(env, "approve-me")


def approve_a_forks_pipeline(env: Env) -> Target:
    return _approve(env, "fork")


def approve_a_finished_pipeline(env: Env) -> Target:
    number = env.world.pipelines["finished"]
    return Target({"repo_id": env.world.app, "number": number}, _review(env, number), _same)


def delete_pipeline(env: Env) -> Target:
    number = env.world.pipelines["delete"]
    path = f"/api/repos/{env.world.app}/pipelines/{number}"
    return Target(
        {"repo_id": env.world.app, "number": number}, lambda: env.http.get(path).status_code, lambda b: 404
    )


def _steps(env: Env, number: int) -> list[int]:
    p = _ok(env.http.get(f"/api/repos/{env.world.app}/pipelines/{number}")).json()
    return [int(s["id"]) for w in p["workflows"] for s in w["children"]]


def _log_lines(env: Env, number: int, steps: list[int]) -> Callable[[], list[int]]:
    def read() -> list[int]:
        base = f"/api/repos/{env.world.app}/logs/{number}"
        return [len(_ok(env.http.get(f"{base}/{step}")).json() or []) for step in steps]

    return read


def delete_step_logs(env: Env) -> Target:
    number = env.world.pipelines["step_logs"]
    step = _steps(env, number)[-1]
    return Target(
        {"repo_id": env.world.app, "number": number, "step_id": step},
        _log_lines(env, number, [step]),
        lambda b: [0],
    )


def delete_pipeline_logs(env: Env) -> Target:
    number = env.world.pipelines["pipeline_logs"]
    steps = _steps(env, number)
    return Target(
        {"repo_id": env.world.app, "number": number}, _log_lines(env, number, steps), lambda b: [0] * len(b)
    )


# --- secrets and registries ----------------------------------------------------------------------------


def _secret(env: Env, name: str) -> Callable[[], Any]:
    def read() -> Any:
        status, found = _get(env.http, f"/api/repos/{env.world.app}/secrets/{name}")
        return status, found and (sorted(found["events"]), sorted(found.get("images") or []))

    return read


def _at_app(env: Env, **args: Any) -> dict[str, Any]:
    return {"scope": "repository", "repo_id": env.world.app, **args}


def _create_secret(env: Env, name: str, events: list[str]) -> Target:
    return Target(
        _at_app(env, name=name, value="fresh", events=events),
        _secret(env, name),
        lambda b: (200, (sorted(events), [])),
    )


def create_secret_for_pull_requests(env: Env) -> Target:
    return _create_secret(env, "pr_secret", ["push", "pull_request"])


def create_secret_shadowing_the_organization(env: Env) -> Target:
    return _create_secret(env, "org_shadow", ["push"])


def create_secret_for_pushes(env: Env) -> Target:
    return _create_secret(env, "plain_secret", ["push"])


def update_secret_adds_a_pull_request_event(env: Env) -> Target:
    return Target(
        _at_app(env, name="ev_secret", events=["push", "pull_request"]),
        _secret(env, "ev_secret"),
        lambda b: (200, (["pull_request", "push"], b[1][1])),
    )


def update_secret_adds_an_image(env: Env) -> Target:
    return Target(
        _at_app(env, name="img_secret", images=["alpine", "plugins/docker"]),
        _secret(env, "img_secret"),
        lambda b: (200, (b[1][0], ["alpine", "plugins/docker"])),
    )


def update_secret_narrows_events(env: Env) -> Target:
    return Target(
        _at_app(env, name="narrow_secret", events=["push"]),
        _secret(env, "narrow_secret"),
        lambda b: (200, (["push"], b[1][1])),
    )


def delete_secret(env: Env) -> Target:
    return Target(
        _at_app(env, name="doomed_secret"), lambda: _secret(env, "doomed_secret")()[0], lambda b: 404
    )


def delete_a_missing_secret(env: Env) -> Target:
    def read() -> Any:
        names = sorted(
            s["name"] for s in _ok(env.http.get(f"/api/repos/{env.world.app}/secrets")).json() or []
        )
        return _secret(env, "never_made")()[0], names

    return Target(_at_app(env, name="never_made"), read, _same)


def _registry(env: Env, address: str) -> Callable[[], Any]:
    def read() -> Any:
        status, found = _get(env.http, f"/api/repos/{env.world.app}/registries/{address}")
        with sqlite3.connect(env.real.db()) as db:
            # The password is never in an answer: read the server's own record of it.
            row = db.execute(
                "SELECT password FROM registries WHERE repo_id = ? AND address = ?", (env.world.app, address)
            ).fetchone()
        return status, (found or {}).get("username"), row and row[0]

    return read


def create_registry(env: Env) -> Target:
    return Target(
        _at_app(env, address="new.example.org", username="ci", password="fresh"),
        _registry(env, "new.example.org"),
        lambda b: (200, "ci", "fresh"),
    )


def update_registry_with_a_password(env: Env) -> Target:
    return Target(
        _at_app(env, address="rotate.example.org", username="u2", password="rotated"),
        _registry(env, "rotate.example.org"),
        lambda b: (200, "u2", "rotated"),
    )


def update_registry_username(env: Env) -> Target:
    return Target(
        _at_app(env, address="relabel.example.org", username="u3"),
        _registry(env, "relabel.example.org"),
        lambda b: (200, "u3", b[2]),
    )


def delete_registry(env: Env) -> Target:
    return Target(
        _at_app(env, address="doomed.example.org"),
        lambda: _registry(env, "doomed.example.org")()[0],
        lambda b: 404,
    )


# --- crons ---------------------------------------------------------------------------------------------


def _crons(env: Env) -> Callable[[], dict[str, str]]:
    def read() -> dict[str, str]:
        crons = _ok(env.http.get(f"/api/repos/{env.world.app}/cron")).json() or []
        return {c["name"]: c["branch"] for c in crons}

    return read


def _create_cron(env: Env, name: str, branch: str) -> Target:
    return Target(
        {"repo_id": env.world.app, "name": name, "schedule": YEARLY, "branch": branch},
        _crons(env),
        lambda b: {**b, name: branch},
    )


def create_cron_on_a_held_branch(env: Env) -> Target:
    return _create_cron(env, "new-held", "held")


def create_cron_on_a_clear_branch(env: Env) -> Target:
    return _create_cron(env, "new-main", "main")


def _cron(env: Env, name: str) -> Callable[[], Any]:
    def read() -> Any:
        status, found = _get(env.http, f"/api/repos/{env.world.app}/cron/{env.world.crons[name]}")
        return status, found and (found["name"], found["branch"], found["schedule"])

    return read


def update_cron_onto_a_held_branch(env: Env) -> Target:
    return Target(
        {"repo_id": env.world.app, "cron_id": env.world.crons["move-me"], "branch": "held"},
        _cron(env, "move-me"),
        lambda b: (200, ("move-me", "held", YEARLY)),
    )


def update_cron_schedule(env: Env) -> Target:
    return Target(
        {"repo_id": env.world.app, "cron_id": env.world.crons["rename-me"], "schedule": "0 4 1 1 *"},
        _cron(env, "rename-me"),
        lambda b: (200, ("rename-me", "main", "0 4 1 1 *")),
    )


def _run_cron(env: Env, name: str, branch: str) -> Target:
    # 3.11's pipelines do not name their cron (3.17's `cron`): each cron run here has a branch of its own.
    return Target(
        {"repo_id": env.world.app, "cron_id": env.world.crons[name]},
        _runs(env, lambda p: p["event"] == "cron" and p["branch"] == branch),
        lambda b: [*b, "cron"],
        _wait_all(env, env.world.app),
    )


def run_cron_on_a_held_branch(env: Env) -> Target:
    return _run_cron(env, "run-held", "held")


def run_cron_on_a_clear_branch(env: Env) -> Target:
    return _run_cron(env, "run-main", "main")


def delete_cron(env: Env) -> Target:
    return Target(
        {"repo_id": env.world.app, "cron_id": env.world.crons["doomed-cron"]},
        lambda: _cron(env, "doomed-cron")()[0],
        lambda b: 404,
    )


# --- organizations, users, agents, forges, the server ----------------------------------------------------


def _org_names(env: Env) -> list[str]:
    return sorted(o["name"] for o in _ok(env.http.get("/api/orgs", params={"perPage": 50})).json() or [])


def delete_organization(env: Env) -> Target:
    repo = env.world.repos["org_repo"]

    def read() -> Any:
        return _org_names(env), env.http.get(f"/api/repos/{repo['id']}").status_code

    # Woodpecker's orgDelete removes the organization's repositories with it.
    return Target(
        {"org_id": int(repo["org_id"])}, read, lambda b: ([n for n in b[0] if n != "doomed-org"], 404)
    )


def delete_a_missing_organization(env: Env) -> Target:
    return Target({"org_id": 999_999}, lambda: _org_names(env), _same)


def _user(env: Env, login: str) -> Callable[[], Any]:
    def read() -> Any:
        status, found = _get(env.http, f"/api/users/{login}")
        # An answer leaves out a false admin and an empty email (omitempty).
        return status, found and {
            "login": found["login"],
            "email": found.get("email", ""),
            "admin": found.get("admin", False),
        }

    return read


def create_user(env: Env) -> Target:
    return Target(
        {"login": "newcomer", "admin": True},
        _user(env, "newcomer"),
        lambda b: (200, {"login": "newcomer", "email": "", "admin": True}),
    )


def _forge_id(env: Env, login: str) -> int:
    return int(env.world.users[login].get("forge_id") or 1)


def update_user_grants_admin(env: Env) -> Target:
    # Woodpecker's PATCH overwrites the record: login and email must come back as they were.
    return Target(
        {"login": "promoted", "forge_id": _forge_id(env, "promoted"), "admin": True},
        _user(env, "promoted"),
        lambda b: (200, {**b[1], "admin": True}),
    )


def update_user_email(env: Env) -> Target:
    return Target(
        {"login": "remailed", "forge_id": _forge_id(env, "remailed"), "email": "new@example.org"},
        _user(env, "remailed"),
        lambda b: (200, {**b[1], "email": "new@example.org"}),
    )


def delete_user(env: Env) -> Target:
    return Target(
        {"login": "leaving", "forge_id": _forge_id(env, "leaving")},
        lambda: _user(env, "leaving")()[0],
        lambda b: 404,
    )


def _agents(env: Env) -> Callable[[], dict[str, bool]]:
    def read() -> dict[str, bool]:
        return {a["name"]: a["no_schedule"] for a in _ok(env.http.get("/api/agents")).json() or []}

    return read


def create_agent(env: Env) -> Target:
    return Target({"name": "fresh-agent"}, _agents(env), lambda b: {**b, "fresh-agent": False})


def update_agent_undrains(env: Env) -> Target:
    return Target(
        {"agent_id": env.world.agents["drained"], "no_schedule": False},
        _agents(env),
        lambda b: {**b, "drained": False},
    )


def update_agent_drains(env: Env) -> Target:
    return Target(
        {"agent_id": env.world.agents["to-drain"], "no_schedule": True},
        _agents(env),
        lambda b: {**b, "to-drain": True},
    )


def delete_agent(env: Env) -> Target:
    return Target(
        {"agent_id": env.world.agents["gone-agent"]},
        _agents(env),
        lambda b: {k: v for k, v in b.items() if k != "gone-agent"},
    )


def _forges(env: Env) -> Callable[[], dict[int, str]]:
    def read() -> dict[int, str]:
        return {int(f["id"]): f["url"] for f in _ok(env.http.get("/api/forges")).json() or []}

    return read


def create_forge(env: Env) -> Target:
    url = "https://new.forge.example.org"
    args = {"type": "gitea", "url": url, "client": "c", "oauth_client_secret": "s"}

    def expect(before: dict[int, str]) -> dict[int, str]:
        return {**before, max(before) + 1: url}

    return Target(args, _forges(env), expect)


def update_forge(env: Env) -> Target:
    forge = env.world.forges["update"]
    url = "https://moved.forge.example.org"
    return Target({"forge_id": forge, "url": url}, _forges(env), lambda b: {**b, forge: url})


def delete_forge(env: Env) -> Target:
    forge = env.world.forges["delete"]
    return Target({"forge_id": forge}, _forges(env), lambda b: {k: v for k, v in b.items() if k != forge})


def pause_queue(env: Env) -> Target:
    def resume() -> None:
        _ok(env.http.post("/api/queue/resume"), 200, 204)

    return Target({}, lambda: _ok(env.http.get("/api/queue/info")).json()["paused"], lambda b: True, resume)


def _log_level(env: Env, level: str) -> Target:
    def restore() -> None:
        _ok(env.http.post("/api/log-level", json={"log-level": "info"}))

    return Target(
        {"level": level},
        lambda: _ok(env.http.get("/api/log-level")).json()["log-level"],
        lambda b: level,
        restore,
    )


def set_log_level_silences(env: Env) -> Target:
    return _log_level(env, "fatal")


def set_log_level_debug(env: Env) -> Target:
    return _log_level(env, "debug")


CASES = (
    Case("activate-known", "activate_repository", activate_known_repository),
    Case("activate-new", "activate_repository", activate_new_repository, asks=False),
    Case("update-repo-lowers-approval", "update_repository", update_repository_lowers_approval),
    Case("update-repo-grants-trust", "update_repository", update_repository_grants_trust),
    Case("update-repo-raises-approval", "update_repository", update_repository_raises_approval, asks=False),
    Case("repair-instance", "repair_repository", repair_instance),
    Case("repair-one", "repair_repository", repair_one_repository, asks=False),
    Case("move", "move_repository", move_repository, unknown_on=frozenset({"3.11.0"})),
    Case("chown", "chown_repository", chown_repository),
    Case("delete-repo", "delete_repository", delete_repository),
    Case("trigger-held-branch", "trigger_pipeline", trigger_on_a_held_branch),
    Case("trigger-clear-branch", "trigger_pipeline", trigger_on_a_clear_branch, asks=False),
    Case("restart-declined", "restart_pipeline", restart_a_declined_pipeline),
    Case("restart-manual", "restart_pipeline", restart_a_manual_pipeline, asks=False),
    Case(
        "approve",
        "approve_pipeline",
        approve_pipeline,
        says=("From a fork: no (Woodpecker's from_fork)",),
        never_says=("From a fork: yes", "A fork is a repository"),
    ),
    Case(
        "approve-fork",
        "approve_pipeline",
        approve_a_forks_pipeline,
        says=("From a fork: yes (Woodpecker's from_fork)",),
    ),
    Case(
        "approve-not-blocked",
        "approve_pipeline",
        approve_a_finished_pipeline,
        asks=False,
        refused="not_blocked",
        outcomes=("nothing_to_decide",),
    ),
    Case("delete-pipeline", "delete_pipeline", delete_pipeline),
    Case("delete-step-logs", "delete_step_logs", delete_step_logs),
    Case("delete-pipeline-logs", "delete_pipeline_logs", delete_pipeline_logs),
    Case("create-secret-pull-request", "create_secret", create_secret_for_pull_requests),
    Case("create-secret-shadows-org", "create_secret", create_secret_shadowing_the_organization),
    Case("create-secret-push", "create_secret", create_secret_for_pushes, asks=False),
    Case("update-secret-adds-event", "update_secret", update_secret_adds_a_pull_request_event),
    Case("update-secret-adds-image", "update_secret", update_secret_adds_an_image),
    Case("update-secret-narrows", "update_secret", update_secret_narrows_events, asks=False),
    Case("delete-secret", "delete_secret", delete_secret),
    Case(
        "delete-missing-secret",
        "delete_secret",
        delete_a_missing_secret,
        asks=False,
        refused="not_found",
        outcomes=("nothing_to_decide",),
    ),
    Case("create-registry", "create_registry", create_registry),
    Case("update-registry-password", "update_registry", update_registry_with_a_password),
    Case("update-registry-username", "update_registry", update_registry_username, asks=False),
    Case("delete-registry", "delete_registry", delete_registry),
    Case("create-cron-held-branch", "create_cron", create_cron_on_a_held_branch),
    Case("create-cron-clear-branch", "create_cron", create_cron_on_a_clear_branch, asks=False),
    Case("update-cron-held-branch", "update_cron", update_cron_onto_a_held_branch),
    Case("update-cron-schedule", "update_cron", update_cron_schedule, asks=False),
    Case("run-cron-held-branch", "run_cron", run_cron_on_a_held_branch),
    Case("run-cron-clear-branch", "run_cron", run_cron_on_a_clear_branch, asks=False),
    Case("delete-cron", "delete_cron", delete_cron),
    Case("delete-org", "delete_organization", delete_organization),
    Case(
        "delete-missing-org",
        "delete_organization",
        delete_a_missing_organization,
        asks=False,
        refused="not_found",
    ),
    Case("create-user", "create_user", create_user),
    Case("update-user-admin", "update_user", update_user_grants_admin),
    Case("update-user-email", "update_user", update_user_email, asks=False),
    Case("delete-user", "delete_user", delete_user),
    Case("create-agent", "create_agent", create_agent),
    Case("update-agent-undrain", "update_agent", update_agent_undrains),
    Case("update-agent-drain", "update_agent", update_agent_drains, asks=False),
    Case("delete-agent", "delete_agent", delete_agent),
    Case("create-forge", "create_forge", create_forge),
    Case("update-forge", "update_forge", update_forge),
    Case("delete-forge", "delete_forge", delete_forge),
    Case("pause-queue", "pause_queue", pause_queue),
    Case("log-level-silences", "set_log_level", set_log_level_silences),
    Case("log-level-debug", "set_log_level", set_log_level_debug, asks=False),
)
