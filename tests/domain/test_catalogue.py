"""The domain catalogue agrees with the shared specification on everything others depend on."""

import json
from pathlib import Path

import pytest

from domain.woodpecker.catalogue import ADDED_PARAMS, ADDED_TOOLS, WOODPECKER_TOOLS
from tests.contract_data import CATALOGUE, CATALOGUE_BEYOND


@pytest.fixture(scope="module")
def shared() -> dict[str, dict]:
    tools = {t["name"]: t for t in json.loads(CATALOGUE.read_text())["tools"]}
    # guard.md §1b: the product's catalogue is catalogue.json with these entries replaced whole.
    replaced = {t["name"]: t for t in json.loads(CATALOGUE_BEYOND.read_text())["tools"]}
    assert set(replaced) <= set(tools)
    combined = {name: replaced.get(name, tool) for name, tool in tools.items()}
    # guard.md §1c, which the vendored catalogues predate: these guards, and the token argument of a
    # tool that asks now, replace the entries' own (ADR 0044).
    for name, guard in GUARDS_1C.items():
        entry = combined[name] = dict(combined[name], guard=guard)
        if not any(p["name"] == "confirm_token" for p in entry["params"]):
            token = next(p for p in combined["update_registry"]["params"] if p["name"] == "confirm_token")
            entry["params"] = [*entry["params"], token]
    return combined


_SCOPED = ["scope", "repo_id", "org_id"]
GUARDS_1C: dict[str, dict] = {
    "create_secret": {
        "when": "pull_request_events_or_shadows",
        "targets": [*_SCOPED, "name"],
        "body_bound": True,
        "needs_current_state": True,
    },
    "create_registry": {
        "when": "new_password",
        "targets": [*_SCOPED, "address"],
        "body_bound": True,
        "needs_current_state": False,
    },
    "update_agent": {
        "when": "undrains",
        "targets": ["agent_id", "org_id"],
        "body_bound": True,
        "needs_current_state": True,
    },
}


# The documented additions beyond the shared catalogue, by name: anything else that differs from it fails.
ADDITIONS = {
    "search_step_logs",
    "get_pipeline_failure_summary",
    "resolve",
    "wait_for_pipeline",
    "get_signature_public_key",
    "analyze_pipeline_history",
    "validate_pipeline_config",
}
# Our additions that send nothing to Woodpecker: their world is closed (openWorldHint false).
CLOSED_WORLD = {"validate_pipeline_config"}
# guard.md §1c (review of 2026-12-02) guards four tools the shared catalogue leaves unguarded: their
# guards, by condition, and the confirm_token each then takes, after its own parameters.
GUARDED_BEYOND_SHARED = {
    "trigger_pipeline": "starts_past_approval",
    "create_cron": "starts_past_approval",
    "update_cron": "moves_cron_past_approval",
    "run_cron": "starts_past_approval",
}
ADDED_PARAMETERS = {
    "get_step_logs": ["from_line", "to_line"],
    **{name: ["confirm_token"] for name in GUARDED_BEYOND_SHARED},
}
SHARED_TOOLS = [t for t in WOODPECKER_TOOLS if t.name not in ADDITIONS]


def test_counts_are_the_products_contract() -> None:
    tools = list(WOODPECKER_TOOLS)
    assert len(tools) == 78 and len(SHARED_TOOLS) == 71
    assert sum(t.kind == "read" for t in tools) == 41
    assert sum(t.kind == "write" for t in tools) == 37
    assert sum(t.guarded for t in tools) == 34
    assert sum(t.guarded and t.guard.always for t in tools if t.guard) == 19
    # The shared 8, and four of our additions: the failure summary, log search, resolve and wait
    # (issue 36: the small preset keeps the tools that answer "why did my build fail?").
    assert sum(t.essential for t in tools) == 12
    assert sum(t.essential for t in tools if t.name in {s.name for s in SHARED_TOOLS}) == 8


def test_the_combined_shared_catalogue_has_the_same_counts(shared: dict[str, dict]) -> None:
    guarded = [t for t in shared.values() if t["guard"]]
    assert len(guarded) == 30 == 34 - len(GUARDED_BEYOND_SHARED)
    assert sum(t["guard"]["when"] == "always" for t in guarded) == 19
    assert not any(shared[name]["guard"] for name in GUARDED_BEYOND_SHARED)


def test_every_guarded_tool_takes_a_confirm_token_and_no_other_tool_does() -> None:
    for tool in WOODPECKER_TOOLS:
        assert ("confirm_token" in {p.name for p in tool.params}) == tool.guarded, tool.name


def test_the_additions_are_the_documented_ones_and_only_read() -> None:
    assert {t.name for t in ADDED_TOOLS} == ADDITIONS
    assert {name: [p.name for p in ps] for name, ps in ADDED_PARAMS.items()} == {
        name: params for name, params in ADDED_PARAMETERS.items() if name not in GUARDED_BEYOND_SHARED
    }
    for name in ADDITIONS:
        tool = WOODPECKER_TOOLS.get(name)
        assert tool.kind == "read" and tool.guard is None and tool.untrusted_output, name
        assert (tool.annotations.read_only, tool.annotations.destructive) == (True, False), name
        assert (tool.annotations.idempotent, tool.annotations.open_world) == (
            True,
            name not in CLOSED_WORLD,
        ), name
    for name, params in ADDED_PARAMETERS.items():
        added = [p for p in WOODPECKER_TOOLS.get(name).params if p.name in params]
        assert added and not any(p.required for p in added), name


def test_names_kinds_annotations_and_guards_match_the_shared_catalogue(shared: dict[str, dict]) -> None:
    assert [t.name for t in SHARED_TOOLS] == list(shared)
    for tool in SHARED_TOOLS:
        spec = shared[tool.name]
        assert tool.kind == spec["kind"], tool.name
        assert tool.group == spec["group"], tool.name
        assert tool.essential == spec["essential"], tool.name
        a = spec["annotations"]
        assert (
            tool.annotations.read_only,
            tool.annotations.destructive,
            tool.annotations.idempotent,
            tool.annotations.open_world,
        ) == (a["readOnlyHint"], a["destructiveHint"], a["idempotentHint"], a["openWorldHint"]), tool.name
        g = spec["guard"]
        if tool.name in GUARDED_BEYOND_SHARED:
            assert g is None and tool.guard is not None, tool.name
            assert tool.guard.when == GUARDED_BEYOND_SHARED[tool.name] and tool.guard.needs_current_state
        elif g is None:
            assert tool.guard is None, tool.name
        else:
            assert tool.guard is not None, tool.name
            assert tool.guard.when == g["when"], tool.name
            assert tool.guard.targets == tuple(g["targets"]), tool.name
            assert tool.guard.body_bound == g["body_bound"], tool.name
            assert tool.guard.needs_current_state == g["needs_current_state"], tool.name


def test_parameters_match_the_shared_catalogue(shared: dict[str, dict]) -> None:
    for tool in SHARED_TOOLS:
        spec = shared[tool.name]
        own = [p for p in tool.params if p.name not in ADDED_PARAMETERS.get(tool.name, [])]
        expected = [p["name"] for p in spec["params"]]
        assert [p.name for p in tool.params] == expected + ADDED_PARAMETERS.get(tool.name, []), tool.name
        for ours, theirs in zip(own, spec["params"], strict=True):
            assert ours.required == theirs["required"], (tool.name, ours.name)
            if isinstance(theirs["type"], list):
                assert ours.choices == tuple(theirs["type"]), (tool.name, ours.name)
            else:
                assert ours.type == theirs["type"], (tool.name, ours.name)


def test_every_form_rule_matches_the_shared_catalogue(shared: dict[str, dict]) -> None:
    # Patterns (dot segments, reserved variable names, git's ref rules, plain names, subgroup paths,
    # Bitbucket's {uuid} ids) and conditions, exactly as the shared catalogue writes them.
    for tool in SHARED_TOOLS:
        theirs = {p["name"]: p["constraints"] for p in shared[tool.name]["params"]}
        for param in (p for p in tool.params if p.name in theirs):  # our additions have no shared form
            for key in ("pattern", "propertyNames"):
                assert param.constraints.get(key) == theirs[param.name].get(key), (tool.name, param.name, key)
            # Our conditions are typed; rendered, they are the shared catalogue's words.
            for key, when in (("only_when", param.only_when), ("required_when", param.required_when)):
                assert (None if when is None else str(when)) == theirs[param.name].get(key), (tool.name, key)


# ------------------------------------------------------------------------------------ descriptions
# The model chooses tools by their descriptions alone, so the facts it needs to choose safely are
# pinned here: a rewording may change the words, not drop the fact.

STARTS_A_BUILD = ("trigger_pipeline", "restart_pipeline", "run_cron")

# For each tool that asks only under a condition: words that must name the condition in the very
# sentence that says it asks.
ASKS_WHEN = {
    "repair_repository": ("scope=instance",),
    "update_repository": ("trusted_*", "require_approval", "visibility", "allow_deploy", "allow_pr"),
    "restart_pipeline": ("event=deployment", "declined", "approval"),
    "activate_repository": ("already holds a record",),
    "create_secret": ("pull-request event", "wider level"),
    "create_registry": ("password",),
    "update_agent": ("drained",),
    "update_secret": ("new value", "pull-request event", "image list", "manual or cron"),
    "trigger_pipeline": ("variables", "blocked", "declined", "unapproved"),
    "create_cron": ("blocked", "declined", "unapproved"),
    "update_cron": ("new branch", "re-enabling", "blocked", "declined", "unapproved"),
    "run_cron": ("its branch", "blocked", "declined", "unapproved"),
    "update_registry": ("password",),
    "update_user": ("admin=true",),
    "set_log_level": ("fatal", "panic", "disabled"),
}

# Tools that handle a secret value, a registry password or a forge's OAuth secret.
HOLDS_SECRET_MATERIAL = (
    "list_secrets",
    "get_secret",
    "create_secret",
    "update_secret",
    "list_registries",
    "get_registry",
    "create_registry",
    "update_registry",
    "list_forges",
    "get_forge",
    "create_forge",
    "update_forge",
)


def _sentences_that_ask(description: str) -> list[str]:
    return [s for s in description.split(". ") if "asks a person" in s.lower()]


@pytest.mark.parametrize("name", STARTS_A_BUILD)
def test_tools_that_start_a_build_say_that_a_repeat_starts_another_run(name: str) -> None:
    tool = WOODPECKER_TOOLS.get(name)
    assert "Not idempotent: every call, a repeat" in tool.description, name
    assert "starts another run" in tool.description, name
    assert tool.annotations.idempotent is False, name
    # Each asks only when it would go around an approval (guard.md §1b, §1c), or a trigger sets variables.
    assert tool.guard is not None and not tool.guard.always, name


def test_move_repository_warns_that_a_retry_on_3_11_moves_twice() -> None:
    text = WOODPECKER_TOOLS.get("move_repository").description
    for fact in ("3.11", "HTTP 500", "twice", "get_repository", "3.18"):
        assert fact in text, fact


def test_every_guarded_tool_says_that_it_asks_a_person_and_when() -> None:
    assert {t.name for t in WOODPECKER_TOOLS if t.guard and not t.guard.always} == set(ASKS_WHEN)
    for tool in WOODPECKER_TOOLS:
        asking = _sentences_that_ask(tool.description)
        if tool.guard is None:
            assert not asking, f"{tool.name} never asks but says it does"
        elif tool.guard.always:
            assert any("always" in s.lower() for s in asking), tool.name
        else:
            assert len(asking) == 1, tool.name
            for word in ASKS_WHEN[tool.name]:
                assert word in asking[0], (tool.name, word)


# Parameters whose name, type, enum and listed bounds say all a model needs (docs/adr/0029): the
# tool list is cheaper without a sentence that repeats them. Every other parameter is described.
UNDESCRIBED = {
    "page",
    "per_page",
    "scope",
    "confirm_token",
    "branch",
    "event",
    "before",
    "after",
    "limit",
    "from",
    "ignore_case",
    "max_matches",
    "note",
    "username",
    "password",
    "enabled",
    "email",
    "name",
    "type",
    "url",
    "oauth_client_secret",
    "skip_verify",
    "level",
}


def test_every_tool_and_parameter_has_a_concise_description() -> None:
    for tool in WOODPECKER_TOOLS:
        assert tool.description.strip(), tool.name
        assert len(tool.description) <= 200, (tool.name, len(tool.description))
        for param in tool.params:
            assert param.description.strip() or param.name in UNDESCRIBED, (tool.name, param.name)
            assert len(param.description) <= 120, (tool.name, param.name)


@pytest.mark.parametrize("name", HOLDS_SECRET_MATERIAL)
def test_tools_near_secret_material_say_it_is_never_returned(name: str) -> None:
    assert "never returned" in WOODPECKER_TOOLS.get(name).description


def test_tools_that_need_an_instance_admin_say_so() -> None:
    for tool in WOODPECKER_TOOLS:
        if tool.admin != "never":
            assert "instance admin" in tool.description.lower(), tool.name


# Tools beyond catalogue.json, each documented, registered only where they make sense: additions,
# never changes (the 71 keep their names, parameters and annotations).
DOCUMENTED_ADDITIONS = {
    "get_woodpecker_link": "docs/oauth.md",
    "unlink_woodpecker_token": "docs/oauth.md",
}


def test_the_documented_additions_are_not_in_the_shared_catalogue_and_are_documented(
    shared: dict[str, dict],
) -> None:
    from adapters.mcp_server import ACCOUNT_TOOL_NAMES

    assert set(DOCUMENTED_ADDITIONS) == set(ACCOUNT_TOOL_NAMES)
    root = Path(__file__).resolve().parents[2]
    for name, doc in DOCUMENTED_ADDITIONS.items():
        assert name not in shared
        assert f"`{name}`" in (root / doc).read_text(encoding="utf-8")
