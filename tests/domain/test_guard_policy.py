"""The guard policy against an independent model of guard.md §1 and §1b: ask only in the widening direction."""

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.guard.policy import ALWAYS, NO_RULE, Decision, covers, decide, needs_current
from domain.tools import GuardRule, ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.reads import ABSENT
from domain.woodpecker.rules import WOODPECKER_RULES
from tests.domain._guard_strategies import GUARDED, tool_and_arguments

# Written out by hand from the seed, not derived from the catalogue or the rules under test.
ALWAYS_ASKS = frozenset(
    {
        "delete_repository",
        "delete_pipeline",
        "delete_step_logs",
        "delete_pipeline_logs",
        "delete_secret",
        "delete_registry",
        "delete_cron",
        "delete_organization",
        "delete_user",
        "delete_agent",
        "delete_forge",
        "move_repository",
        "chown_repository",
        "update_forge",
        "pause_queue",
        "approve_pipeline",
        # guard.md §1b
        "create_user",
        "create_agent",
        "create_forge",
    }
)
STRICTNESS = {"none": 0, "forks": 1, "pull_requests": 2, "all_events": 3}
PR_EVENTS = {"pull_request", "pull_request_closed", "pull_request_metadata"}
OPENNESS = {"private": 0, "internal": 1, "public": 2}


def model_needs_approval(repo: Mapping[str, Any], pipeline: Mapping[str, Any]) -> bool:
    """Woodpecker 3.17's needsApproval as guard.md §1b states it; unknown modes are the strictest."""
    if pipeline.get("event") in ("cron", "manual"):
        return False
    if pipeline.get("author") in (repo.get("approval_allowed_users") or []):
        return False
    pull = pipeline.get("event") in PR_EVENTS
    mode = repo.get("require_approval")
    if mode == "none":
        return False
    if mode == "forks":
        return pull and bool(pipeline.get("from_fork"))
    if mode == "pull_requests":
        return pull
    return True


STARTS = ("trigger_pipeline", "create_cron", "update_cron", "run_cron")
PAGE = 50


def model_start_branch(args: Mapping[str, Any], current: Mapping[str, Any] | None) -> str | None:
    """The branch a start runs, as Woodpecker picks it: the call's, else its cron's, else the default."""
    repo = None if current is None else current.get("repo")
    if not isinstance(repo, dict) or repo.get("id") not in (None, args["repo_id"]):
        return None
    branch = args.get("branch")
    if not branch and "cron_id" in args:
        cron = None if current is None else current.get("cron")
        if not isinstance(cron, dict) or cron.get("id") not in (None, args["cron_id"]):
            return None
        branch = cron.get("branch")
        if not isinstance(branch, str):
            return None
    if not branch:
        branch = repo.get("default_branch")
    return branch if isinstance(branch, str) and branch else None


def model_branch_asks(args: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """guard.md §1c, plainly: the branch the start runs has a blocked or declined pipeline, or one that
    needs approval now with no review; anything not read, or a full page with nothing found, asks. And
    ADR 0043's two review rules: a repository holding every event (all_events, or a mode not known)
    always asks, and so does a branch the forge's list of names (pages of 50, ten at most) lacks."""
    branch = model_start_branch(args, current)
    if branch is None or current is None:
        return True
    repo = current["repo"]
    if repo.get("require_approval") not in ("none", "forks", "pull_requests"):
        return True
    pages = [current.get(f"branches_{n}") for n in range(1, 11)]
    for page in pages:
        if not isinstance(page, list) or not all(isinstance(name, str) for name in page):
            return True
        if branch in page:
            break
        if len(page) < PAGE:
            return True
    else:
        return True
    for status in ("blocked", "declined"):
        listed = current.get(status)
        if not isinstance(listed, list):
            return True
        if any(p.get("branch") != branch or p.get("status") != status for p in listed):
            return True
        if listed:
            return True
    # ADR 0091: the repository's pull requests into any branch count when their refspec's head is this one.
    for status in ("blocked", "declined"):
        from_here = model_from_branch(current.get(f"pr_{status}"), branch, status)
        if from_here is None or from_here:
            return True
    if repo.get("require_approval") == "none":
        return False
    listed = current.get("unreviewed")
    if not isinstance(listed, list) or any(p.get("branch") != branch for p in listed):
        return True
    if any(model_needs_approval(repo, p) and not p.get("reviewed_by") for p in listed):
        return True
    if len(listed) >= PAGE:
        return True
    from_here = model_from_branch(current.get("pr_unreviewed"), branch, None)
    return from_here is None or any(
        model_needs_approval(repo, p) and not p.get("reviewed_by") for p in from_here
    )


def model_from_branch(listed: Any, branch: str, status: str | None) -> list[dict[str, Any]] | None:
    """The pull-request pipelines of a page whose refspec head is `branch`; None when the page cannot
    tell (not a list, another event or status, a refspec without one head, a full page without one)."""
    if not isinstance(listed, list) or not all(isinstance(p, dict) for p in listed):
        return None
    found = []
    for p in listed:
        refspec = p.get("refspec")
        if p.get("event") not in ("pull_request", "pull_request_closed", "pull_request_metadata"):
            return None
        if (status is not None and p.get("status") != status) or not isinstance(refspec, str):
            return None
        if refspec.count(":") != 1 or not refspec.split(":")[0]:
            return None
        if refspec.split(":")[0] == branch:
            found.append(p)
    return None if not found and len(listed) >= PAGE else found


def model_asks(tool: str, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """A deliberately plain restatement of guard.md §1. `current` None means nothing was read; a read
    that answered another object (another secret's name) counts as nothing read."""
    repo_read: Any = None
    if tool == "update_secret":
        # Read as {"secret": ..., "repo": ...}; the repository only for manual or cron on a repository secret.
        repo_read = None if current is None else current.get("repo")
        current = None if current is None else current.get("secret")
        if not isinstance(current, dict) or current.get("name") not in (None, args.get("name")):
            current = None
    if tool in ALWAYS_ASKS:
        return True
    if tool == "repair_repository":
        return args.get("scope") == "instance"
    if tool == "update_user":
        return args.get("admin") is True
    if tool == "create_secret":
        # guard.md §1c: also when a wider level may hold that name; only a clear 404 (ABSENT) says not.
        wider = {"repository": ["organization", "global"], "organization": ["global"]}.get(args["scope"], [])
        shadows = any(current is None or current.get(level) is not ABSENT for level in wider)
        return bool(set(args["events"]) & PR_EVENTS) or shadows
    if tool == "create_registry":
        return True  # its password is required, and a password asks
    if tool == "update_agent":
        # guard.md §1c: no_schedule turning false on an agent that is drained, or not read as undrained.
        if args.get("no_schedule") is not False:
            return False
        agent = None if current is None else current.get("agent")
        undrained = (
            isinstance(agent, dict)
            and agent.get("no_schedule") is False
            and agent.get("id") in (None, args["agent_id"])
        )
        return not undrained
    if tool == "restart_pipeline":
        if args.get("event") == "deployment":
            return True
        if current is None:
            return True
        pipeline, repo = current.get("pipeline"), current.get("repo")
        if not isinstance(pipeline, dict) or not isinstance(repo, dict):
            return True
        if pipeline.get("status") == "declined":
            return True
        return model_needs_approval(repo, pipeline) and not pipeline.get("reviewed_by")
    if tool == "activate_repository":
        listed = None if current is None else current.get("repos")
        if not isinstance(listed, list):
            return True
        mine = [r for r in listed if r.get("forge_remote_id") == args["forge_remote_id"]]
        if not mine or any(r.get("id") and r.get("active") is not True for r in mine):
            return True
        if all(r.get("id") for r in mine):
            return False
        # An entry without an id: the list shows only records the caller has a permission row on, so
        # only the lookup by name answering 404, or naming this repository active, says it cannot reactivate.
        record = current.get("record", "unread") if current is not None else "unread"
        if record is ABSENT:
            return False
        return not (
            isinstance(record, dict)
            and record.get("forge_remote_id") == args["forge_remote_id"]
            and record.get("active") is True
        )
    if tool == "update_registry":
        return "password" in args
    if tool == "set_log_level":
        return args.get("level") in ("fatal", "panic", "disabled")
    if tool == "update_repository":
        if any(args.get(flag) is True for flag in ("trusted_network", "trusted_volumes", "trusted_security")):
            return True
        if "require_approval" in args:
            stored = (current or {}).get("require_approval")
            stored_level = STRICTNESS.get(stored, 3) if isinstance(stored, str) else 3
            if STRICTNESS[args["require_approval"]] < stored_level:
                return True
        if "visibility" in args:
            stored = OPENNESS.get((current or {}).get("visibility"), 0)
            if OPENNESS[args["visibility"]] > stored:
                return True
        if args.get("allow_deploy") is True and (current or {}).get("allow_deploy") is not True:
            return True
        if args.get("allow_pr") is True and (current or {}).get("allow_pr") is not True:
            if "require_approval" in args:
                after = args["require_approval"]
            elif current is None:
                after = "none"
            else:
                after = current.get("require_approval")
            if after == "none":
                return True
        return False
    if tool in STARTS:
        if args.get("variables"):
            return True
        if tool == "update_cron" and "branch" not in args:
            if args.get("enabled") is not True:
                return False
            cron = None if current is None else current.get("cron")
            if (
                isinstance(cron, dict)
                and cron.get("id") in (None, args["cron_id"])
                and cron.get("enabled") is True
            ):
                return False  # enabled already: re-enabling starts nothing new
        return model_branch_asks(args, current)
    if tool == "update_secret":
        if "value" in args:
            return True
        if "events" in args:
            had = set() if current is None else set(current.get("events") or [])
            if (set(args["events"]) & PR_EVENTS) - had:
                return True
            # guard.md §1c: manual or cron added where approval is required (unread counts as required).
            if (set(args["events"]) & {"manual", "cron"}) - had:
                if args["scope"] != "repository" or not isinstance(repo_read, dict):
                    return True
                if repo_read.get("id") not in (None, args.get("repo_id")):
                    return True
                if repo_read.get("require_approval") != "none":
                    return True
        if args.get("images") == []:
            if current is None or current.get("images"):
                return True
        if args.get("images"):
            # [beyond] an image added to a secret limited to images: it reaches one more image.
            if current is None:
                return True
            stored = current.get("images")
            if stored and set(args["images"]) - set(stored):
                return True
        return False
    return False


REPO_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "require_approval": st.sampled_from([*STRICTNESS, "", "ALL_EVENTS", "future_mode"]) | st.none(),
        "visibility": st.sampled_from(["public", "private", "internal", "", "Public"]) | st.none(),
        "allow_deploy": st.booleans() | st.none(),
        "allow_pr": st.booleans() | st.none(),
        "trusted": st.fixed_dictionaries(
            {"network": st.booleans(), "volumes": st.booleans(), "security": st.booleans()}
        ),
        "name": st.text(max_size=20),
    },
)
EVENTS = st.lists(
    st.sampled_from(["push", "tag", "release", "deployment", "cron", "manual", *sorted(PR_EVENTS)]),
    unique=True,
)
SECRET = st.fixed_dictionaries(
    {},
    optional={
        "events": EVENTS | st.none(),
        "images": st.lists(st.text(min_size=1, max_size=10), max_size=3) | st.none(),
        "name": st.text(max_size=20),
    },
)
SECRETS_REPO = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from([1, 4, 9]),
        "require_approval": st.sampled_from([*STRICTNESS, "", "future_mode"]) | st.none(),
    },
)
SECRET_CURRENT = st.none() | st.fixed_dictionaries({}, optional={"secret": SECRET, "repo": SECRETS_REPO})


PIPELINE = st.fixed_dictionaries(
    {},
    optional={
        "status": st.sampled_from(
            ["success", "failure", "killed", "canceled", "declined", "error", "pending"]
        ),
        "event": st.sampled_from(
            ["push", "tag", "cron", "manual", "deployment", "release", *sorted(PR_EVENTS)]
        ),
        "author": st.sampled_from(["bob", "mallory", "", "renovate"]),
        "from_fork": st.booleans(),
        "reviewed_by": st.sampled_from(["", "ada"]),
        "title": st.text(max_size=20),
    },
)
APPROVAL_REPO = st.fixed_dictionaries(
    {},
    optional={
        "require_approval": st.sampled_from([*STRICTNESS, "", "future_mode"]),
        "approval_allowed_users": st.lists(st.sampled_from(["bob", "mallory", "renovate"]), unique=True),
    },
)
RESTART_CURRENT = st.none() | st.fixed_dictionaries({"pipeline": PIPELINE, "repo": APPROVAL_REPO})
LISTED = st.fixed_dictionaries(
    {"forge_remote_id": st.sampled_from(["1005", "1007", "x", "{uuid}"])},
    optional={"id": st.sampled_from([0, 5, 9]), "active": st.booleans(), "full_name": st.text(max_size=10)},
)
# What the lookup by the listed name answered: ABSENT for a 404, a record (this repository's or the one
# holding its name), or anything a hostile server sends; left out when unread.
LOOKED_UP = st.sampled_from([ABSENT, None, "ABSENT", [], 0]) | st.fixed_dictionaries(
    {}, optional={"forge_remote_id": st.sampled_from(["1005", "1007", "x"]), "active": st.booleans()}
)
ACTIVATE_CURRENT = st.none() | st.fixed_dictionaries(
    {"repos": st.lists(LISTED, max_size=4)}, optional={"record": LOOKED_UP}
)

BRANCHES = st.sampled_from(["main", "dev", "develop", "feature/x"])
LISTED_PIPELINE = st.fixed_dictionaries(
    {"branch": BRANCHES},
    optional={
        "status": st.sampled_from(["success", "failure", "killed", "blocked", "declined", "pending"]),
        "event": st.sampled_from(["push", "tag", "cron", "manual", "deployment", *sorted(PR_EVENTS)]),
        "author": st.sampled_from(["bob", "mallory"]),
        "from_fork": st.booleans(),
        "reviewed_by": st.sampled_from(["", "ada"]),
    },
)
PAGE_OF = st.lists(LISTED_PIPELINE, max_size=3) | LISTED_PIPELINE.map(lambda p: [p] * PAGE)
START_REPO = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from([1, 3]),
        "default_branch": BRANCHES | st.just(""),
        "require_approval": st.sampled_from([*STRICTNESS, "", "future_mode"]),
        "approval_allowed_users": st.lists(st.sampled_from(["bob", "mallory"]), unique=True),
    },
)
START_CRON = st.fixed_dictionaries(
    {}, optional={"id": st.sampled_from([1, 4]), "branch": BRANCHES | st.just(""), "enabled": st.booleans()}
)
START_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "cron": START_CRON,
        "repo": START_REPO,
        "blocked": PAGE_OF,
        "declined": PAGE_OF,
        "unreviewed": PAGE_OF,
    },
)


# What the probes of a repository's or organization's new secret answered (domain/woodpecker/reads.py):
# ABSENT for a 404, the stored secret (or anything a hostile server sends), or left out for a failed read.
PROBED = st.sampled_from([ABSENT, None, "ABSENT", {}, {"name": "npm_token"}, [], 0])
SHADOW_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "repo": st.fixed_dictionaries({"id": st.sampled_from([1, 2]), "org_id": st.just(4)}),
        "organization": PROBED,
        "global": PROBED,
    },
)
AGENT_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "agent": st.none()
        | st.text(max_size=3)
        | st.fixed_dictionaries(
            {},
            optional={
                "id": st.sampled_from([1, 3, 9]),
                "no_schedule": st.booleans() | st.none() | st.sampled_from(["false", 0, "true"]),
            },
        )
    },
)
OTHER_CURRENT = st.none() | st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)


def branch_pages(branch: str | None) -> st.SearchStrategy[dict[str, Any]]:
    """The forge's list of branch names as the guard reads it ("branches_1", ... pages of 50): none
    read, a page that is not a list of names, or pages that hold the start's branch on the first or a
    later page, or not at all."""
    others = st.lists(BRANCHES, max_size=3)
    name = st.just(branch) if branch else BRANCHES
    holding = st.tuples(others, name).map(lambda t: {"branches_1": [*t[0], t[1]]})
    later = name.map(lambda b: {"branches_1": [f"b{i}" for i in range(PAGE)], "branches_2": [b]})
    lacking = others.map(lambda names: {"branches_1": [n for n in names if n != branch]})
    full_then_missing = st.just({"branches_1": [f"b{i}" for i in range(PAGE)]})
    odd = st.sampled_from([{}, {"branches_1": None}, {"branches_1": "main"}, {"branches_1": [1, 2]}])
    return holding | later | lacking | full_then_missing | odd


def pipeline_pages(branch: str | None) -> st.SearchStrategy[dict[str, Any]]:
    """Pages of the start's own branch (the drawn ones name the branches above, so rarely this one):
    each of "blocked", "declined" and "unreviewed" left as drawn, empty, or pipelines of that branch."""
    if not branch:
        return st.just({})

    def on_branch(status: str | None) -> st.SearchStrategy[list[dict[str, Any]]]:
        pipeline = LISTED_PIPELINE.map(
            lambda p: {**p, "branch": branch, **({"status": status} if status else {})}
        )
        return st.just([]) | st.lists(pipeline, min_size=1, max_size=2) | pipeline.map(lambda p: [p] * PAGE)

    def pull_requests(status: str | None) -> st.SearchStrategy[list[dict[str, Any]]]:
        # Into any branch: from this one, from another, or with a refspec that names no head.
        source = st.sampled_from([branch, "elsewhere", None])
        pipeline = st.tuples(LISTED_PIPELINE, source).map(
            lambda pair: {
                **pair[0],
                "branch": "main",
                "event": "pull_request",
                **({"status": status} if status else {}),
                "refspec": f"{pair[1]}:main" if pair[1] is not None else "main",
            }
        )
        return st.just([]) | st.lists(pipeline, min_size=1, max_size=2) | pipeline.map(lambda p: [p] * PAGE)

    return st.fixed_dictionaries(
        {},
        optional={
            "blocked": on_branch("blocked"),
            "declined": on_branch("declined"),
            "unreviewed": on_branch(None),
            "pr_blocked": pull_requests("blocked"),
            "pr_declined": pull_requests("declined"),
            "pr_unreviewed": pull_requests(None),
        },
    )


def current_for(tool: ToolSpec) -> st.SearchStrategy[Mapping[str, Any] | None]:
    if tool.name == "restart_pipeline":
        return RESTART_CURRENT
    if tool.name == "activate_repository":
        return ACTIVATE_CURRENT
    if tool.name == "update_repository":
        return REPO_CURRENT
    if tool.name == "update_secret":
        return SECRET_CURRENT
    if tool.name == "create_secret":
        return SHADOW_CURRENT
    if tool.name == "update_agent":
        return AGENT_CURRENT
    if tool.name in STARTS:
        return START_CURRENT
    return OTHER_CURRENT


def arguments_of(tool: ToolSpec) -> st.SearchStrategy[dict[str, Any]]:
    return tool_and_arguments((tool,)).map(lambda ta: ta[1])


# Each tool's strategies built once, not in every draw (see tests/domain/_guard_strategies.py).
_CALL_OF = {t.name: st.tuples(st.just(t), arguments_of(t), current_for(t)) for t in GUARDED}
CALLS = st.sampled_from(GUARDED).flatmap(lambda t: _CALL_OF[t.name])
_ARGUMENTS_OF = {t.name: arguments_of(t) for t in GUARDED}
CONDITIONAL = [t for t in GUARDED if t.guard is not None and not t.guard.always]


@pytest.mark.parametrize("tool", CONDITIONAL, ids=lambda t: t.name)
@settings(max_examples=60)
@given(data=st.data())
def test_a_conditional_tool_asks_exactly_when_the_model_of_the_seed_says_it_widens(
    tool: ToolSpec, data: st.DataObject
) -> None:
    args = data.draw(_ARGUMENTS_OF[tool.name], label="args")
    current = data.draw(current_for(tool), label="current")
    if tool.name in STARTS and current is not None:
        branch = model_start_branch(args, current)
        current = {**current, **data.draw(branch_pages(branch), label="branches")}
        current = {**current, **data.draw(pipeline_pages(branch), label="pipelines")}
    decision = decide(tool, args, current, WOODPECKER_RULES)
    assert decision.ask == model_asks(tool.name, args, current)
    assert decision.ask == bool(decision.reasons)


_START_TOOLS = tuple(t for t in GUARDED if t.name in STARTS)


@given(data=st.data())
def test_a_start_on_a_branch_read_clean_asks_exactly_when_the_model_says(data: st.DataObject) -> None:
    """The conditional test above rarely draws a branch every page of which reads clean, where only the
    approval mode and the forge's list of names can still ask; here each start is drawn from that state."""
    tool = data.draw(st.sampled_from(_START_TOOLS), label="tool")
    args = {**data.draw(_ARGUMENTS_OF[tool.name], label="args"), "branch": "main"}
    args.pop("variables", None)
    repo = {
        "id": args["repo_id"],
        "require_approval": data.draw(START_REPO, label="repo").get("require_approval"),
    }
    current: dict[str, Any] = {"repo": repo, "cron": {"id": args.get("cron_id"), "branch": "main"}}
    current |= {
        "blocked": [],
        "declined": [],
        "unreviewed": data.draw(
            st.sampled_from([[], [{"branch": "main", "status": "success", "reviewed_by": "ada"}]])
        ),
    }
    current |= data.draw(branch_pages("main"), label="branches")
    decision = decide(tool, args, current, WOODPECKER_RULES)
    assert decision.ask == model_asks(tool.name, args, current)


@given(tool_and_arguments(tuple(t for t in WOODPECKER_TOOLS if not t.guarded)))
def test_an_unguarded_tool_never_asks(tool_args: tuple[ToolSpec, dict[str, Any]]) -> None:
    tool, args = tool_args
    assert decide(tool, args, None, WOODPECKER_RULES) == Decision(ask=False, reasons=frozenset())


@given(tool_and_arguments(tuple(t for t in GUARDED if t.name in ALWAYS_ASKS)))
def test_an_always_guarded_tool_asks_with_the_reason_always(
    tool_args: tuple[ToolSpec, dict[str, Any]],
) -> None:
    tool, args = tool_args
    assert decide(tool, args, None, WOODPECKER_RULES) == Decision(ask=True, reasons=frozenset({ALWAYS}))


def test_thirty_four_tools_are_guarded_of_which_nineteen_always_ask() -> None:
    assert len(GUARDED) == 34
    assert {t.name for t in GUARDED if t.guard is not None and t.guard.always} == ALWAYS_ASKS
    assert {t.guard.when for t in GUARDED if t.guard is not None and not t.guard.always} == set(
        WOODPECKER_RULES
    )


@given(CALLS)
def test_the_stored_object_is_needed_only_when_a_comparing_field_is_present(
    call: tuple[ToolSpec, dict[str, Any], Mapping[str, Any] | None],
) -> None:
    tool, args, _ = call
    expected = (
        (
            tool.name == "update_repository"
            and (
                bool({"require_approval", "visibility"} & set(args))
                or args.get("allow_deploy") is True
                or args.get("allow_pr") is True
            )
        )
        or (tool.name == "update_secret" and bool({"events", "images"} & set(args)))
        or (tool.name == "restart_pipeline" and args.get("event") != "deployment")
        or tool.name == "activate_repository"
        or (tool.name == "create_secret" and args["scope"] != "global")
        or (tool.name == "update_agent" and args.get("no_schedule") is False)
        or tool.name in ("trigger_pipeline", "create_cron", "run_cron")
        or (tool.name == "update_cron" and ("branch" in args or args.get("enabled") is True))
    )
    assert needs_current(tool, args, WOODPECKER_RULES) == expected


@given(CALLS)
def test_a_call_that_needs_no_read_decides_the_same_whatever_the_stored_object(
    call: tuple[ToolSpec, dict[str, Any], Mapping[str, Any] | None],
) -> None:
    tool, args, current = call
    if not needs_current(tool, args, WOODPECKER_RULES):
        assert decide(tool, args, current, WOODPECKER_RULES) == decide(tool, args, None, WOODPECKER_RULES)


UPDATE_REPOSITORY = WOODPECKER_TOOLS.get("update_repository")
UPDATE_SECRET = WOODPECKER_TOOLS.get("update_secret")


def _read(secret: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """update_secret's reads as the guard gets them: the stored secret under "secret"."""
    return None if secret is None else {"secret": secret}


def test_withdrawing_trust_and_tightening_apply_without_a_question() -> None:
    args = {"repo_id": 4, "trusted_network": False, "require_approval": "all_events", "visibility": "private"}
    current = {"require_approval": "forks", "visibility": "public"}
    assert not decide(UPDATE_REPOSITORY, args, current, WOODPECKER_RULES).ask


@pytest.mark.parametrize("stored", [*STRICTNESS, "something_newer", None])
@pytest.mark.parametrize("wanted", list(STRICTNESS))
def test_require_approval_asks_only_when_it_goes_below_the_stored_value(
    wanted: str, stored: str | None
) -> None:
    current = {} if stored is None else {"require_approval": stored}
    decision = decide(
        UPDATE_REPOSITORY, {"repo_id": 4, "require_approval": wanted}, current, WOODPECKER_RULES
    )
    assert decision.ask == (STRICTNESS[wanted] < STRICTNESS.get(stored or "", 3))


@pytest.mark.parametrize("stored", ["public", "private", "internal", None])
@pytest.mark.parametrize("wanted", ["public", "private", "internal"])
def test_visibility_asks_only_when_it_rises(wanted: str, stored: str | None) -> None:
    current = {} if stored is None else {"visibility": stored}
    decision = decide(UPDATE_REPOSITORY, {"repo_id": 4, "visibility": wanted}, current, WOODPECKER_RULES)
    assert decision.ask == (OPENNESS[wanted] > OPENNESS.get(stored or "", 0))


@pytest.mark.parametrize(
    ("args", "stored", "asks"),
    [
        ({"allow_deploy": True}, {"allow_deploy": False}, True),
        ({"allow_deploy": True}, {"allow_deploy": True}, False),
        ({"allow_deploy": False}, {"allow_deploy": True}, False),
        ({"allow_pr": True}, {"allow_pr": False, "require_approval": "none"}, True),
        ({"allow_pr": True}, {"allow_pr": False, "require_approval": "forks"}, False),
        (
            {"allow_pr": True, "require_approval": "none"},
            {"allow_pr": False, "require_approval": "none"},
            True,
        ),
        (
            {"allow_pr": True, "require_approval": "forks"},
            {"allow_pr": False, "require_approval": "none"},
            False,
        ),
        ({"allow_pr": True}, {"allow_pr": True, "require_approval": "none"}, False),
        ({"allow_pr": False}, {"allow_pr": True, "require_approval": "none"}, False),
    ],
)
def test_deployments_and_unapproved_pull_requests_ask_only_when_turned_on(
    args: dict[str, Any], stored: dict[str, Any], asks: bool
) -> None:
    assert decide(UPDATE_REPOSITORY, {"repo_id": 4, **args}, stored, WOODPECKER_RULES).ask is asks


RESTART = WOODPECKER_TOOLS.get("restart_pipeline")


@pytest.mark.parametrize(
    ("pipeline", "repo", "reasons"),
    [
        (
            {"status": "declined", "event": "pull_request", "from_fork": True, "reviewed_by": "ada"},
            {},
            {"restarts_declined", "from_fork"},  # where it asks, the question also says the fork
        ),
        (
            {"status": "killed", "event": "pull_request", "from_fork": True, "reviewed_by": ""},
            {"require_approval": "forks"},
            {"restarts_unapproved", "from_fork"},
        ),
        (
            {"status": "killed", "event": "pull_request", "from_fork": True, "reviewed_by": "ada"},
            {"require_approval": "forks"},
            set(),
        ),
        ({"status": "success", "event": "push", "reviewed_by": ""}, {"require_approval": "forks"}, set()),
        (
            {"status": "success", "event": "push", "reviewed_by": ""},
            {"require_approval": "all_events"},
            {"restarts_unapproved"},
        ),
        (
            {"status": "success", "event": "cron", "reviewed_by": ""},
            {"require_approval": "all_events"},
            set(),
        ),
        (
            {"status": "failure", "event": "pull_request", "author": "bob", "reviewed_by": ""},
            {"require_approval": "pull_requests", "approval_allowed_users": ["bob"]},
            set(),
        ),
        (
            {"status": "failure", "event": "pull_request_metadata", "reviewed_by": ""},
            {"require_approval": "pull_requests"},
            {"restarts_unapproved"},
        ),
        (
            {"status": "failure", "event": "push", "reviewed_by": ""},
            {"require_approval": "something_newer"},
            {"restarts_unapproved"},
        ),
    ],
)
def test_a_restart_asks_when_it_would_go_around_an_approval(
    pipeline: dict[str, Any], repo: dict[str, Any], reasons: set[str]
) -> None:
    current = {"pipeline": pipeline, "repo": repo}
    assert decide(RESTART, {"repo_id": 1, "number": 7}, current, WOODPECKER_RULES).reasons == reasons


# A real Woodpecker 3.17 (docs/adr/0057): decline sets reviewed_by to the decliner, and a restart copies
# reviewed_by from the pipeline it re-runs and is never held itself. The review on record for a re-run is
# the one made on the first pipeline of its chain of parents: an approval only when that one was approved.
_DECLINED_ROOT = {"number": 6, "parent": 0, "status": "declined", "event": "push", "reviewed_by": "root"}
_APPROVED_ROOT = {"number": 7, "parent": 0, "status": "success", "event": "push", "reviewed_by": "root"}


@pytest.mark.parametrize(
    ("pipeline", "origins", "repo", "reasons"),
    [
        (  # the re-run of a declined push, restarted again: the decline is no approval
            {"number": 8, "parent": 6, "status": "success", "event": "push", "reviewed_by": "root"},
            {"origin_1": _DECLINED_ROOT},
            {"require_approval": "all_events"},
            {"restarts_declined", "restarts_unapproved"},
        ),
        (  # the same under settings that no longer hold pushes: the code was still refused
            {"number": 8, "parent": 6, "status": "success", "event": "push", "reviewed_by": "root"},
            {"origin_1": _DECLINED_ROOT},
            {"require_approval": "forks"},
            {"restarts_declined"},
        ),
        (  # two re-runs deep, back to the decline
            {"number": 9, "parent": 8, "status": "failure", "event": "push", "reviewed_by": "root"},
            {
                "origin_1": {
                    "number": 8,
                    "parent": 6,
                    "status": "success",
                    "event": "push",
                    "reviewed_by": "root",
                },
                "origin_2": _DECLINED_ROOT,
            },
            {"require_approval": "all_events"},
            {"restarts_declined", "restarts_unapproved"},
        ),
        (  # the re-run of an approved push: the approval holds
            {"number": 8, "parent": 7, "status": "failure", "event": "push", "reviewed_by": "root"},
            {"origin_1": _APPROVED_ROOT},
            {"require_approval": "all_events"},
            set(),
        ),
        (  # the pipeline it re-ran is gone (404) or was not read: which review it had is unknown
            {"number": 8, "parent": 7, "status": "failure", "event": "push", "reviewed_by": "root"},
            {"origin_1": ABSENT},
            {"require_approval": "forks"},
            {"restarts_untraced"},
        ),
        (
            {"number": 8, "parent": 7, "status": "failure", "event": "push", "reviewed_by": "root"},
            {},
            {"require_approval": "all_events"},
            {"restarts_untraced", "restarts_unapproved"},
        ),
        (  # an answer for another pipeline than the parent counts as unread
            {"number": 8, "parent": 7, "status": "failure", "event": "push", "reviewed_by": "root"},
            {"origin_1": {**_APPROVED_ROOT, "number": 5}},
            {"require_approval": "all_events"},
            {"restarts_untraced", "restarts_unapproved"},
        ),
    ],
)
def test_a_restart_judges_the_review_made_on_the_first_run_of_its_chain(
    pipeline: dict[str, Any], origins: dict[str, Any], repo: dict[str, Any], reasons: set[str]
) -> None:
    current = {"pipeline": pipeline, "repo": repo, **origins}
    args = {"repo_id": 1, "number": pipeline["number"]}
    assert decide(RESTART, args, current, WOODPECKER_RULES).reasons == reasons


def test_a_restart_as_a_deployment_asks_without_reading() -> None:
    args = {"repo_id": 1, "number": 1, "event": "deployment"}
    assert not needs_current(RESTART, args, WOODPECKER_RULES)
    assert decide(RESTART, args, None, WOODPECKER_RULES).reasons == {"restarts_as_deployment"}


@pytest.mark.parametrize(
    ("stored", "asks"),
    [(["alpine"], True), ([], False), (None, False), ("missing", False), ("unread", True)],
)
def test_emptying_images_asks_only_when_the_secret_has_images_now(stored: object, asks: bool) -> None:
    current = None if stored == "unread" else {} if stored == "missing" else {"images": stored}
    args = {"scope": "repository", "repo_id": 1, "name": "K", "images": []}
    assert decide(UPDATE_SECRET, args, _read(current), WOODPECKER_RULES).ask is asks


@pytest.mark.parametrize(
    ("stored", "wanted", "asks"),
    [
        (["push"], ["push", "pull_request"], True),
        (["push", "pull_request"], ["pull_request"], False),
        (["pull_request"], ["pull_request_closed"], True),
        (None, ["pull_request_metadata"], True),
        (["push"], ["push", "tag"], False),
    ],
)
def test_events_ask_only_when_a_pull_request_event_is_added(
    stored: object, wanted: list[str], asks: bool
) -> None:
    args = {"scope": "global", "name": "K", "events": wanted}
    assert decide(UPDATE_SECRET, args, _read({"events": stored}), WOODPECKER_RULES).ask is asks


def test_lowering_require_approval_below_an_unknown_stored_value_asks() -> None:
    decision = decide(
        UPDATE_REPOSITORY,
        {"repo_id": 4, "require_approval": "pull_requests"},
        {"require_approval": "x"},
        WOODPECKER_RULES,
    )
    assert decision.reasons == {"lowers_require_approval"}


@pytest.mark.parametrize(
    ("stored", "wanted", "asks"),
    [
        (["alpine"], ["alpine", "evil/exfil:latest"], True),
        (["alpine"], ["plugins/docker"], True),
        (["alpine", "plugins/docker"], ["alpine"], False),
        (["alpine"], ["alpine"], False),
        ([], ["alpine"], False),
        (None, ["alpine"], False),
        ("missing", ["alpine"], False),
        ("unread", ["alpine"], True),
        ("x", ["alpine"], True),
    ],
)
def test_adding_an_image_asks_only_when_the_secret_is_limited_to_others(
    stored: object, wanted: list[str], asks: bool
) -> None:
    current = None if stored == "unread" else {} if stored == "missing" else {"images": stored}
    args = {"scope": "repository", "repo_id": 1, "name": "K", "images": wanted}
    decision = decide(UPDATE_SECRET, args, _read(current), WOODPECKER_RULES)
    assert decision.ask is asks
    assert decision.reasons == ({"adds_image"} if asks else set())


def test_a_comparison_that_could_not_read_the_stored_object_asks() -> None:
    assert decide(
        UPDATE_REPOSITORY, {"repo_id": 4, "visibility": "public"}, None, WOODPECKER_RULES
    ).reasons == {"sets_public"}
    assert decide(
        UPDATE_SECRET, {"scope": "global", "name": "K", "images": []}, None, WOODPECKER_RULES
    ).reasons == {"empties_images"}


def test_narrowing_secret_events_applies_without_a_question() -> None:
    current = {"events": ["push", "pull_request"], "images": ["alpine"]}
    args = {"scope": "repository", "repo_id": 1, "name": "K", "events": ["push"], "note": "narrowed"}
    assert not decide(UPDATE_SECRET, args, _read(current), WOODPECKER_RULES).ask


def test_a_malformed_value_fails_closed() -> None:
    admin = WOODPECKER_TOOLS.get("update_user")
    assert decide(admin, {"login": "a", "forge_id": 1, "admin": "yes"}, None, WOODPECKER_RULES).ask
    level = WOODPECKER_TOOLS.get("set_log_level")
    assert decide(level, {"level": " PANIC "}, None, WOODPECKER_RULES).ask
    assert decide(level, {}, None, WOODPECKER_RULES).ask
    assert decide(
        UPDATE_SECRET,
        {"scope": "global", "name": "K", "images": []},
        _read({"images": "x"}),
        WOODPECKER_RULES,
    ).ask


def test_a_condition_without_a_rule_asks() -> None:
    tool = ToolSpec(
        name="grow_thing",
        title="Grow thing",
        group="things",
        kind="write",
        admin="never",
        admin_when=None,
        essential=False,
        annotations=UPDATE_SECRET.annotations,
        guard=GuardRule(
            when="unheard_of", condition="", targets=(), body_bound=False, needs_current_state=True
        ),
        untrusted_output=False,
        description="",
        params=(),
    )
    assert decide(tool, {}, None, WOODPECKER_RULES) == Decision(ask=True, reasons=frozenset({NO_RULE}))
    assert not needs_current(tool, {}, WOODPECKER_RULES)


REASONS = st.frozensets(st.sampled_from(["a", "b", "c", "d"]))


@given(REASONS, REASONS)
def test_an_approval_covers_a_recheck_exactly_when_nothing_new_widens(
    approved: frozenset[str], now: frozenset[str]
) -> None:
    assert covers(approved, now) == all(reason in approved for reason in now)


def test_a_repository_made_stricter_between_question_and_write_asks_again() -> None:
    args = {"repo_id": 9, "require_approval": "forks"}
    asked = decide(UPDATE_REPOSITORY, args, {"require_approval": "pull_requests"}, WOODPECKER_RULES)
    rechecked = decide(UPDATE_REPOSITORY, args, {"require_approval": "all_events"}, WOODPECKER_RULES)
    assert covers(asked.reasons, rechecked.reasons)
    trust = {"repo_id": 9, "require_approval": "forks", "visibility": "public"}
    was_public = decide(
        UPDATE_REPOSITORY, trust, {"require_approval": "none", "visibility": "public"}, WOODPECKER_RULES
    )
    became_private = decide(
        UPDATE_REPOSITORY, trust, {"require_approval": "none", "visibility": "private"}, WOODPECKER_RULES
    )
    assert not was_public.ask and not covers(was_public.reasons, became_private.reasons)


# ------------------------------------------------------------- the directions, judged on the result
# An oracle written from the other side: apply the call to the stored object and compare what the
# repository or secret lets in before and after. Whatever widens must ask, however it is spelt.

_VISIBILITY = ("private", "internal", "public")


def _repository_reach(repo: Mapping[str, Any]) -> dict[str, Any]:
    ra = repo.get("require_approval")
    vis = repo.get("visibility")
    trusted = repo.get("trusted") if isinstance(repo.get("trusted"), Mapping) else {}
    return {
        # Unknown approval modes hold back the most; an unknown visibility shows the least.
        "approval": STRICTNESS[ra] if isinstance(ra, str) and ra in STRICTNESS else max(STRICTNESS.values()),
        "visibility": _VISIBILITY.index(vis) if vis in _VISIBILITY else 0,
        "deploy": repo.get("allow_deploy") is True,
        "unheld_prs": repo.get("allow_pr") is True and ra == "none",
        **{f"trusted_{k}": trusted.get(k) is True for k in ("network", "volumes", "security")},
    }


def _applied_to_repository(current: Mapping[str, Any] | None, args: Mapping[str, Any]) -> dict[str, Any]:
    after = dict(current or {})
    for name in ("require_approval", "visibility", "allow_deploy", "allow_pr"):
        if name in args:
            after[name] = args[name]
    trusted = dict(after.get("trusted") or {}) if isinstance(after.get("trusted"), Mapping) else {}
    for flag in ("network", "volumes", "security"):
        if f"trusted_{flag}" in args:
            trusted[flag] = args[f"trusted_{flag}"]
    after["trusted"] = trusted
    return after


@settings(max_examples=300)
@given(_ARGUMENTS_OF["update_repository"], REPO_CURRENT)
def test_an_update_of_a_repository_that_lets_more_in_asks(args: dict[str, Any], current: Any) -> None:
    before = _repository_reach(current or {})
    after = _repository_reach(_applied_to_repository(current, args))
    widens = (
        after["approval"] < before["approval"]
        or after["visibility"] > before["visibility"]
        or any(after[k] and not before[k] for k in after if k not in ("approval", "visibility"))
    )
    if widens:
        assert decide(UPDATE_REPOSITORY, args, current, WOODPECKER_RULES).ask, (args, current)


def _secret_reach(secret: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str] | None]:
    """(pull-request events it reaches, images it is limited to or None for every image)."""
    events = secret.get("events")
    pr = frozenset(e for e in events if e in PR_EVENTS) if isinstance(events, list) else frozenset()
    images = secret.get("images")
    if images is None or images == []:
        return pr, None
    return pr, frozenset(i for i in images if isinstance(i, str)) if isinstance(images, list) else frozenset()


@settings(max_examples=300)
@given(_ARGUMENTS_OF["update_secret"], SECRET_CURRENT)
def test_an_update_of_a_secret_that_reaches_more_asks(args: dict[str, Any], current: Any) -> None:
    # Unread: the narrowest secret (no pull-request event, limited to no image).
    secret = None if current is None else current.get("secret")
    before_pr, before_images = _secret_reach(secret) if secret is not None else (frozenset(), frozenset())
    given_pr, given_images = _secret_reach(args)
    after_pr = given_pr if "events" in args else before_pr
    after_images = given_images if "images" in args else before_images
    widens = (
        args.get("value") is not None
        or bool(after_pr - before_pr)
        or (before_images is not None and (after_images is None or bool(after_images - before_images)))
    )
    if widens:
        assert decide(UPDATE_SECRET, args, current, WOODPECKER_RULES).ask, (args, current)


CREATE_SECRET = WOODPECKER_TOOLS.get("create_secret")
UPDATE_AGENT = WOODPECKER_TOOLS.get("update_agent")
# Whatever a probe may hold that is not ABSENT: a secret, a hostile 2xx body, a failed read (key left out).
NOT_ABSENT = st.sampled_from(["missing", None, {}, {"name": "x"}, "ABSENT", [], 404])


@given(
    st.sampled_from(["repository", "organization"]),
    st.sampled_from(["organization", "global"]),
    NOT_ABSENT,
)
def test_a_wider_level_counts_as_holding_the_name_unless_it_clearly_answered_404(
    scope: str, level: str, probed: object
) -> None:
    # guard.md §1c, fail closed: a 403, a 5xx, a timeout or an odd body at one level asks for that level.
    args = {"scope": scope, "name": "K", "value": "v", "events": ["push"], "repo_id": 1, "org_id": 4}
    current: dict[str, Any] = {"organization": ABSENT, "global": ABSENT}
    if probed == "missing":
        del current[level]
    else:
        current[level] = probed
    wider = {"repository": {"organization", "global"}, "organization": {"global"}}[scope]
    reasons = decide(CREATE_SECRET, args, current, WOODPECKER_RULES).reasons
    assert reasons == ({f"shadows_{level}_secret"} if level in wider else set())
    assert decide(CREATE_SECRET, args, None, WOODPECKER_RULES).reasons == {
        f"shadows_{w}_secret" for w in wider
    }


@given(
    st.none()
    | st.fixed_dictionaries({}, optional={"agent": st.none() | st.booleans() | st.text(max_size=3)})
    | st.fixed_dictionaries(
        {
            "agent": st.fixed_dictionaries(
                {},
                optional={
                    "id": st.integers(0, 9),
                    "no_schedule": st.none() | st.booleans() | st.text(max_size=3) | st.integers(),
                },
            )
        }
    )
)
def test_an_agent_not_read_as_plainly_in_service_counts_as_drained(current: Any) -> None:
    args = {"agent_id": 3, "no_schedule": False}
    agent = (current or {}).get("agent")
    in_service = (
        isinstance(agent, dict) and agent.get("no_schedule") is False and agent.get("id") in (None, 3)
    )
    assert decide(UPDATE_AGENT, args, current, WOODPECKER_RULES).ask is not in_service
    # Draining, or leaving no_schedule alone, never asks and never reads.
    for harmless in ({"agent_id": 3, "no_schedule": True}, {"agent_id": 3, "name": "n"}):
        assert not needs_current(UPDATE_AGENT, harmless, WOODPECKER_RULES)
        assert not decide(UPDATE_AGENT, harmless, current, WOODPECKER_RULES).ask


ACTIVATE = WOODPECKER_TOOLS.get("activate_repository")
# The forge's entry for 1005 as GET /user/repos?all=true lists it where the caller has no permission row
# on Woodpecker's record (each sign-in drops those of inactive repositories): no id, not active.
_UNMERGED = {"forge_remote_id": "1005", "full_name": "acme/old-site", "active": False}


@pytest.mark.parametrize(
    ("record", "reasons"),
    [
        (ABSENT, set()),  # the lookup by name answered 404: Woodpecker holds no record of that name
        ({"id": 5, "forge_remote_id": "1005", "active": False}, {"reactivates"}),
        ({"id": 5, "forge_remote_id": "1005", "active": True}, set()),  # Woodpecker refuses it, 409
        ({"id": 8, "forge_remote_id": "2001", "active": False}, {"record_unread"}),  # another's name
        ("missing", {"record_unread"}),  # a 403, a 5xx, a timeout: unread
        ({}, {"record_unread"}),
    ],
)
def test_an_entry_the_list_merged_no_record_into_asks_unless_the_lookup_by_name_finds_none(
    record: object, reasons: set[str]
) -> None:
    current: dict[str, Any] = {"repos": [_UNMERGED]}
    if record != "missing":
        current["record"] = record
    assert decide(ACTIVATE, {"forge_remote_id": "1005"}, current, WOODPECKER_RULES).reasons == reasons
