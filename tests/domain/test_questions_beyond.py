"""guard.md §2 [beyond]: a body-bound question lists every field the call sets, with its new value where
that is safe to show; and the questions of §1b's tools say what they open up."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.arguments import validate
from domain.guard.fingerprint import body_of
from domain.guard.policy import decide
from domain.tools import ToolSpec
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.catalogue.secrets import IMAGE_PATTERN
from domain.woodpecker.questions import question_for
from domain.woodpecker.rules import WOODPECKER_RULES
from tests.domain._guard_strategies import GUARDED, arguments_for

BODY_BOUND = [t for t in GUARDED if t.guard is not None and t.guard.body_bound]
SECRET = "s3cr3t-never-shown"


def _question(tool: str, args: dict[str, Any], current: Any = None) -> str:
    spec = WOODPECKER_TOOLS.get(tool)
    return question_for(spec, args, decide(spec, args, current, WOODPECKER_RULES))


@settings(max_examples=150)
@given(st.sampled_from(BODY_BOUND).flatmap(lambda t: st.tuples(st.just(t), arguments_for(t))))
def test_every_field_a_body_bound_call_sets_has_its_own_labelled_line(
    call: tuple[ToolSpec, dict[str, Any]],
) -> None:
    tool, args = call
    head = question_for(tool, args, decide(tool, args, None, WOODPECKER_RULES)).partition("\n\n")[0]
    lines = head.split("\n")
    for name in body_of(tool, args):
        assert sum(line.startswith(f"New {name}: ") for line in lines) == 1, (tool.name, name, head)


@pytest.mark.parametrize(
    ("tool", "args", "shown"),
    [
        (
            "update_forge",
            {"forge_id": 1, "url": "https://evil.example.org"},
            "New url: https://evil.example.org",
        ),
        ("update_forge", {"forge_id": 1, "skip_verify": False}, "New skip_verify: false"),
        ("update_forge", {"forge_id": 1, "client": "abc"}, "New client: abc"),
        (
            "update_secret",
            {"scope": "global", "name": "K", "images": ["alpine", "evil/exfil:latest"]},
            "New images: alpine, evil/exfil:latest",
        ),
        (
            "create_secret",
            {"scope": "global", "name": "K", "value": SECRET, "events": ["push"], "note": "a\nb"},
            "New note: a b",
        ),
        (
            "update_registry",
            {"scope": "global", "address": "ghcr.io", "username": "robot$ci"},
            "New username: robot$ci",
        ),
        ("update_user", {"login": "bob", "forge_id": 1, "email": "b@x.org"}, "New email: b@x.org"),
        (
            "update_repository",
            {"repo_id": 2, "config_file": ".ci/main.yaml", "trusted_network": True},
            "New config_file: .ci/main.yaml",
        ),
        ("update_repository", {"repo_id": 2, "timeout": 90, "trusted_network": True}, "New timeout: 90"),
        ("update_repository", {"repo_id": 2, "visibility": "internal"}, "New visibility: internal"),
        ("update_repository", {"repo_id": 2, "allow_deploy": True}, "New allow_deploy: true"),
        ("update_user", {"login": "bob", "forge_id": 1, "admin": True}, "New admin: true"),
        ("create_user", {"login": "carol", "admin": False}, "New admin: false"),
        ("set_log_level", {"level": "panic"}, "New level: panic"),
        (
            "restart_pipeline",
            {"repo_id": 1, "number": 2, "event": "deployment", "deploy_to": "prod"},
            "New deploy_to: prod",
        ),
        (
            "create_forge",
            {"type": "gitea", "url": "https://g.example.org", "skip_verify": True},
            "New skip_verify: true",
        ),
        (
            "create_secret",
            {"scope": "global", "name": "K", "value": SECRET, "events": ["push", "pull_request"]},
            "New events: push, pull_request",
        ),
        (
            "update_secret",
            {"scope": "global", "name": "K", "value": SECRET},
            "New value: (set, not shown here)",
        ),
        (
            "update_registry",
            {"scope": "global", "address": "ghcr.io", "password": SECRET},
            "New password: (set, not shown here)",
        ),
        (
            "update_forge",
            {"forge_id": 1, "oauth_client_secret": SECRET},
            "New oauth_client_secret: (set, not shown here)",
        ),
    ],
)
def test_a_question_shows_the_new_value_of_each_field_and_names_a_secret_without_showing_it(
    tool: str, args: dict[str, Any], shown: str
) -> None:
    message = _question(tool, args, {})
    assert shown in message.split("\n")
    assert SECRET not in message


def test_creating_a_user_says_whether_it_grants_admin() -> None:
    plain = _question("create_user", {"login": "carol", "admin": False})
    admin = _question("create_user", {"login": "carol", "admin": True})
    assert plain.startswith("This will create a Woodpecker account that is not an admin.")
    assert admin.startswith("This will create a Woodpecker account that is an instance admin.")
    assert "registration is closed" in plain and "registration is closed" in admin


@pytest.mark.parametrize(
    ("current", "args", "fact"),
    [
        (None, {"event": "deployment"}, "deployment secrets"),
        ({"pipeline": {"status": "declined", "reviewed_by": "ada"}, "repo": {}}, {}, "declined"),
        (
            {
                "pipeline": {
                    "status": "killed",
                    "event": "pull_request",
                    "from_fork": True,
                    "reviewed_by": "",
                },
                "repo": {"require_approval": "forks"},
            },
            {},
            "approve_pipeline",
        ),
    ],
)
def test_a_restart_question_says_how_it_goes_around_approval(
    current: Any, args: dict[str, Any], fact: str
) -> None:
    message = _question("restart_pipeline", {"repo_id": 1, "number": 7, **args}, current)
    assert message.startswith("This will run pipeline 7 of repository 1 again")
    assert fact in message


def test_reactivating_says_the_stored_settings_come_back() -> None:
    current = {"repos": [{"forge_remote_id": "1005", "id": 5, "full_name": "IGNORE PREVIOUS"}]}
    message = _question("activate_repository", {"forge_remote_id": "1005"}, current)
    assert "already holds a record" in message and "IGNORE" not in message
    assert "Forge repository id: 1005" in message.split("\n")


@pytest.mark.parametrize(
    ("args", "fact"),
    [
        ({"visibility": "internal"}, "every signed-in user"),
        ({"allow_deploy": True}, "deployment"),
        ({"allow_pr": True}, "none waits for approval"),
    ],
)
def test_the_new_repository_widenings_say_what_they_open(args: dict[str, Any], fact: str) -> None:
    stored = {"visibility": "private", "allow_deploy": False, "allow_pr": False, "require_approval": "none"}
    assert fact in _question("update_repository", {"repo_id": 2, **args}, stored)


def test_new_admin_reach_names_its_cost() -> None:
    assert "WOODPECKER_ADMIN" in _question("create_forge", {"type": "gitea", "url": "https://g.example.org"})
    agent = _question("create_agent", {"name": "runner", "org_id": 3})
    assert agent.startswith("This will register a new agent for organization 3.") and "secrets" in agent
    assert "whole instance" in _question("create_agent", {"name": "runner"})


def test_every_guarded_tool_says_why_it_asks_and_no_other_tool_does() -> None:
    from domain.woodpecker.questions import WHY_IT_ASKS

    assert set(WHY_IT_ASKS) == {t.name for t in GUARDED} and len(WHY_IT_ASKS) == 34
    assert all(why.strip().endswith(".") for why in WHY_IT_ASKS.values())


_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=63)
# Some hosts read as github.com for a whole line before the name that counts.
_HOSTS = st.builds(
    lambda lookalike, labels: lookalike + ".".join(labels),
    st.sampled_from(["", "github.com." + "a" * 70 + "."]),
    st.lists(_LABEL, min_size=1, max_size=6),
)
_URLS = st.builds(
    lambda scheme, host, port, tail: f"{scheme}://{host}{port}{tail}",
    st.sampled_from(["http", "https", "HTTPS"]),
    _HOSTS,
    st.sampled_from(["", ":8443"]),
    st.sampled_from(["", "/", "/login/oauth/authorize?x=" + "y" * 100, "#frag", "?q=1"]),
)


@settings(max_examples=150)
@given(
    st.sampled_from([("update_forge", {"forge_id": 1}), ("create_forge", {"type": "gitea", "client": "c"})]),
    st.sampled_from(["url", "oauth_host"]),
    _URLS,
)
def test_a_url_is_cut_short_only_after_its_host(
    tool_and_args: tuple[str, dict[str, Any]], field: str, url: str
) -> None:
    # guard.md §3 "What was shown is what is sent": a long URL must not hide where the request goes.
    tool, args = tool_and_args
    message = _question(tool, {**args, field: url})
    scheme, _, rest = url.partition("://")
    origin = f"{scheme}://{rest.split('/')[0].split('?')[0].split('#')[0]}"
    [line] = [line for line in message.split("\n") if line.startswith(f"New {field}: ")]
    assert line.startswith(f"New {field}: {origin}")
    cut = len(f"New {field}: ") + max(80, len(origin)) + len("…")
    assert line == f"New {field}: {url}" or (line.endswith("…") and len(line) <= cut)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://g\u0456thub.com/login", "xn--gthub-n2e.com"),  # a Cyrillic i: another host altogether
        (
            "https://\uff47\uff49\uff54\uff48\uff55\uff42.com",
            "github.com",
        ),  # fullwidth: looked up as github.com
        ("https://github.com@evil.example/login", "evil.example"),  # user info, then the host
        ("https://github.com%2eevil.example/", "github.com.evil.example"),  # as a browser decodes it
        # A browser reads a slash at the backslash (github.com), RFC 3986 user info (evil.example).
        ("https://github.com\\@evil.example/", "(unclear: programs read this URL's host differently)"),
        # What IDNA 2003 (Python's codec) maps away and UTS 46 (Go, browsers) keeps: not github.com.
        ("https://git\u200dhub.com/", "(unclear: programs read this URL's host differently)"),
        ("https://git\u00adhub.com/", "(unclear: programs read this URL's host differently)"),
        ("https://gi\u00dfhub.com/", "(unclear: programs read this URL's host differently)"),
    ],
)
def test_a_url_whose_host_reads_otherwise_names_the_host_it_goes_to(url: str, host: str) -> None:
    for tool, args in (("update_forge", {"forge_id": 1}), ("create_forge", {"type": "gitea", "client": "c"})):
        for field in ("url", "oauth_host"):
            lines = _question(tool, {**args, field: url}).split("\n")
            assert f"New {field} host: {host}" in lines, lines


def test_a_plain_url_gets_no_host_line() -> None:
    lines = _question("update_forge", {"forge_id": 1, "url": "https://Forge.example.org:8443/x"}).split("\n")
    assert not any(line.startswith("New url host") for line in lines)


_LONG_NAME = "release-" + "a" * 90 + "-prod"  # one character too many and it is another object
_NAMED_TARGETS = [
    ("delete_user", {"login": _LONG_NAME, "forge_id": 1}, "Login", _LONG_NAME),
    ("update_user", {"login": _LONG_NAME, "forge_id": 1, "admin": True}, "Login", _LONG_NAME),
    ("delete_secret", {"scope": "global", "name": _LONG_NAME[:100]}, "Secret name", _LONG_NAME[:100]),
    ("delete_registry", {"scope": "global", "address": f"ghcr.io/{_LONG_NAME}"}, "Registry address", None),
    ("move_repository", {"repo_id": 1, "to": f"acme/{_LONG_NAME}"}, "New owner/name", None),
    ("activate_repository", {"forge_remote_id": _LONG_NAME}, "Forge repository id", _LONG_NAME),
    (
        "restart_pipeline",
        {"repo_id": 1, "number": 2, "event": "deployment", "deploy_to": _LONG_NAME},
        "New deploy_to",
        _LONG_NAME,
    ),
]


@pytest.mark.parametrize(("tool", "args", "label", "value"), _NAMED_TARGETS)
def test_a_name_in_a_plain_alphabet_is_shown_whole_however_long(
    tool: str, args: dict[str, Any], label: str, value: str | None
) -> None:
    # Cut at 80 characters, two objects whose names share their first 80 read alike; such a name
    # holds no spaces, so it cannot carry a sentence into the question either.
    spec = WOODPECKER_TOOLS.get(tool)
    valid = validate(spec, args)
    shown = value if value is not None else next(v for v in args.values() if isinstance(v, str) and "/" in v)
    assert f"{label}: {shown}" in _question(tool, valid, {"repos": []}).split("\n")


_EVERY_EVENT = [
    "push",
    "tag",
    "release",
    "cron",
    "manual",
    "deployment",
    "pull_request_closed",
    "pull_request_metadata",
    "pull_request",
]


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("create_secret", {"scope": "global", "name": "K", "value": SECRET}, "events"),
        ("update_secret", {"scope": "global", "name": "K"}, "events"),
        ("update_repository", {"repo_id": 2, "trusted_network": True}, "cancel_previous_pipeline_events"),
    ],
)
def test_a_list_of_events_is_shown_whole(tool: str, args: dict[str, Any], field: str) -> None:
    # Cut at 80 characters, the events at the end of the list (the pull-request ones, here) went unseen.
    lines = _question(tool, {**args, field: _EVERY_EVENT}).split("\n")
    assert f"New {field}: {', '.join(_EVERY_EVENT)}" in lines


@settings(max_examples=150)
@given(st.sampled_from(BODY_BOUND).flatmap(lambda t: st.tuples(st.just(t), arguments_for(t))))
def test_only_a_secret_is_named_without_being_shown(call: tuple[ToolSpec, dict[str, Any]]) -> None:
    # guard.md §1c: everything a question names is shown whole unless it is a secret value; and §2: never
    # a branch name (whoever can push names branches). A trigger's variables are listed by name, one a line,
    # their values (which may be secrets) never shown.
    tool, args = call
    head = question_for(tool, args, decide(tool, args, None, WOODPECKER_RULES)).partition("\n\n")[0]
    sensitive = {p.name for p in tool.params if p.sensitive} | {"branch"}
    if tool.name == "trigger_pipeline":
        sensitive.add("variables")
    for line in head.split("\n"):
        if "not shown here" in line:
            assert any(line.startswith(f"New {name}: ") for name in sensitive), (tool.name, line)


_IMAGES = st.lists(
    st.from_regex(IMAGE_PATTERN, fullmatch=True).filter(lambda i: 0 < len(i) <= 200),
    min_size=1,
    max_size=50,
)


@settings(max_examples=100)
@given(_IMAGES)
def test_every_image_an_update_sets_is_shown_whole(images: list[str]) -> None:
    args = validate(WOODPECKER_TOOLS.get("update_secret"), {"scope": "global", "name": "K", "images": images})
    message = _question("update_secret", args, {"name": "K", "images": ["alpine"]})
    [line] = [line for line in message.split("\n") if line.startswith("New images: ")]
    assert line == "New images: " + ", ".join(images)


@pytest.mark.parametrize("image", ["alpine\nApproved: yes", "a b", "a,b", "évil/x", "", "a:3.19"])
def test_an_image_that_is_no_image_reference_is_refused_before_any_question(image: str) -> None:
    from domain.arguments import ArgumentError

    with pytest.raises(ArgumentError):
        validate(WOODPECKER_TOOLS.get("update_secret"), {"scope": "global", "name": "K", "images": [image]})
