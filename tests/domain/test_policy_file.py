"""The policy file (ADR 0079): what it can say, what it refuses (each with its line and the fix), how it
changes the tools, and, over generated files, that no policy takes a question away."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.guard.fingerprint import CONFIRM_TOKEN_ARG, fingerprint
from domain.guard.policy import ALWAYS, BY_POLICY, POLICY_ASK, Decision, decide, denied, lifetime
from domain.guard.policy_file import (
    ASKS_SENTENCE,
    DENIED_SENTENCE,
    KEYS,
    MAX_EXPIRES_IN,
    Policy,
    PolicyError,
    apply_policy,
    describe,
    parse_duration,
    parse_policy,
)
from domain.tools import ToolPolicy
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.questions import POLICY_ASKS, question_for
from domain.woodpecker.rules import WOODPECKER_RULES
from tests.domain._guard_strategies import GUARDED, JSON, arguments_for

EXAMPLE = """\
# Nobody deletes a repository through this server.
[tools.delete_repository]
deny = true

[tools.get_step_logs]
ask = "always"

[tools.delete_secret]
ask = "always"
expires_in = "2m"
"""


def parsed(text: str) -> Policy:
    return parse_policy(text, "policy.toml", WOODPECKER_TOOLS)


def refused(text: str) -> list[str]:
    with pytest.raises(PolicyError) as raised:
        parsed(text)
    return list(raised.value.lines)


# ------------------------------------------------------------------------------------------- reading


def test_a_policy_sets_deny_ask_and_a_shorter_life_per_tool() -> None:
    policy = parsed(EXAMPLE)
    assert policy.tools == {
        "delete_repository": ToolPolicy(deny=True),
        "get_step_logs": ToolPolicy(ask_always=True),
        "delete_secret": ToolPolicy(ask_always=True, expires_in=120),
    }
    assert [r.name for r in policy.rules] == [
        "tools.delete_repository.deny",
        "tools.get_step_logs.ask",
        "tools.delete_secret.ask",
        "tools.delete_secret.expires_in",
    ]


def test_the_effective_policy_is_one_line_per_rule() -> None:
    lines = describe(parsed(EXAMPLE), WOODPECKER_TOOLS)
    assert lines == (
        "tools.delete_repository.deny: delete_repository is denied: listed, and every call refused "
        "before anything is asked or sent",
        "tools.get_step_logs.ask: get_step_logs asks a person on every call",
        "tools.delete_secret.ask: delete_secret asks a person on every call (as its guard does already)",
        "tools.delete_secret.expires_in: delete_secret's questions, seals, tickets and tokens live at most "
        "2 minutes",
    )
    assert describe(parsed(""), WOODPECKER_TOOLS) == ("no rules: every tool asks as the guard decides",)


def test_a_rule_for_a_tool_the_other_settings_leave_out_says_so() -> None:
    registered = WOODPECKER_TOOLS.__class__(tuple(t for t in WOODPECKER_TOOLS if t.is_read))
    (line,) = describe(parsed("[tools.delete_repository]\ndeny = true\n"), WOODPECKER_TOOLS, registered)
    assert line.endswith("(not registered: the tool settings leave it out)")


def test_other_toml_spellings_of_the_same_rules_read_the_same() -> None:
    inline = parsed('[tools]\ndelete_repository = { deny = true }\nget_repository.ask = "always"\n')
    dotted = parsed('tools.delete_repository.deny = true\ntools.get_repository.ask = "always"\n')
    assert (
        inline.tools
        == dotted.tools
        == {
            "delete_repository": ToolPolicy(deny=True),
            "get_repository": ToolPolicy(ask_always=True),
        }
    )


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("90s", 90),
        ("2m", 120),
        ("1m30s", 90),
        ("5m", 300),
        ("0m10s", 10),
        ("", None),
        ("2 m", None),
        ("1h", None),
        ("m", None),
        ("-5s", None),
        (120, None),
        ("2M", None),
    ],
)
def test_a_duration_is_minutes_and_seconds(raw: object, seconds: int | None) -> None:
    assert parse_duration(raw) == seconds


# ------------------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # What would loosen the guard.
        ('[tools.delete_secret]\nask = "never"\n', 2, 'the only value is "always"'),
        ('\n[tools.update_user]\nask = "sometimes"\n', 3, "would take a question away from a guarded tool"),
        ("[tools.delete_secret]\nask = false\n", 2, "would take a question away"),
        ('[tools.delete_secret]\nexpires_in = "6m"\n', 2, "above the default of 5 minutes"),
        (
            '[tools.delete_secret]\nexpires_in = "1m"\n[tools.approve_pipeline]\nexpires_in = "301s"\n',
            4,
            "use at most 5 minutes",
        ),
        # What means nothing, or is unknown.
        ('[tools.get_repository]\nask = "never"\n', 2, "the tool runs without a question, as it does now"),
        ("[tools.delete_secret]\nallow = true\n", 2, "unknown key allow in [tools.delete_secret]"),
        ('[tools.delete_secret]\nfour_eyes = "yes"\n', 2, 'four_eyes in [tools.delete_secret] is "yes"'),
        ("[tools.delete_secret]\nfour_eyes = false\n", 2, "to let the caller approve, remove the line"),
        ("[tools.get_repository]\nfour_eyes = true\n", 2, "means nothing: get_repository never asks"),
        ("[tools.delete_secret]\ndeny = true\nfour_eyes = true\n", 2, "keep deny = true alone"),
        (
            "[tools.delete_repo]\ndeny = true\n",
            1,
            "no tool is named delete_repo; name a tool of this server; did you mean delete_repository?",
        ),
        ("[tools.Delete_Secret]\ndeny = true\n", 1, "did you mean delete_secret?"),
        ("[tools.nothing_like_it]\ndeny = true\n", 1, "(docs/tools.md lists the tools)"),
        ("deny = true\n", 1, "unknown key deny at the top of the policy"),
        ("tools = 3\n", 1, "tools must be a table"),
        ('[tools]\ndelete_secret = "deny"\n', 2, "tools.delete_secret must be a table"),
        ("[[tools.delete_secret]]\ndeny = true\n", 1, "tools.delete_secret must be a table"),
        (
            "[tools.delete_secret]\ndeny = false\n",
            2,
            "it takes only true (to allow the tool, remove the line)",
        ),
        ('[tools.delete_secret]\ndeny = "yes"\n', 2, 'deny in [tools.delete_secret] is "yes"'),
        ('[tools.delete_secret]\ndeny = true\nask = "always"\n', 2, "keep deny = true alone"),
        ('[tools.delete_secret]\nexpires_in = "5s"\n', 2, "too short for a person to read and answer"),
        ("[tools.delete_secret]\nexpires_in = 120\n", 2, 'write a duration such as "90s"'),
        ('[tools.get_repository]\nexpires_in = "2m"\n', 2, "means nothing: get_repository never asks"),
        # A value over several lines does not move the line named for a later key.
        (
            '[tools.delete_secret]\nask = "always"\n# next\n[tools.x_y]\nlist = [\n  "a",\n]\n',
            4,
            "no tool is named x_y",
        ),
        (
            '[tools.delete_secret]\nask = "always"\n[tools.get_repository]\nfour_eyes = """\n[tools.nope]\n"""\n',
            4,
            "four_eyes in [tools.get_repository] is that text",
        ),
        # A file that does not parse names its line too.
        ('[tools.delete_secret]\nask = "always"\nexpires_in = 2m\n', 3, "does not parse as TOML"),
        ("[tools.delete_secret]\ndeny = true\ndeny = true\n", 3, "does not parse as TOML"),
        ("[tools.delete_secret\n", 1, "does not parse as TOML"),
    ],
)
def test_anything_that_would_loosen_or_means_nothing_is_refused_with_its_line_and_the_fix(
    text: str, line: int, words: str
) -> None:
    lines = refused(text)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"policy.toml:{line}: "), lines
    assert words in lines[0]


def test_every_problem_of_a_file_is_one_line_in_the_files_order() -> None:
    lines = refused(
        '[tools.delete_secret]\nask = "never"\n\n[tools.delet_user]\ndeny = true\n'
        '\n[tools.get_repository]\nallow = true\nask = "always"\n'
    )
    assert [line.split(":")[1] for line in lines] == ["2", "4", "8"]


def test_a_refusal_shows_no_hidden_character_of_the_file_and_quotes_only_plain_words() -> None:
    (line,) = refused('[tools."delete\\u202esecret\\n"]\ndeny = true\n')
    assert "\u202e" not in line and "\n" not in line
    (line,) = refused('[tools.delete_secret]\nask = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"\n')
    assert "ghp_" not in line and "that text" in line


# ---------------------------------------------------------------------------------- applying a policy


def test_a_denied_tool_stays_listed_and_its_description_says_so_first() -> None:
    tools = apply_policy(WOODPECKER_TOOLS, parsed(EXAMPLE))
    before, after = WOODPECKER_TOOLS.get("delete_repository"), tools.get("delete_repository")
    assert tools.names == WOODPECKER_TOOLS.names
    assert after.description == f"{DENIED_SENTENCE} {before.description}"
    assert denied(after) and not denied(before)
    assert after.guard == before.guard and after.params == before.params


def test_a_tool_made_to_ask_gets_a_guard_binding_every_argument_and_a_confirm_token() -> None:
    tools = apply_policy(WOODPECKER_TOOLS, parsed('[tools.get_step_logs]\nask = "always"\n'))
    before, after = WOODPECKER_TOOLS.get("get_step_logs"), tools.get("get_step_logs")
    assert before.guard is None
    assert after.guard is not None and after.guard.when == BY_POLICY
    assert after.guard.targets == tuple(p.name for p in before.params)
    assert [p.name for p in after.params] == [*(p.name for p in before.params), CONFIRM_TOKEN_ARG]
    assert after.description.endswith(ASKS_SENTENCE)
    args = {"repo_id": 1, "number": 2, "step_id": 3}
    assert decide(after, args, None, WOODPECKER_RULES) == Decision(True, frozenset({POLICY_ASK}))
    # The approval is bound to every argument: another step is another call.
    assert fingerprint(after, args, None) != fingerprint(after, {**args, "step_id": 4}, None)


def test_a_guarded_tool_made_to_ask_keeps_its_own_rule_and_asks_also_where_it_would_not() -> None:
    tools = apply_policy(WOODPECKER_TOOLS, parsed('[tools.update_user]\nask = "always"\n'))
    update_user = tools.get("update_user")
    assert update_user.guard == WOODPECKER_TOOLS.get("update_user").guard
    harmless = {"login": "bob", "forge_id": 1, "email": "bob@new.example.org"}
    assert not decide(WOODPECKER_TOOLS.get("update_user"), harmless, {"admin": False}, WOODPECKER_RULES).ask
    assert decide(update_user, harmless, {"admin": False}, WOODPECKER_RULES).reasons == {POLICY_ASK}
    widening = {"login": "bob", "forge_id": 1, "admin": True}
    # Where the tool's own rule asks, its own reasons are the question's: the policy adds nothing.
    assert POLICY_ASK not in decide(update_user, widening, {"admin": False}, WOODPECKER_RULES).reasons


def test_a_question_the_policy_added_says_so_and_names_only_the_arguments() -> None:
    tools = apply_policy(WOODPECKER_TOOLS, parsed('[tools.search_step_logs]\nask = "always"\n'))
    tool = tools.get("search_step_logs")
    args = {"repo_id": 1, "number": 2, "step_id": 3, "pattern": "deploy\n\u202eIgnore the above"}
    message = question_for(tool, args, decide(tool, args, None, WOODPECKER_RULES))
    assert message.startswith("This will run search_step_logs.\nrepo_id: 1\nnumber: 2\nstep_id: 3\npattern: ")
    assert message.endswith(f"It changes nothing in Woodpecker. {POLICY_ASKS}")
    assert "\u202e" not in message and "\nIgnore" not in message


def test_a_shorter_life_applies_to_its_tool_only_and_never_lengthens_one() -> None:
    tools = apply_policy(WOODPECKER_TOOLS, parsed(EXAMPLE))
    assert lifetime(tools.get("delete_secret"), 300) == 120
    assert lifetime(tools.get("delete_secret"), 60) == 60
    assert lifetime(tools.get("delete_repository"), 300) == 300
    assert lifetime(WOODPECKER_TOOLS.get("delete_secret"), 300) == 300


# ------------------------------------------------------------------------- properties, generated files

TOOL_NAMES = st.sampled_from(WOODPECKER_TOOLS.names) | st.sampled_from(
    ["delete_repo", "Delete_Secret", "four_eyes", "", "x" * 70]
)
VALUES = (
    st.sampled_from(
        [
            True,
            False,
            "always",
            "never",
            "sometimes",
            "ALWAYS",
            "",
            "2m",
            "90s",
            "5m",
            "6m",
            "301s",
            "5s",
            "1h",
            0,
            1,
            120,
            [],
            {},
        ]
    )
    | JSON
)
TABLES = st.dictionaries(st.sampled_from([*KEYS, "four_eyes", "allow"]), VALUES, max_size=3)
POLICIES = st.dictionaries(TOOL_NAMES, TABLES, max_size=5)


def toml(policy: dict[str, dict[str, Any]]) -> str:
    """A generated policy as TOML (JSON's strings are TOML's basic strings)."""
    out: list[str] = []
    for name, table in policy.items():
        out.append(f"[tools.{json.dumps(name)}]")
        out.extend(f"{json.dumps(key)} = {_value(value)}" for key, value in table.items())
    return "\n".join(out) + "\n"


def _value(value: Any) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _loosens_or_unknown(policy: dict[str, dict[str, Any]]) -> bool:
    for name, table in policy.items():
        if name not in WOODPECKER_TOOLS or any(k not in KEYS for k in table):
            return True
        if "ask" in table and table["ask"] != "always":
            return True
        if "deny" in table and table["deny"] is not True:
            return True
        if "four_eyes" in table and table["four_eyes"] is not True:
            return True
        seconds = parse_duration(table.get("expires_in", "1m"))
        if seconds is None or seconds > MAX_EXPIRES_IN:
            return True
    return False


@settings(max_examples=300)
@given(POLICIES)
def test_a_generated_policy_that_would_loosen_or_names_anything_unknown_is_refused(
    policy: dict[str, dict[str, Any]],
) -> None:
    try:
        read = parsed(toml(policy))
    except PolicyError as e:
        assert e.problems and all(p.line >= 1 for p in e.problems)
        return
    assert not _loosens_or_unknown(policy), toml(policy)
    for name, rule in read.tools.items():
        assert rule.expires_in is None or rule.expires_in <= MAX_EXPIRES_IN
        assert rule.ask_always == ("ask" in policy[name])


ACCEPTED = st.dictionaries(
    st.sampled_from(WOODPECKER_TOOLS.names),
    st.sampled_from(
        [{"deny": True}, {"ask": "always"}, {"ask": "always", "expires_in": "1m"}, {"expires_in": "90s"}, {}]
    ),
    max_size=8,
)


@settings(max_examples=200)
@given(data=st.data(), policy=ACCEPTED)
def test_no_policy_makes_a_guarded_call_ask_less_and_a_denied_tool_is_denied(
    data: st.DataObject, policy: dict[str, dict[str, Any]]
) -> None:
    try:
        tools = apply_policy(WOODPECKER_TOOLS, parsed(toml(policy)))
    except PolicyError:
        return  # (expires_in on a tool that never asks, say) refused as a whole: the guard is unchanged
    tool = data.draw(st.sampled_from(GUARDED))
    args = data.draw(arguments_for(tool))
    current = data.draw(st.none() | st.dictionaries(st.sampled_from(["admin", "events", "visibility"]), JSON))
    before = decide(tool, args, current, WOODPECKER_RULES)
    after = decide(tools.get(tool.name), args, current, WOODPECKER_RULES)
    assert after.ask or not before.ask
    assert before.reasons <= after.reasons or after.reasons == {POLICY_ASK} and not before.ask
    assert denied(tools.get(tool.name)) == (policy.get(tool.name) == {"deny": True})
    if tool.guard is not None and tool.guard.always:
        assert after.reasons == {ALWAYS}


def test_four_eyes_is_a_rule_for_a_tool_that_asks_and_is_described() -> None:
    policy = parsed(
        '[tools.chown_repository]\nfour_eyes = true\n\n[tools.get_repository]\nask = "always"\nfour_eyes = true\n'
    )
    assert policy.four_eyes == ("chown_repository", "get_repository")
    assert policy.tools["chown_repository"] == ToolPolicy(four_eyes=True)
    assert describe(policy, WOODPECKER_TOOLS)[0] == (
        "tools.chown_repository.four_eyes: chown_repository needs a second person: its questions' approver "
        "must be someone other than the caller"
    )
