"""Input schemas and argument validation of the 71 tools: the schema says what validation does."""

import json
from typing import Any

import jsonschema
import pytest

from domain.arguments import ArgumentError, input_schema, validate
from domain.tools import Param, ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS

TOOLS = list(WOODPECKER_TOOLS)


def _refusal(tool: str, args: Any) -> str:
    with pytest.raises(ArgumentError) as caught:
        validate(WOODPECKER_TOOLS.get(tool), args)
    return str(caught.value)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_input_schema_is_a_valid_draft_2020_12_object_schema_and_validation_stays_closed(
    tool: Any,
) -> None:
    schema = input_schema(tool)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    # The listed schema leaves `additionalProperties: false` out; validation still refuses strangers.
    with pytest.raises(ArgumentError, match="not_an_argument"):
        validate(tool, {"not_an_argument": 1})


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_input_schema_matches_the_catalogue_parameters(tool: Any) -> None:
    schema = input_schema(tool)
    assert list(schema["properties"]) == [p.name for p in tool.params]
    assert schema.get("required", []) == [p.name for p in tool.params if p.required]
    for p in tool.params:
        prop = schema["properties"][p.name]
        assert prop.get("description", "").startswith(p.description.rstrip())
        if p.choices:
            assert prop["type"] == "string" and prop["enum"] == list(p.choices)
        else:
            assert prop["type"] == p.type
        c = p.constraints
        # Listed only where it tells a model something; validation applies every constraint.
        listed_maximum = c.get("maximum") if c.get("maximum", 0) < 10_000 else None
        assert prop.get("maximum") == listed_maximum, p.name
        listed_minimum = c.get("minimum")
        if listed_minimum == 1 and listed_maximum is None:
            listed_minimum = None  # an id's floor
        assert prop.get("minimum") == listed_minimum, p.name
        listed_default = c.get("default") if c.get("default") is not False else None
        assert prop.get("default") == listed_default, p.name
        for key in ("format", "minItems", "uniqueItems"):
            assert prop.get(key) == c.get(key), (p.name, key)
        for key in ("minLength", "maxLength", "pattern", "maxItems", "maxProperties", "propertyNames"):
            assert key not in prop, (p.name, key)


# One value beyond each constraint the listed schema leaves out, and the refusal that must follow.
def _beyond(key: str, bound: Any) -> Any:
    if key == "minLength":
        return "" if bound == 1 else "x" * (bound - 1)
    if key == "maxLength":
        return "x" * (bound + 1)
    if key == "pattern":
        return "../.." if "(?!" in bound else " \n"
    if key == "maxItems":
        return [f"v{i}" for i in range(bound + 1)]
    return {f"K{i}": "v" for i in range(bound + 1)}  # maxProperties


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_what_the_listed_schema_leaves_out_validation_still_refuses(tool: Any) -> None:
    for p in tool.params:
        for key in ("minLength", "maxLength", "pattern", "maxItems", "maxProperties"):
            if key not in p.constraints or (key == "maxItems" and p.type != "array"):
                continue
            if key == "maxProperties" and p.type != "object":
                continue
            with pytest.raises(ArgumentError) as caught:
                validate(tool, {p.name: _beyond(key, p.constraints[key])})
            assert p.name in caught.value.arguments, (p.name, key)


def test_no_listed_schema_carries_a_meaningless_bound_and_validation_still_applies_it() -> None:
    text = json.dumps([input_schema(t) for t in TOOLS])
    assert "9007199254740991" not in text
    message = _refusal("get_repository", {"repo_id": 2**53})
    assert "repo_id" in message


def test_no_schema_carries_the_private_cross_argument_keys() -> None:
    text = json.dumps([input_schema(t) for t in TOOLS])
    assert "required_when" not in text and "only_when" not in text


def test_cross_argument_rules_are_stated_in_the_descriptions() -> None:
    props = input_schema(WOODPECKER_TOOLS.get("list_secrets"))["properties"]
    assert "Required iff scope=repository." in props["repo_id"]["description"]
    props = input_schema(WOODPECKER_TOOLS.get("list_repositories"))["properties"]
    assert "Only if scope=instance." in props["page"]["description"]


def test_every_per_page_is_bounded_by_woodpeckers_cap_and_every_confirm_token_is_32_hex() -> None:
    seen_per_page = seen_token = 0
    for tool in TOOLS:
        props = input_schema(tool)["properties"]
        if "per_page" in props:
            seen_per_page += 1
            assert (props["per_page"]["minimum"], props["per_page"]["maximum"]) == (1, 50)
        if "confirm_token" in props:
            seen_token += 1
            token = next(p for p in tool.params if p.name == "confirm_token")
            assert token.constraints["pattern"] == "^[0-9a-f]{32}$"
            with pytest.raises(ArgumentError) as caught:
                validate(tool, {"confirm_token": "not-a-token"})
            assert "confirm_token" in caught.value.arguments
    assert seen_per_page >= 10 and seen_token == 34


def test_a_made_up_confirm_token_says_how_to_get_a_real_one() -> None:
    # The listed schema carries no description for it: a model that guesses a token reads only this.
    message = _refusal("delete_pipeline", {"repo_id": 1, "number": 2, "confirm_token": "yes"})
    assert "without confirm_token" in message and "pattern" not in message, message


def test_defaults_are_applied_and_keys_come_in_catalogue_order() -> None:
    args = validate(WOODPECKER_TOOLS.get("list_pipelines"), {"per_page": 5, "repo_id": 3})
    assert args == {"repo_id": 3, "page": 1, "per_page": 5}
    assert list(args) == ["repo_id", "page", "per_page"]


def test_none_means_no_arguments() -> None:
    assert validate(WOODPECKER_TOOLS.get("get_current_user"), None) == {}


def test_list_repositories_defaults_to_account_scope_without_paging() -> None:
    assert validate(WOODPECKER_TOOLS.get("list_repositories"), {}) == {
        "scope": "account",
        "include_inactive": False,
    }
    assert validate(WOODPECKER_TOOLS.get("list_repositories"), {"scope": "instance"}) == {
        "scope": "instance",
        "page": 1,
        "per_page": 50,
    }


def test_page_with_account_scope_is_refused_naming_its_scope() -> None:
    message = _refusal("list_repositories", {"page": 2})
    assert "page" in message and "scope is 'instance'" in message and "account" in message


def test_name_with_instance_scope_is_refused_naming_its_scope() -> None:
    message = _refusal("list_repositories", {"scope": "instance", "name": "web"})
    assert "name applies only when scope is 'account'" in message


def test_repo_id_is_required_at_repository_scope() -> None:
    message = _refusal("get_secret", {"scope": "repository", "name": "token"})
    assert "repo_id is required when scope is 'repository'" in message


def test_an_id_of_another_scope_is_refused_rather_than_ignored() -> None:
    message = _refusal("delete_secret", {"scope": "global", "name": "x", "org_id": 4})
    assert "org_id" in message and "organization" in message


def test_deploy_to_needs_the_deployment_event() -> None:
    assert "deploy_to" in _refusal("restart_pipeline", {"repo_id": 1, "number": 2, "deploy_to": "prod"})
    ok = validate(
        WOODPECKER_TOOLS.get("restart_pipeline"),
        {"repo_id": 1, "number": 2, "event": "deployment", "deploy_to": "prod"},
    )
    assert ok["deploy_to"] == "prod"


def test_a_boolean_is_not_an_integer() -> None:
    assert "repo_id must be an integer, got a boolean" in _refusal("get_repository", {"repo_id": True})


def test_an_integral_float_is_the_integer() -> None:
    assert validate(WOODPECKER_TOOLS.get("get_repository"), {"repo_id": 7.0}) == {"repo_id": 7}
    assert "repo_id" in _refusal("get_repository", {"repo_id": 7.5})


def test_null_is_a_wrong_type_not_an_omission() -> None:
    assert "got null" in _refusal("get_repository", {"repo_id": None})


def test_unknown_arguments_are_named_with_a_suggestion() -> None:
    message = _refusal("get_repository", {"repo_id": 1, "repoid": 1})
    assert '"repoid"' in message and "did you mean repo_id" in message


def test_missing_required_arguments_are_named() -> None:
    assert "missing required argument repo_id" in _refusal("get_pipeline", {"number": 1})


def test_out_of_range_numbers_state_the_bounds() -> None:
    assert "per_page must be between 1 and 50, got 51" in _refusal("list_users", {"per_page": 51})


def test_unknown_choices_list_the_valid_ones() -> None:
    message = _refusal("set_log_level", {"level": "verbose"})
    assert "level must be one of trace, debug" in message and '"verbose"' in message


def test_huge_values_are_never_echoed() -> None:
    huge = "x" * 100_000
    message = _refusal("lookup_repository", {"full_name": huge, huge: 1})
    assert len(message) < 1_000
    assert "too long: 100000 characters, at most 200" in message


def test_a_pattern_refusal_says_what_was_expected() -> None:
    message = _refusal("lookup_repository", {"full_name": "no-slash"})
    assert "full_name" in message and "owner/name" in message


def test_a_trailing_newline_does_not_slip_past_an_anchored_pattern() -> None:
    assert "login does not have the expected form" in _refusal(
        "get_user", {"login": "alice\n", "forge_id": 1}
    )


def test_date_times_must_be_rfc_3339() -> None:
    tool = WOODPECKER_TOOLS.get("list_pipelines")
    assert validate(tool, {"repo_id": 1, "after": "2026-08-01T12:00:00+02:00"})["after"]
    for bad in ("2026-08-01", "2026-13-01T00:00:00Z", "yesterday", "2026-08-01 12:00:00Z"):
        assert "RFC 3339" in _refusal("list_pipelines", {"repo_id": 1, "after": bad})


def test_forge_urls_must_be_http_or_https() -> None:
    assert "url" in _refusal("update_forge", {"forge_id": 1, "url": "file:///etc/passwd"})
    assert "url" in _refusal("update_forge", {"forge_id": 1, "url": "https://"})


def test_arrays_check_items_uniqueness_and_bounds() -> None:
    base = {"scope": "global", "name": "s", "value": "v"}
    assert "at least 1 item" in _refusal("create_secret", {**base, "events": []})
    assert "twice" in _refusal("create_secret", {**base, "events": ["push", "push"]})
    assert "item 1" in _refusal("create_secret", {**base, "events": ["push", "nope"]})


def test_objects_check_keys_and_values() -> None:
    base = {"repo_id": 1, "branch": "main"}
    assert "key" in _refusal("trigger_pipeline", {**base, "variables": {"": "x"}})
    assert "value of key" in _refusal("trigger_pipeline", {**base, "variables": {"A": 1}})
    ok = validate(WOODPECKER_TOOLS.get("trigger_pipeline"), {**base, "variables": {"A": "1"}})
    assert ok["variables"] == {"A": "1"}


def test_arguments_that_are_not_an_object_are_refused() -> None:
    assert "JSON object" in _refusal("get_current_user", ["a"])


def test_several_problems_are_reported_together_but_bounded() -> None:
    message = _refusal("create_cron", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6})
    assert "more" in message and message.count("unknown argument") == 4


def test_absurdly_deep_values_are_refused_without_crashing() -> None:
    deep: Any = "x"
    for _ in range(5_000):
        deep = [deep]
    message = _refusal("trigger_pipeline", {"repo_id": 1, "branch": "main", "variables": {"A": deep}})
    assert "variables" in message and len(message) < 1_000
    assert "an array of 100000 entries" in _refusal("get_repository", {"repo_id": list(range(100_000))})


SENSITIVE = [(t, p) for t in WOODPECKER_TOOLS for p in t.params if p.sensitive]


def test_exactly_the_secret_bearing_parameters_are_sensitive() -> None:
    assert {p.name for _, p in SENSITIVE} == {"value", "password", "oauth_client_secret", "confirm_token"}
    for tool in WOODPECKER_TOOLS:
        for param in tool.params:
            if param.name in {"value", "password", "oauth_client_secret", "confirm_token"}:
                assert param.sensitive, (tool.name, param.name)


@pytest.mark.parametrize(("tool", "param"), SENSITIVE, ids=lambda x: getattr(x, "name", ""))
@pytest.mark.parametrize("wrong", [["canary-s3cret"], {"k": "canary-s3cret"}, 4242424242, "CANARY-S3CRET"])
def test_a_refused_sensitive_value_is_never_echoed(tool: ToolSpec, param: Param, wrong: object) -> None:
    with pytest.raises(ArgumentError) as caught:
        validate(tool, {param.name: wrong})
    message = str(caught.value).lower()
    assert "canary" not in message and "4242424242" not in message, message
