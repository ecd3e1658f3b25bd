"""The guard policy against an independent model of guard.md §1: ask only in the widening direction."""

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.guard.policy import ALWAYS, NO_RULE, Decision, covers, decide, needs_current
from domain.tools import GuardRule, ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
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
    }
)
STRICTNESS = {"none": 0, "forks": 1, "pull_requests": 2, "all_events": 3}
PR_EVENTS = {"pull_request", "pull_request_closed", "pull_request_metadata"}


def model_asks(tool: str, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """A deliberately plain restatement of guard.md §1. `current` None means nothing was read."""
    if tool in ALWAYS_ASKS:
        return True
    if tool == "repair_repository":
        return args.get("scope") == "instance"
    if tool in ("create_user", "update_user"):
        return args.get("admin") is True
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
        if args.get("visibility") == "public":
            if current is None or current.get("visibility") != "public":
                return True
        return False
    if tool == "update_secret":
        if "value" in args:
            return True
        if "events" in args:
            had = set() if current is None else set(current.get("events") or [])
            if (set(args["events"]) & PR_EVENTS) - had:
                return True
        if args.get("images") == []:
            if current is None or current.get("images"):
                return True
        return False
    return False


REPO_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "require_approval": st.sampled_from([*STRICTNESS, "", "ALL_EVENTS", "future_mode"]) | st.none(),
        "visibility": st.sampled_from(["public", "private", "internal", "", "Public"]) | st.none(),
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
SECRET_CURRENT = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "events": EVENTS | st.none(),
        "images": st.lists(st.text(min_size=1, max_size=10), max_size=3) | st.none(),
        "name": st.text(max_size=20),
    },
)


def current_for(tool: ToolSpec) -> st.SearchStrategy[Mapping[str, Any] | None]:
    if tool.name == "update_repository":
        return REPO_CURRENT
    if tool.name == "update_secret":
        return SECRET_CURRENT
    return st.none() | st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)


CALLS = st.sampled_from(GUARDED).flatmap(
    lambda t: st.tuples(st.just(t), tool_and_arguments((t,)).map(lambda ta: ta[1]), current_for(t))
)
CONDITIONAL = [t for t in GUARDED if t.guard is not None and not t.guard.always]


@pytest.mark.parametrize("tool", CONDITIONAL, ids=lambda t: t.name)
@settings(max_examples=60)
@given(data=st.data())
def test_a_conditional_tool_asks_exactly_when_the_model_of_the_seed_says_it_widens(
    tool: ToolSpec, data: st.DataObject
) -> None:
    args = data.draw(tool_and_arguments((tool,)).map(lambda ta: ta[1]), label="args")
    current = data.draw(current_for(tool), label="current")
    decision = decide(tool, args, current, WOODPECKER_RULES)
    assert decision.ask == model_asks(tool.name, args, current)
    assert decision.ask == bool(decision.reasons)


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


def test_the_seed_lists_twenty_three_guarded_tools_of_which_sixteen_always_ask() -> None:
    assert len(GUARDED) == 23
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
        tool.name == "update_repository" and bool({"require_approval", "visibility"} & set(args))
    ) or (tool.name == "update_secret" and bool({"events", "images"} & set(args)))
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
def test_visibility_asks_only_when_it_becomes_public(wanted: str, stored: str | None) -> None:
    current = {} if stored is None else {"visibility": stored}
    decision = decide(UPDATE_REPOSITORY, {"repo_id": 4, "visibility": wanted}, current, WOODPECKER_RULES)
    assert decision.ask == (wanted == "public" and stored != "public")


@pytest.mark.parametrize(
    ("stored", "asks"),
    [(["alpine"], True), ([], False), (None, False), ("missing", False), ("unread", True)],
)
def test_emptying_images_asks_only_when_the_secret_has_images_now(stored: object, asks: bool) -> None:
    current = None if stored == "unread" else {} if stored == "missing" else {"images": stored}
    args = {"scope": "repository", "repo_id": 1, "name": "K", "images": []}
    assert decide(UPDATE_SECRET, args, current, WOODPECKER_RULES).ask is asks


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
    assert decide(UPDATE_SECRET, args, {"events": stored}, WOODPECKER_RULES).ask is asks


def test_lowering_require_approval_below_an_unknown_stored_value_asks() -> None:
    decision = decide(
        UPDATE_REPOSITORY,
        {"repo_id": 4, "require_approval": "pull_requests"},
        {"require_approval": "x"},
        WOODPECKER_RULES,
    )
    assert decision.reasons == {"lowers_require_approval"}


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
    assert not decide(UPDATE_SECRET, args, current, WOODPECKER_RULES).ask


def test_a_malformed_value_fails_closed() -> None:
    admin = WOODPECKER_TOOLS.get("update_user")
    assert decide(admin, {"login": "a", "forge_id": 1, "admin": "yes"}, None, WOODPECKER_RULES).ask
    level = WOODPECKER_TOOLS.get("set_log_level")
    assert decide(level, {"level": " PANIC "}, None, WOODPECKER_RULES).ask
    assert decide(level, {}, None, WOODPECKER_RULES).ask
    assert decide(
        UPDATE_SECRET, {"scope": "global", "name": "K", "images": []}, {"images": "x"}, WOODPECKER_RULES
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
