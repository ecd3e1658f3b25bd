"""Properties of the call fingerprint: what an approval is bound to."""

import hashlib
import json
import string
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from domain.arguments import ArgumentError, validate
from domain.guard.fingerprint import audit_fingerprint, body_of, canonical_json, fingerprint, short
from domain.guard.policy import decide
from domain.tools import ToolSpec
from domain.woodpecker import requests
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.questions import question_for
from domain.woodpecker.rules import WOODPECKER_RULES
from tests.domain._guard_strategies import GUARDED, IDS, JSON, arguments_for, tool_and_arguments, value_for

APPROVE = WOODPECKER_TOOLS.get("approve_pipeline")
UPDATE_REPOSITORY = WOODPECKER_TOOLS.get("update_repository")
UPDATE_SECRET = WOODPECKER_TOOLS.get("update_secret")
DELETE_REPOSITORY = WOODPECKER_TOOLS.get("delete_repository")
BODY_BOUND = tuple(t for t in GUARDED if t.guard is not None and t.guard.body_bound)
PRINCIPALS = st.none() | st.text(alphabet="0123456789abcdef", min_size=1, max_size=16)
# A body-bound tool and its arguments, each tool's strategy built once (not in every draw).
_BODY_BOUND_CALL = {t.name: st.tuples(st.just(t), tool_and_arguments((t,))) for t in BODY_BOUND}
BODY_BOUND_CALLS = st.sampled_from(BODY_BOUND).flatmap(lambda t: _BODY_BOUND_CALL[t.name])


def _json_differs(a: Any, b: Any) -> bool:
    return canonical_json(a) != canonical_json(b)


@given(tool_and_arguments(tuple(WOODPECKER_TOOLS)), PRINCIPALS)
def test_a_fingerprint_is_64_lowercase_hex_digits(
    tool_args: tuple[ToolSpec, dict[str, Any]], principal: str | None
) -> None:
    tool, args = tool_args
    fp = fingerprint(tool, args, principal)
    assert len(fp) == 64 and set(fp) <= set(string.hexdigits.lower())


@given(IDS, IDS)
def test_swapping_two_targets_gives_another_fingerprint(a: int, b: int) -> None:
    assume(a != b)
    assert fingerprint(APPROVE, {"repo_id": a, "number": b}, None) != fingerprint(
        APPROVE, {"repo_id": b, "number": a}, None
    )


@given(tool_and_arguments(), PRINCIPALS, st.data())
def test_the_order_of_argument_keys_does_not_matter(
    tool_args: tuple[ToolSpec, dict[str, Any]], principal: str | None, data: st.DataObject
) -> None:
    tool, args = tool_args
    shuffled = dict(data.draw(st.permutations(list(args.items()))))
    assert fingerprint(tool, shuffled, principal) == fingerprint(tool, args, principal)


@settings(max_examples=50)
@given(st.dictionaries(st.text(max_size=6), JSON, max_size=5))
def test_nested_key_order_in_the_body_does_not_matter(body: dict[str, Any]) -> None:
    args = {"repo_id": 7, "cancel_previous_pipeline_events": body}
    reordered = {"repo_id": 7, "cancel_previous_pipeline_events": dict(reversed(list(body.items())))}
    assert fingerprint(UPDATE_REPOSITORY, reordered, None) == fingerprint(UPDATE_REPOSITORY, args, None)


@given(
    BODY_BOUND_CALLS,
    JSON,
    st.data(),
)
def test_changing_any_body_value_changes_the_fingerprint(
    drawn: tuple[ToolSpec, tuple[ToolSpec, dict[str, Any]]], new_value: Any, data: st.DataObject
) -> None:
    tool, (_, args) = drawn
    body = body_of(tool, args)
    key = data.draw(st.sampled_from(sorted(body)) if body else st.just("some_new_field"))
    assume(key not in body or _json_differs(body[key], new_value))
    changed = {**args, key: new_value}
    assert fingerprint(tool, changed, None) != fingerprint(tool, args, None)


@given(tool_and_arguments(), JSON, st.data())
def test_changing_a_present_target_changes_the_fingerprint(
    tool_args: tuple[ToolSpec, dict[str, Any]], new_value: Any, data: st.DataObject
) -> None:
    tool, args = tool_args
    assert tool.guard is not None
    present = [name for name in tool.guard.targets if name in args]
    assume(present)
    name = data.draw(st.sampled_from(present))
    assume(_json_differs(args[name], new_value))
    assert fingerprint(tool, {**args, name: new_value}, None) != fingerprint(tool, args, None)


@given(JSON)
def test_a_missing_optional_target_differs_from_every_value(value: Any) -> None:
    absent = {"scope": "global", "name": "DEPLOY_KEY"}
    assert fingerprint(UPDATE_SECRET, absent, None) != fingerprint(
        UPDATE_SECRET, {**absent, "repo_id": value}, None
    )


def test_a_flag_turned_on_or_off_gives_different_fingerprints() -> None:
    assert fingerprint(UPDATE_REPOSITORY, {"repo_id": 3, "allow_pr": True}, None) != fingerprint(
        UPDATE_REPOSITORY, {"repo_id": 3, "allow_pr": False}, None
    )


def test_true_and_one_in_the_body_give_different_fingerprints() -> None:
    assert fingerprint(UPDATE_REPOSITORY, {"repo_id": 3, "allow_pr": True}, None) != fingerprint(
        UPDATE_REPOSITORY, {"repo_id": 3, "allow_pr": 1}, None
    )


def test_an_approval_for_a_trust_grant_does_not_cover_one_that_also_makes_the_repository_public() -> None:
    grant = {"repo_id": 21, "trusted_network": True}
    assert fingerprint(UPDATE_REPOSITORY, grant, None) != fingerprint(
        UPDATE_REPOSITORY, {**grant, "visibility": "public"}, None
    )


@given(tool_and_arguments())
def test_the_confirmation_token_is_not_part_of_the_fingerprint(
    tool_args: tuple[ToolSpec, dict[str, Any]],
) -> None:
    tool, args = tool_args
    assert fingerprint(tool, {**args, "confirm_token": "0" * 32}, None) == fingerprint(tool, args, None)


@given(IDS, JSON)
def test_arguments_outside_the_targets_are_ignored_when_the_body_is_not_bound(
    repo_id: int, extra: Any
) -> None:
    assert DELETE_REPOSITORY.guard is not None and not DELETE_REPOSITORY.guard.body_bound
    args = {"repo_id": repo_id}
    assert fingerprint(DELETE_REPOSITORY, {**args, "remove": extra}, None) == fingerprint(
        DELETE_REPOSITORY, args, None
    )


@given(
    st.sampled_from(GUARDED), st.sampled_from(GUARDED), st.fixed_dictionaries({"repo_id": IDS, "number": IDS})
)
def test_the_fingerprint_binds_the_tool(one: ToolSpec, other: ToolSpec, args: dict[str, Any]) -> None:
    assert (fingerprint(one, args, None) == fingerprint(other, args, None)) == (one.name == other.name)


@given(tool_and_arguments(), PRINCIPALS, PRINCIPALS)
def test_the_fingerprint_binds_the_principal(
    tool_args: tuple[ToolSpec, dict[str, Any]], one: str | None, other: str | None
) -> None:
    tool, args = tool_args
    assert (fingerprint(tool, args, one) == fingerprint(tool, args, other)) == (one == other)


def test_no_principal_and_an_empty_principal_are_different_callers() -> None:
    args = {"repo_id": 1, "number": 2}
    assert fingerprint(APPROVE, args, None) != fingerprint(APPROVE, args, "")


def test_the_canonical_body_has_sorted_keys_and_no_spaces() -> None:
    assert canonical_json({"b": [1, True], "a": None}) == '{"a":null,"b":[1,true]}'
    assert json.loads(canonical_json({"é": "x"})) == {"é": "x"}


def test_a_short_fingerprint_is_its_first_twelve_digits() -> None:
    fp = fingerprint(APPROVE, {"repo_id": 1, "number": 2}, None)
    assert short(fp) == fp[:12] and len(short(fp)) == 12


def test_the_canonical_form_is_pinned_so_replicas_of_different_releases_agree() -> None:
    # Changing how a fingerprint is built must be deliberate (and bump its version string):
    # tokens and seals in flight would otherwise stop matching across a rolling upgrade.
    def sha(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    approve = '["woodpecker-ci-mcp/fingerprint/1","approve_pipeline",[["repo_id",5],["number",12]],null,null]'
    assert fingerprint(APPROVE, {"number": 12, "repo_id": 5}, None) == sha(approve)
    body = sha('{"value":"v"}')
    secret = (
        '["woodpecker-ci-mcp/fingerprint/1","update_secret",'
        f'[["scope","global"],["repo_id"],["org_id"],["name","K"]],"{body}","p"]'
    )
    assert fingerprint(UPDATE_SECRET, {"name": "K", "value": "v", "scope": "global"}, "p") == sha(secret)


@given(
    BODY_BOUND_CALLS,
    JSON,
    PRINCIPALS,
    st.data(),
)
def test_the_audit_fingerprint_depends_on_no_body_value(
    drawn: tuple[ToolSpec, tuple[ToolSpec, dict[str, Any]]],
    new_value: Any,
    principal: str | None,
    data: st.DataObject,
) -> None:
    tool, (_, args) = drawn
    body = body_of(tool, args)
    assume(body)
    key = data.draw(st.sampled_from(sorted(body)))
    changed = {**args, key: new_value}
    assert audit_fingerprint(tool, changed, principal) == audit_fingerprint(tool, args, principal)
    # ...so it is not the call's own fingerprint, which a reader could test guesses against
    # (the two agree only for a body whose every value is the mask itself).
    assume(any(value != "*" for value in body.values()))
    assert audit_fingerprint(tool, args, principal) != fingerprint(tool, args, principal)


@given(tool_and_arguments(), PRINCIPALS, PRINCIPALS, JSON, st.data())
def test_the_audit_fingerprint_still_tells_targets_and_callers_apart(
    tool_args: tuple[ToolSpec, dict[str, Any]],
    one: str | None,
    other: str | None,
    new_value: Any,
    data: st.DataObject,
) -> None:
    tool, args = tool_args
    assert (audit_fingerprint(tool, args, one) == audit_fingerprint(tool, args, other)) == (one == other)
    assert tool.guard is not None
    present = [name for name in tool.guard.targets if name in args]
    if present:
        name = data.draw(st.sampled_from(present))
        assume(_json_differs(args[name], new_value))
        assert audit_fingerprint(tool, {**args, name: new_value}, one) != audit_fingerprint(tool, args, one)


def test_without_a_bound_body_the_audit_fingerprint_is_the_calls_own() -> None:
    assert audit_fingerprint(APPROVE, {"repo_id": 5, "number": 12}, "p") == fingerprint(
        APPROVE, {"repo_id": 5, "number": 12}, "p"
    )


_GUARDED_WITH_ARGUMENTS = st.sampled_from([t for t in GUARDED if len(t.params) > 1])


@st.composite
def _two_valid_calls(draw: st.DrawFn) -> tuple[ToolSpec, dict[str, Any], dict[str, Any]]:
    """A guarded tool, a valid call of it, and the same call with one argument changed, added or left out."""
    tool = draw(_GUARDED_WITH_ARGUMENTS)
    one = draw(arguments_for(tool))
    param = draw(st.sampled_from([p for p in tool.params if p.name != "confirm_token"]))
    other = dict(one)
    if param.name in other and draw(st.booleans()):
        del other[param.name]
    else:
        other[param.name] = draw(value_for(param))
    try:
        return tool, validate(tool, one), validate(tool, other)
    except ArgumentError:
        assume(False)
        raise


@settings(max_examples=400)
@given(_two_valid_calls())
def test_one_fingerprint_is_one_request_and_one_question(
    call: tuple[ToolSpec, dict[str, Any], dict[str, Any]],
) -> None:
    # An approval binds a fingerprint; two calls that share it must send the same request and show
    # the same question, or one approved call could stand in for another (guard.md §3).
    tool, one, other = call
    asked = decide(tool, one, None, WOODPECKER_RULES)
    if not asked.ask or fingerprint(tool, one, "p") != fingerprint(tool, other, "p"):
        return  # nothing to approve, or two approvals
    assert requests.plan(tool, one) == requests.plan(tool, other), (tool.name, one, other)
    assert question_for(tool, one, asked) == question_for(tool, other, asked)
