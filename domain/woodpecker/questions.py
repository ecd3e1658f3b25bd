"""The question for each of Woodpecker's 23 guarded tools: numeric ids and fixed facts only.

Nothing read from Woodpecker reaches a question (no branch, title, message, log line, or a
name somebody else typed): a question only sees the caller's arguments and our own reason
ids. A value the caller chose appears only on a labelled, flattened, shortened line.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.guard.fingerprint import CONFIRM_TOKEN_ARG
from domain.guard.policy import Decision
from domain.guard.question import Question, build, labelled
from domain.tools import ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.requests import CHANGES

_Builder = Callable[[Mapping[str, Any], frozenset[str]], Question]
_Lines = Callable[[Mapping[str, Any]], list[str]]

_UNDESCRIBED = "This server cannot describe the change more exactly, so it asks before acting."
_ADMIN_COST = (
    "An instance admin controls the whole Woodpecker instance: every repository, secret, agent, "
    "forge and user."
)


def _id(args: Mapping[str, Any], name: str) -> str:
    """A numeric id as digits; anything else is never printed."""
    value = args.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "(unknown)"


def _owned(args: Mapping[str, Any], noun: str) -> str:
    """ "a secret of repository 21", "a secret of organization 3" or "a global secret"."""
    scope = args.get("scope")
    if scope == "repository":
        return f"a {noun} of repository {_id(args, 'repo_id')}"
    if scope == "organization":
        return f"a {noun} of organization {_id(args, 'org_id')}"
    if scope == "global":
        return f"a global {noun}, available to every repository"
    return f"a {noun} of an unrecognised scope"


def _agent_owner(args: Mapping[str, Any]) -> str:
    return f" of organization {_id(args, 'org_id')}" if args.get("org_id") is not None else ""


# Placeholders of a question's first sentence that are phrases; every other {name} is the id `name`.
# Either way only digits and fixed words are printed.
_PHRASES: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "secret": lambda args: _owned(args, "secret"),
    "registry": lambda args: _owned(args, "registry"),
    "agent_owner": _agent_owner,
}


class _Ids(dict[str, str]):
    """The values of a first sentence's placeholders, worked out from the arguments when asked for."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__()
        self.args = args

    def __missing__(self, key: str) -> str:
        phrase = _PHRASES.get(key)
        return phrase(self.args) if phrase else _id(self.args, key)


def _sets(args: Mapping[str, Any], names: tuple[str, ...]) -> list[str]:
    """A sentence naming which of our parameter names the call sets (names only, never values)."""
    present = [n for n in names if n in args]
    return [f"The call sets: {', '.join(present)}."] if present else []


def _unknown(reasons: frozenset[str], known: frozenset[str]) -> list[str]:
    return [_UNDESCRIBED] if reasons - known - {"always"} else []


def _has(name: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda args: name in args


def _show(label: str, name: str) -> _Lines:
    """The argument `name` on a line of its own, labelled."""
    return lambda args: [labelled(label, args.get(name))]


def _show_list(label: str, name: str) -> _Lines:
    """A list argument as one labelled line, its items joined; nothing when it is not a list."""

    def lines(args: Mapping[str, Any]) -> list[str]:
        items = args.get(name)
        return [labelled(label, ", ".join(str(i) for i in items))] if isinstance(items, list | tuple) else []

    return lines


@dataclass(frozen=True, slots=True)
class _When:
    """A cost sentence and/or labelled line that only some calls get."""

    holds: Callable[[Mapping[str, Any], frozenset[str]], bool]
    cost: str | None = None
    lines: _Lines | None = None
    reason: str | None = None  # the reason id this describes, when it is one


def _because(reason: str, cost: str, lines: _Lines | None = None) -> _When:
    """Said when the decision gives `reason`."""
    return _When(lambda args, reasons: reason in reasons, cost, lines, reason)


def _given(
    test: Callable[[Mapping[str, Any]], bool], cost: str | None = None, lines: _Lines | None = None
) -> _When:
    """Said when the arguments pass `test`."""
    return _When(lambda args, reasons: test(args), cost, lines)


@dataclass(frozen=True, slots=True)
class _Ask:
    """One tool's question: what will happen, then what it costs.

    `what` holds ids and phrases only (see _PHRASES); `lines` are (label, argument) pairs shown
    on lines of their own. A question that describes reasons (`describes`, or the reasons of its
    `when` clauses) says so when the decision gives one it does not describe. `sets` names the
    parameters whose presence (never value) the question mentions: for an update, what it can change.
    """

    what: str
    cost: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()
    when: tuple[_When, ...] = ()
    describes: frozenset[str] = frozenset()
    sets: tuple[str, ...] = ()

    def __call__(self, args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
        lines = [labelled(label, args.get(name)) for label, name in self.lines]
        cost = list(self.cost)
        for clause in self.when:
            if clause.holds(args, reasons):
                if clause.cost:
                    cost.append(clause.cost)
                if clause.lines:
                    lines += clause.lines(args)
        known = self.describes | {c.reason for c in self.when if c.reason}
        if known:
            cost += _unknown(reasons, known)
        cost += _sets(args, self.sets)
        return build(self.what.format_map(_Ids(args)), cost, lines)


_SECRET_NAME = ("Secret name", "name")
_REGISTRY_ADDRESS = ("Registry address", "address")
_LOGIN = ("Login", "login")

QUESTIONS: Mapping[str, _Builder] = {
    # ------------------------------------------------------------------ repositories
    "update_repository": _Ask(
        "This will change the settings of repository {repo_id}.",
        when=(
            _because(
                r.GRANTS_TRUSTED_NETWORK,
                "Its pipelines get the network of the agent's host (trusted network).",
            ),
            _because(
                r.GRANTS_TRUSTED_VOLUMES,
                "Its pipelines may mount volumes of the agent's host (trusted volumes).",
            ),
            _because(
                r.GRANTS_TRUSTED_SECURITY,
                "Its pipelines may run privileged containers on the agent (trusted security).",
            ),
            _because(
                r.LOWERS_REQUIRE_APPROVAL,
                "Fewer of its pipelines wait for approval, so code from forks or pull requests "
                "may run with its secrets without anyone looking first.",
                _show("New require_approval", "require_approval"),
            ),
            _because(
                r.SETS_PUBLIC,
                "It becomes public: its pipelines and their logs are visible to anyone who can reach Woodpecker.",
                _show("New visibility", "visibility"),
            ),
        ),
        sets=CHANGES["update_repository"],
    ),
    "repair_repository": _Ask(
        "This will repair every repository of this Woodpecker instance: each webhook is recreated "
        "and each repository is read again from its forge.",
        (
            "It is instance-wide and runs one forge round-trip per repository, with an instance admin's rights.",
        ),
        describes=frozenset({r.SCOPE_INSTANCE}),
    ),
    "move_repository": _Ask(
        "This will tell Woodpecker that repository {repo_id} now has a new owner/name.",
        (
            "The forge itself is not changed.",
            "On Woodpecker 3.11 the server performs the move and then answers HTTP 500: do not retry, "
            "read the repository back with get_repository, or it is moved twice.",
        ),
        (("New owner/name", "to"),),
    ),
    "chown_repository": _Ask(
        "This will make the calling account the owner of repository {repo_id} in Woodpecker.",
        (
            "Every pipeline of that repository afterwards runs under the calling account's forge token, "
            "so that account's reach over the forge becomes the repository's reach.",
        ),
    ),
    "delete_repository": _Ask(
        "This will delete repository {repo_id} from Woodpecker, with its pipelines, logs, "
        "secrets, registries and cron jobs.",
        (
            "This cannot be undone. The repository in the forge remains, but its Woodpecker history "
            "and secrets are gone for good.",
        ),
    ),
    # ------------------------------------------------------------------ pipelines
    "approve_pipeline": _Ask(
        "This will approve pipeline {number} of repository {repo_id}.",
        (
            "The pipeline runs with this repository's secrets, and its code comes from the source "
            "that opened it.",
        ),
    ),
    "delete_pipeline": _Ask(
        "This will delete pipeline {number} of repository {repo_id}, with its workflows, steps and logs.",
        ("This cannot be undone.",),
    ),
    "delete_step_logs": _Ask(
        "This will erase the log of step {step_id} of pipeline {number} in repository {repo_id}.",
        (
            "The step and its result remain; its output is gone for good. If the log exposed a secret, "
            "rotate that secret too: anyone with read access may have seen it.",
        ),
    ),
    "delete_pipeline_logs": _Ask(
        "This will erase the logs of every step of pipeline {number} in repository {repo_id}.",
        ("Step results remain visible; the output behind them is gone for good.",),
    ),
    # ------------------------------------------------------------------ secrets and registries
    "update_secret": _Ask(
        "This will change {secret}.",
        lines=(_SECRET_NAME,),
        when=(
            _because(
                r.NEW_VALUE,
                "It stores a new value (not shown here); pipelines that use the secret get it from "
                "their next run, and the old value cannot be read back.",
            ),
            _because(
                r.ADDS_PULL_REQUEST_EVENT,
                "It makes the secret available to pull-request pipelines, whose code can come from a fork.",
                _show_list("Events after the change", "events"),
            ),
            _because(
                r.EMPTIES_IMAGES,
                "It removes the image restriction, so any image of a matching pipeline can read the secret.",
            ),
        ),
        sets=CHANGES["update_secret"],
    ),
    "delete_secret": _Ask(
        "This will delete {secret}.",
        ("Its value was never readable, so it is lost for good, and pipelines that use it get nothing.",),
        (_SECRET_NAME,),
    ),
    "update_registry": _Ask(
        "This will replace the login stored for {registry}.",
        lines=(_REGISTRY_ADDRESS,),
        when=(
            _because(
                r.NEW_PASSWORD,
                "It stores a new password (not shown here); pipelines pull private images with this "
                "login from their next run, and the old password cannot be read back.",
            ),
        ),
        sets=CHANGES["update_registry"],
    ),
    "delete_registry": _Ask(
        "This will delete the login stored for {registry}.",
        ("Private-image pulls from that address fail afterwards.",),
        (_REGISTRY_ADDRESS,),
    ),
    # ------------------------------------------------------------------ crons and organizations
    "delete_cron": _Ask(
        "This will delete cron job {cron_id} of repository {repo_id}.",
        (
            "Its scheduled runs stop, and nothing will mention the runs that no longer happen. "
            "To suspend it instead, use update_cron with enabled=false.",
        ),
    ),
    "delete_organization": _Ask(
        "This will delete organization {org_id} from Woodpecker, with its secrets, registries and agents.",
        (
            "The forge and the repositories remain, but their pipelines lose the organization's "
            "secrets. This cannot be undone.",
        ),
    ),
    # ------------------------------------------------------------------ users, agents, forges, server
    "create_user": _Ask(
        "This will create a Woodpecker account that is an instance admin.",
        (_ADMIN_COST,),
        (_LOGIN,),
        describes=frozenset({r.GRANTS_ADMIN}),
    ),
    "update_user": _Ask(
        "This will make an account of forge {forge_id} an instance admin.",
        (_ADMIN_COST,),
        (_LOGIN,),
        describes=frozenset({r.GRANTS_ADMIN}),
        sets=CHANGES["update_user"],
    ),
    "delete_user": _Ask(
        "This will delete an account of forge {forge_id} from Woodpecker.",
        (
            "Repositories it owns lose the forge token Woodpecker uses for them, so their pipelines "
            "stop being triggered; chown_repository can hand them over first.",
        ),
        (_LOGIN,),
    ),
    "delete_agent": _Ask(
        "This will delete agent {agent_id}{agent_owner}.",
        ("Its token stops working and its host cannot reconnect until a new agent is registered.",),
    ),
    "update_forge": _Ask(
        "This will change the configuration of forge {forge_id}.",
        (
            "A mistake here can make sign-in impossible for everyone, the web UI included, and cut "
            "Woodpecker off from the forge's repositories.",
        ),
        when=(
            *(_given(_has(name), lines=_show(f"New {name}", name)) for name in ("type", "url", "oauth_host")),
            _given(
                lambda args: args.get("oauth_client_secret") is not None,
                "It sets a new OAuth client secret (not shown here).",
            ),
            _given(
                lambda args: args.get("skip_verify") is True,
                "skip_verify turns off TLS certificate checks towards the forge.",
            ),
        ),
        sets=CHANGES["update_forge"],
    ),
    "delete_forge": _Ask(
        "This will delete forge {forge_id} from Woodpecker.",
        (
            "Accounts from that forge cannot sign in afterwards, and Woodpecker loses access to its repositories.",
        ),
    ),
    "pause_queue": _Ask(
        "This will pause the pipeline queue of the whole Woodpecker instance.",
        (
            "It is instance-wide and silent: nothing starts until resume_queue is called, and nothing "
            "tells the people whose builds are queuing why. Pipelines already running complete.",
        ),
    ),
    "set_log_level": _Ask(
        "This will set the Woodpecker server's log level so that it records almost nothing.",
        ("Failures and misuse go unrecorded until the level is raised again.",),
        (("New level", "level"),),
        describes=frozenset({r.SILENCES_SERVER}),
    ),
}


def question_for(tool: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    """The dialog message for this call. Deterministic: same tool, arguments and decision, same text."""
    builder = QUESTIONS.get(tool.name)
    if builder is None:
        # A guarded tool without its own text still asks; its name is ours, never Woodpecker's.
        shown = [n for n in (p.name for p in tool.params) if n in args and n != CONFIRM_TOKEN_ARG]
        return build(f"This will run {tool.name}.", [_UNDESCRIBED, *_sets(args, tuple(shown))]).message
    return builder(args, decision.reasons).message
