"""guard.md §1c's rules, alone: a start asks whenever it cannot see that its branch holds nothing, and a
trigger's variables and manual or cron on a secret ask whatever the rest says (fail closed)."""

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.guard.policy import decide
from domain.woodpecker import rules as r
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.catalogue.pipelines import branch_sources
from domain.woodpecker.questions import question_for
from domain.woodpecker.reads import Probe
from domain.woodpecker.requests import Request
from domain.woodpecker.rules import WOODPECKER_RULES

TRIGGER = WOODPECKER_TOOLS.get("trigger_pipeline")
RUN_CRON = WOODPECKER_TOOLS.get("run_cron")
UPDATE_CRON = WOODPECKER_TOOLS.get("update_cron")
UPDATE_SECRET = WOODPECKER_TOOLS.get("update_secret")
BRANCH_REASONS = {r.BRANCH_HELD, r.BRANCH_UNAPPROVED, r.BRANCH_UNREAD}

MODES = st.sampled_from(["none", "forks", "pull_requests", "all_events", "", "future_mode"])
# The modes under which a branch can be quiet; every other (all_events, or one not recognised) holds
# every event, and a start then always asks.
QUIET_MODES = st.sampled_from(["none", "forks", "pull_requests"])
EVERY_EVENT_MODES = st.sampled_from(["all_events", "", "future_mode", None])
BRANCHES = st.sampled_from(["main", "dev", "feature/x"])


# The repository's pull-request pipelines into any branch (the "pr_*" reads): none, in each list.
NO_PULL_REQUESTS: dict[str, Any] = {"pr_blocked": [], "pr_declined": [], "pr_unreviewed": []}


def approved_push(branch: str) -> dict[str, Any]:
    return {"branch": branch, "status": "success", "event": "push", "author": "bob", "reviewed_by": "ada"}


@st.composite
def quiet(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A trigger and the reads of a branch that holds nothing: no blocked, no declined, every pipeline
    approved, fewer than a page. The rule proceeds on it (checked below)."""
    branch = draw(BRANCHES)
    repo = {"id": 3, "default_branch": "main", "require_approval": draw(QUIET_MODES)}
    listed = [approved_push(branch)] * draw(st.integers(0, r.BRANCH_PAGE - 1))
    current: dict[str, Any] = {
        "repo": repo,
        "blocked": [],
        "declined": [],
        **NO_PULL_REQUESTS,
        "branches_1": [branch],
        **NO_PULL_REQUESTS,
    }
    if repo["require_approval"] != "none":
        current["unreviewed"] = listed
    return {"repo_id": 3, "branch": branch}, current


# What can go wrong with each read: missing (failed or not made), not a list, another branch's or
# status's pipelines, another repository, a page that is not an object per pipeline.
SPOILERS = st.sampled_from(["missing", "null", "text", "other branch", "other status", "not objects"])


def spoil(current: dict[str, Any], key: str, how: str, branch: str) -> dict[str, Any]:
    spoiled = dict(current)
    if how == "missing":
        spoiled.pop(key, None)
    elif how == "null":
        spoiled[key] = None
    elif how == "text":
        spoiled[key] = "[]"
    elif key == "repo":
        spoiled[key] = {**current["repo"], "id": 99} if how != "not objects" else ["repo"]
    elif how == "not objects":
        spoiled[key] = ["pipeline"]
    elif how == "other branch":
        spoiled[key] = [{**approved_push("elsewhere"), "status": key if key != "unreviewed" else "success"}]
    else:
        spoiled[key] = [{**approved_push(branch), "status": "pending"}]
    return spoiled


@settings(max_examples=200)
@given(quiet())
def test_a_quiet_branch_is_started_unasked(call: tuple[dict[str, Any], dict[str, Any]]) -> None:
    args, current = call
    assert decide(TRIGGER, args, current, WOODPECKER_RULES).reasons == frozenset()


@settings(max_examples=200)
@given(quiet(), EVERY_EVENT_MODES, st.sampled_from([TRIGGER, RUN_CRON]))
def test_a_repository_holding_every_event_asks_for_any_start_however_quiet_the_branch(
    call: tuple[dict[str, Any], dict[str, Any]], mode: str | None, tool: Any
) -> None:
    # Review finding: under all_events a [skip ci] push leaves no pipeline to be blocked, and the API shows
    # no branch head to compare with the newest approved one, so nothing on record can say a start is safe.
    args, current = call
    current = {**current, "repo": {**current["repo"], "require_approval": mode}, "unreviewed": []}
    if tool is RUN_CRON:
        args = {"repo_id": 3, "cron_id": 4}
        current["cron"] = {"id": 4, "branch": "", "enabled": True}
        current["branches_1"] = ["main"]
    assert r.EVERY_EVENT_HELD in decide(tool, args, current, WOODPECKER_RULES).reasons


@settings(max_examples=300)
@given(quiet(), st.sampled_from(["repo", "blocked", "declined", "unreviewed"]), SPOILERS)
def test_any_read_that_is_missing_malformed_or_of_another_object_asks(
    call: tuple[dict[str, Any], dict[str, Any]], key: str, how: str
) -> None:
    args, current = call
    if key == "unreviewed" and current["repo"]["require_approval"] == "none":
        return  # not read under none: nothing needs approval
    if how == "other status" and key in ("repo", "unreviewed"):
        return  # those reads are not filtered by status
    spoiled = spoil(current, key, how, args["branch"])
    if how == "other branch" and key != "repo":
        for p in spoiled[key]:
            assert p["branch"] != args["branch"]
    decision = decide(TRIGGER, args, spoiled, WOODPECKER_RULES)
    assert decision.ask and r.BRANCH_UNREAD in decision.reasons, (key, how, decision)


@settings(max_examples=200)
@given(quiet(), st.integers(0, 3))
def test_a_full_page_of_approved_pipelines_asks_because_older_ones_were_not_read(
    call: tuple[dict[str, Any], dict[str, Any]], more: int
) -> None:
    args, current = call
    if current["repo"]["require_approval"] == "none":
        return
    full = {**current, "unreviewed": [approved_push(args["branch"])] * (r.BRANCH_PAGE + more)}
    assert decide(TRIGGER, args, full, WOODPECKER_RULES).reasons == {r.BRANCH_UNREAD}


@settings(max_examples=200)
@given(
    quiet(),
    st.sampled_from(["blocked", "declined"]),
    st.sampled_from(["push", "pull_request", "cron", "manual"]),
)
def test_a_blocked_or_declined_pipeline_of_any_event_asks_under_any_mode(
    call: tuple[dict[str, Any], dict[str, Any]], status: str, event: str
) -> None:
    args, current = call
    held = {**current, status: [{**approved_push(args["branch"]), "status": status, "event": event}]}
    assert r.BRANCH_HELD in decide(TRIGGER, args, held, WOODPECKER_RULES).reasons


@pytest.mark.parametrize(
    ("repo", "pipeline", "asks"),
    [
        ({"require_approval": "all_events"}, {"event": "push", "reviewed_by": ""}, True),
        ({"require_approval": "all_events"}, {"event": "push", "reviewed_by": "ada"}, False),
        ({"require_approval": "all_events", "approval_allowed_users": ["bob"]}, {"event": "push"}, False),
        ({"require_approval": "forks"}, {"event": "pull_request", "from_fork": True}, True),
        ({"require_approval": "forks"}, {"event": "pull_request", "from_fork": False}, False),
        ({"require_approval": "pull_requests"}, {"event": "pull_request_metadata"}, True),
        ({"require_approval": "future_mode"}, {"event": "tag"}, True),
    ],
)
def test_an_unapproved_pipeline_asks_by_woodpeckers_needs_approval(
    repo: dict[str, Any], pipeline: dict[str, Any], asks: bool
) -> None:
    listed = [{"branch": "dev", "status": "failure", "author": "bob", **pipeline}]
    current = {
        "repo": {"id": 3, **repo},
        "blocked": [],
        "declined": [],
        **NO_PULL_REQUESTS,
        "unreviewed": listed,
        "branches_1": ["dev"],
    }
    reasons = decide(TRIGGER, {"repo_id": 3, "branch": "dev"}, current, WOODPECKER_RULES).reasons
    assert (r.BRANCH_UNAPPROVED in reasons) is asks


@pytest.mark.parametrize(
    ("listed", "asks"),
    [
        # Woodpecker 3.17 (docs/adr/0057): the re-run of a declined pull request carries the decliner as reviewed_by.
        (
            [{"number": 8, "parent": 6, "status": "success", "event": "pull_request", "reviewed_by": "ada"}],
            True,
        ),
        (
            [
                {
                    "number": 8,
                    "parent": 6,
                    "status": "success",
                    "event": "pull_request",
                    "reviewed_by": "ada",
                },
                {
                    "number": 6,
                    "parent": 0,
                    "status": "declined",
                    "event": "pull_request",
                    "reviewed_by": "ada",
                },
            ],
            True,
        ),
        (
            [
                {
                    "number": 8,
                    "parent": 7,
                    "status": "success",
                    "event": "pull_request",
                    "reviewed_by": "ada",
                },
                {
                    "number": 7,
                    "parent": 0,
                    "status": "success",
                    "event": "pull_request",
                    "reviewed_by": "ada",
                },
            ],
            False,
        ),
    ],
)
def test_a_rerun_counts_as_approved_only_by_the_approval_of_its_first_run(
    listed: list[dict[str, Any]], asks: bool
) -> None:
    current = {
        "repo": {"id": 3, "require_approval": "pull_requests"},
        "blocked": [],
        "declined": [],
        **NO_PULL_REQUESTS,
        "unreviewed": [{"branch": "dev", "author": "bob", **p} for p in listed],
        "branches_1": ["dev"],
    }
    reasons = decide(TRIGGER, {"repo_id": 3, "branch": "dev"}, current, WOODPECKER_RULES).reasons
    assert (r.BRANCH_UNAPPROVED in reasons) is asks


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,40}", fullmatch=True).filter(
    lambda n: (
        not n.upper().startswith(("CI_", "DRONE_", "WOODPECKER_", "PLUGIN_", "LD_", "DYLD_", "GIT_"))
        and n.upper() not in ("PATH", "HOME", "SHELL")
    )
)


@settings(max_examples=200)
@given(
    st.dictionaries(
        NAMES, st.text(min_size=1, max_size=30).filter(lambda v: "shown" not in v), min_size=1, max_size=5
    ),
    quiet(),
)
def test_any_variables_ask_whatever_the_branch_and_the_question_names_each_but_no_value(
    variables: dict[str, str], call: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    args, current = call
    args = {**args, "variables": variables}
    for read in (current, None):
        decision = decide(TRIGGER, args, read, WOODPECKER_RULES)
        assert r.SETS_VARIABLES in decision.reasons
    text = question_for(TRIGGER, args, decide(TRIGGER, args, current, WOODPECKER_RULES))
    head, _, cost = text.partition("\n\n")
    lines = head.split("\n")
    for name in variables:
        assert f"Variable name: {name}" in lines
    assert len([line for line in lines if line.startswith("Variable name: ")]) == len(variables)
    for value in variables.values():
        shown = [line for line in lines if not line.startswith(("Variable name: ", "This will"))]
        assert not any(value.strip() and line.endswith(f": {value.strip()}") for line in shown)


@pytest.mark.parametrize("malformed", [["NODE_OPTIONS"], "NODE_OPTIONS=x", 1])
def test_variables_that_are_not_an_object_ask(malformed: object) -> None:
    args = {"repo_id": 3, "branch": "main", "variables": malformed}
    assert r.SETS_VARIABLES in decide(TRIGGER, args, None, WOODPECKER_RULES).reasons


@given(st.sampled_from(["", "dev"]), BRANCHES, st.booleans())
def test_a_cron_runs_its_branch_or_else_the_default_one(stored: str, default: str, cron_read: bool) -> None:
    answers: dict[str, Any] = {"repo": {"id": 3, "default_branch": default}}
    if cron_read:
        answers["cron"] = {"id": 4, "branch": stored}
    expected = (stored or default) if cron_read else None
    assert r.branch_to_check({"repo_id": 3, "cron_id": 4}, answers) == expected
    # A cron answer for another cron counts as unread.
    assert (
        r.branch_to_check({"repo_id": 3, "cron_id": 4}, {**answers, "cron": {"id": 5, "branch": "x"}}) is None
    )


def test_a_cron_whose_read_failed_asks_and_one_not_moved_never_reads() -> None:
    assert decide(RUN_CRON, {"repo_id": 3, "cron_id": 4}, {"repo": {"id": 3}}, WOODPECKER_RULES).reasons == {
        r.BRANCH_UNREAD
    }
    rule = WOODPECKER_RULES["moves_cron_past_approval"]
    for unmoved in (
        {"repo_id": 3, "cron_id": 4, "enabled": False},
        {"repo_id": 3, "cron_id": 4, "name": "x"},
    ):
        assert not rule.needs_current(unmoved)
        assert decide(UPDATE_CRON, unmoved, None, WOODPECKER_RULES).reasons == frozenset()


@pytest.mark.parametrize(
    ("stored", "asks"),
    [({"id": 4, "enabled": False}, True), ({"id": 4, "enabled": True}, False), (None, True)],
)
def test_re_enabling_a_cron_asks_unless_it_is_enabled_already(
    stored: dict[str, Any] | None, asks: bool
) -> None:
    # Its branch (dev) holds a blocked push; an unread cron counts as not enabled.
    args = {"repo_id": 3, "cron_id": 4, "enabled": True}
    blocked = [{"branch": "dev", "status": "blocked"}]
    current: dict[str, Any] = {
        "repo": {"id": 3, "require_approval": "none"},
        "blocked": blocked,
        "declined": [],
        **NO_PULL_REQUESTS,
        "branches_1": ["main", "dev"],
    }
    if stored is not None:
        current["cron"] = {**stored, "branch": "dev"}
    assert WOODPECKER_RULES["moves_cron_past_approval"].needs_current(args)
    assert bool(decide(UPDATE_CRON, args, current, WOODPECKER_RULES).reasons) is asks


def test_the_reads_are_one_page_each_of_the_branch_filtered_as_the_mode_needs() -> None:
    reads = branch_sources({"repo_id": 3, "cron_id": 4})
    pages = [f"branches_{n}" for n in range(1, r.BRANCH_LIST_PAGES + 1)]
    assert list(reads) == [
        "cron",
        "repo",
        "blocked",
        "declined",
        "unreviewed",
        "pr_blocked",
        "pr_declined",
        "pr_unreviewed",
        *pages,
    ]
    assert reads["cron"] == Probe(Request("GET", "/api/repos/3/cron/4"))
    answers = {"cron": {"id": 4, "branch": "dev"}, "repo": {"id": 3, "require_approval": "forks"}}
    blocked, unreviewed = (reads[k].planned({}, answers) for k in ("blocked", "unreviewed"))
    page = {"branch": "dev", "page": "1", "perPage": "50"}
    assert blocked == Request("GET", "/api/repos/3/pipelines", query={**page, "status": "blocked"})
    events = "pull_request,pull_request_closed,pull_request_metadata"
    assert unreviewed == Request("GET", "/api/repos/3/pipelines", query={**page, "event": events})
    none = {**answers, "repo": {"id": 3, "require_approval": "none"}}
    assert reads["unreviewed"].planned({}, none) is None
    # The repository's pull requests into any branch, by the events whose pipelines run a head.
    from_any = {
        "page": "1",
        "perPage": "50",
        "event": "pull_request,pull_request_closed,pull_request_metadata",
    }
    assert reads["pr_blocked"].planned({}, answers) == Request(
        "GET", "/api/repos/3/pipelines", query={**from_any, "status": "blocked"}
    )
    assert reads["pr_unreviewed"].planned({}, answers) == Request(
        "GET", "/api/repos/3/pipelines", query=from_any
    )
    assert reads["pr_unreviewed"].planned({}, none) is None
    # Without the cron's answer nothing names the branch, so nothing more is read (and the rule asks).
    assert reads["blocked"].planned({}, {"repo": answers["repo"]}) is None


SCOPES = st.sampled_from(["repository", "organization", "global"])
STORED_REPO = st.none() | st.fixed_dictionaries(
    {}, optional={"id": st.sampled_from([1, 9]), "require_approval": MODES | st.none()}
)


@settings(max_examples=300)
@given(SCOPES, st.sampled_from(["manual", "cron"]), STORED_REPO, st.booleans())
def test_manual_or_cron_added_to_a_secret_asks_unless_its_one_repository_holds_nothing(
    scope: str, event: str, repo: Mapping[str, Any] | None, secret_read: bool
) -> None:
    args = {"scope": scope, "repo_id": 1, "org_id": 4, "name": "K", "events": ["push", event]}
    current: dict[str, Any] = {}
    if secret_read:
        current["secret"] = {"name": "K", "events": ["push"]}
    if repo is not None:
        current["repo"] = repo
    reasons = decide(UPDATE_SECRET, args, current, WOODPECKER_RULES).reasons
    holds_nothing = (
        scope == "repository"
        and repo is not None
        and repo.get("id") in (None, 1)
        and repo.get("require_approval") == "none"
    )
    assert (r.ADDS_UNHELD_EVENT in reasons) is not holds_nothing, (args, current, reasons)


def test_manual_or_cron_the_secret_already_has_does_not_ask() -> None:
    args = {"scope": "organization", "org_id": 4, "name": "K", "events": ["push", "cron"]}
    stored = {"secret": {"name": "K", "events": ["cron", "push", "tag"]}}
    assert decide(UPDATE_SECRET, args, stored, WOODPECKER_RULES).reasons == frozenset()
    # The answer of another secret counts as unread: the event counts as added.
    other = {"secret": {"name": "L", "events": ["cron", "push"]}}
    assert r.ADDS_UNHELD_EVENT in decide(UPDATE_SECRET, args, other, WOODPECKER_RULES).reasons


def _pages(names: list[str]) -> dict[str, list[str]]:
    """The forge's branch list as the probes read it: pages of BRANCH_PAGE, up to the first short one."""
    pages: dict[str, list[str]] = {}
    for number in range(1, r.BRANCH_LIST_PAGES + 1):
        page = names[(number - 1) * r.BRANCH_PAGE : number * r.BRANCH_PAGE]
        pages[f"branches_{number}"] = page
        if len(page) < r.BRANCH_PAGE:
            break
    return pages


@settings(max_examples=200)
@given(
    quiet(),
    st.integers(0, r.BRANCH_PAGE * (r.BRANCH_LIST_PAGES + 1)),
    st.sampled_from(["exact", "absent", "other case", "refs/heads/", "page missing", "not names"]),
)
def test_a_branch_the_forge_does_not_list_by_exactly_its_name_asks(
    call: tuple[dict[str, Any], dict[str, Any]], at: int, how: str
) -> None:
    # The pipeline lists match the name exactly; the forge may resolve another spelling elsewhere.
    args, current = call
    branch = args["branch"]
    others = [f"other-{n}" for n in range(r.BRANCH_PAGE * (r.BRANCH_LIST_PAGES + 1))]
    listed = {
        "exact": branch,
        "absent": None,
        "other case": branch.upper(),
        "refs/heads/": f"refs/heads/{branch}",
    }
    names = list(others)
    if how in listed and listed[how] is not None:
        names.insert(at, str(listed[how]))
    elif how in ("page missing", "not names"):
        names.insert(0, branch)
    pages = _pages(names)
    if how == "page missing":
        pages.pop("branches_1")
    if how == "not names":
        pages["branches_1"] = [{"name": branch}]
    read = {k: v for k, v in current.items() if not k.startswith("branches_")} | pages
    found = at < r.BRANCH_PAGE * r.BRANCH_LIST_PAGES  # within the pages read
    reasons = decide(TRIGGER, args, read, WOODPECKER_RULES).reasons
    assert (r.BRANCH_UNLISTED not in reasons) is (how == "exact" and found)
    assert reasons <= {r.BRANCH_UNLISTED}


def test_the_branch_list_is_read_a_page_at_a_time_until_the_branch_is_found() -> None:
    reads = branch_sources({"repo_id": 3, "branch": "dev"})
    answers: dict[str, Any] = {"repo": {"id": 3, "require_approval": "none"}}
    page = {"perPage": "50"}
    assert reads["branches_1"].planned({}, answers) == Request(
        "GET", "/api/repos/3/branches", query={**page, "page": "1"}
    )
    full = [f"b{n}" for n in range(r.BRANCH_PAGE)]
    assert reads["branches_2"].planned({}, {**answers, "branches_1": full}) == Request(
        "GET", "/api/repos/3/branches", query={**page, "page": "2"}
    )
    # Found, a short page (the last), or a failed page: nothing more is read.
    for before in (["dev", *full[1:]], full[:3], None):
        assert reads["branches_2"].planned({}, {**answers, "branches_1": before}) is None


def pull_request(source: str, into: str = "main", **fields: Any) -> dict[str, Any]:
    """A pull request's pipeline as Woodpecker files it: under the branch it goes into (`branch`), the
    branch whose code it runs only in its refspec's head."""
    return {"branch": into, "event": "pull_request", "refspec": f"{source}:{into}", "author": "bob", **fields}


@settings(max_examples=200)
@given(quiet(), st.sampled_from(["blocked", "declined"]))
def test_a_held_or_declined_pull_request_from_the_branch_asks_though_it_is_filed_under_another(
    call: tuple[dict[str, Any], dict[str, Any]], status: str
) -> None:
    # Found by a real Woodpecker 3.17: a start on the pull request's own branch ran its held code unasked.
    args, current = call
    held = {**current, f"pr_{status}": [pull_request(args["branch"], "release", status=status)]}
    assert r.BRANCH_HELD in decide(TRIGGER, args, held, WOODPECKER_RULES).reasons
    elsewhere = {**current, f"pr_{status}": [pull_request("other-branch", args["branch"], status=status)]}
    assert r.BRANCH_HELD not in decide(TRIGGER, args, elsewhere, WOODPECKER_RULES).reasons


@settings(max_examples=200)
@given(quiet(), st.sampled_from(["pr_blocked", "pr_declined", "pr_unreviewed"]), SPOILERS)
def test_a_pull_request_read_that_cannot_tell_asks(
    call: tuple[dict[str, Any], dict[str, Any]], key: str, how: str
) -> None:
    args, current = call
    if key == "pr_unreviewed" and current["repo"]["require_approval"] == "none":
        return  # not read under none: nothing needs approval
    status = key.removeprefix("pr_") if key != "pr_unreviewed" else "success"
    page: Any = {
        "missing": None,
        "null": None,
        "text": "[]",
        "not objects": ["pipeline"],
        "other branch": [{**pull_request("x"), "event": "push", "status": status}],  # not a pull request
        "other status": [{**pull_request("x"), "refspec": "no-head", "status": status}],  # no head to read
    }[how]
    spoiled = dict(current)
    if how == "missing":
        spoiled.pop(key)
    else:
        spoiled[key] = page
    assert r.BRANCH_UNREAD in decide(TRIGGER, args, spoiled, WOODPECKER_RULES).reasons
    full = {**current, key: [pull_request("x", status=status, reviewed_by="ada")] * r.BRANCH_PAGE}
    assert r.BRANCH_UNREAD in decide(TRIGGER, args, full, WOODPECKER_RULES).reasons


def test_an_unapproved_pull_request_from_the_branch_asks_and_an_approved_one_does_not() -> None:
    current = {
        "repo": {"id": 3, "require_approval": "pull_requests"},
        "blocked": [],
        "declined": [],
        "unreviewed": [],
        **NO_PULL_REQUESTS,
        "branches_1": ["feature"],
    }
    args = {"repo_id": 3, "branch": "feature"}
    killed = {
        **current,
        "pr_unreviewed": [pull_request("feature", number=7, status="killed", reviewed_by="")],
    }
    assert r.BRANCH_UNAPPROVED in decide(TRIGGER, args, killed, WOODPECKER_RULES).reasons
    approved = {
        **current,
        "pr_unreviewed": [pull_request("feature", number=7, status="success", reviewed_by="ada")],
    }
    assert decide(TRIGGER, args, approved, WOODPECKER_RULES).reasons == frozenset()
    assert r.source_branch({"refspec": "feature/x:main"}) == "feature/x"
    assert r.source_branch({"refspec": "main"}) is None and r.source_branch({}) is None
