"""The question for each of Woodpecker's 28 guarded tools: numeric ids and fixed facts only.

Nothing read from Woodpecker reaches a question (no branch, title, message, log line, or a
name somebody else typed): a question only sees the caller's arguments and our own reason
ids. A value the caller chose appears only on a labelled, flattened, shortened line: a
body-bound question lists every field the call sets, each on its own line, with its new value
when that is a boolean, a number, an enum, a URL or a plain name, and only named when it is a
secret or free text.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.guard.fingerprint import body_of
from domain.guard.policy import Decision
from domain.guard.question import Question, build, labelled
from domain.tools import Param, ToolSpec
from domain.woodpecker import rules as r

_Builder = Callable[[ToolSpec, Mapping[str, Any], frozenset[str]], Question]
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


def _agent_scope(args: Mapping[str, Any]) -> str:
    owner = _agent_owner(args)
    return f" for organization {_id(args, 'org_id')}" if owner else " for the whole instance"


# Placeholders of a question's first sentence that are phrases; every other {name} is the id `name`.
# Either way only digits and fixed words are printed.
_PHRASES: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "secret": lambda args: _owned(args, "secret"),
    "registry": lambda args: _owned(args, "registry"),
    "agent_owner": _agent_owner,
    "agent_scope": _agent_scope,
}


class _Ids(dict[str, str]):
    """The values of a first sentence's placeholders, worked out from the arguments when asked for."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__()
        self.args = args

    def __missing__(self, key: str) -> str:
        phrase = _PHRASES.get(key)
        return phrase(self.args) if phrase else _id(self.args, key)


# Strings shown with their value although they have no format: names restricted to a plain form.
_PLAIN_NAMES = frozenset({"deploy_to"})
NOT_SHOWN = "(set, not shown here)"


def _value_text(param: Param | None, value: Any) -> str:
    """A field's new value as a question may show it: booleans, numbers, enums, URLs and plain names
    as they are; a secret, a password or free text only as "set"; a list of free text by its size."""
    if param is not None and param.sensitive:
        return NOT_SHOWN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        if not value:
            return "(empty)"
        items = param.constraints.get("items", {}) if param is not None else {}
        if "enum" in items and all(isinstance(v, str) and v in items["enum"] for v in value):
            return ", ".join(value)
        return f"{len(value)} entr{'y' if len(value) == 1 else 'ies'} (not shown here)"
    if isinstance(value, str) and param is not None:
        if value == "":
            return "(empty)"
        if value in param.choices or param.constraints.get("format") == "uri" or param.name in _PLAIN_NAMES:
            return value
    return NOT_SHOWN


def _field_lines(tool: ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """One labelled line per field the call sets (every argument but the targets), in catalogue order."""
    params = {p.name: p for p in tool.params}
    body = body_of(tool, args)
    return [
        labelled(f"New {name}", _value_text(params.get(name), body[name]))
        for name in (p.name for p in tool.params)
        if name in body
    ]


def _unknown(reasons: frozenset[str], known: frozenset[str]) -> list[str]:
    return [_UNDESCRIBED] if reasons - known - {"always"} else []


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
    `when` clauses) says so when the decision gives one it does not describe. `fields`: list every
    field the call sets on its own line (body-bound tools), see _field_lines. `what_when` replaces
    `what` when its test holds (create_user says whether it grants admin).
    """

    what: str
    cost: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()
    when: tuple[_When, ...] = ()
    describes: frozenset[str] = frozenset()
    fields: bool = False
    what_when: tuple[Callable[[Mapping[str, Any]], bool], str] | None = None

    def __call__(self, tool: ToolSpec, args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
        lines = [labelled(label, args.get(name)) for label, name in self.lines]
        if self.fields:
            lines += _field_lines(tool, args)
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
        what = self.what
        if self.what_when is not None and self.what_when[0](args):
            what = self.what_when[1]
        return build(what.format_map(_Ids(args)), cost, lines)


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
            ),
            _because(
                r.SETS_PUBLIC,
                "It becomes public: its pipelines and their logs are visible to anyone who can reach Woodpecker.",
            ),
            _because(
                r.SETS_INTERNAL,
                "It becomes internal: its pipelines, logs and config are visible to every signed-in "
                "user of Woodpecker.",
            ),
            _because(
                r.ALLOWS_DEPLOY,
                "It accepts deployment events: any of its pipelines, a fork's included, can be re-run as a "
                "deployment with its deployment secrets.",
            ),
            _because(
                r.ALLOWS_PR_UNAPPROVED,
                "Pull requests start its pipelines and none waits for approval: code from forks runs with "
                "its secrets without anyone looking first.",
            ),
        ),
        fields=True,
    ),
    "repair_repository": _Ask(
        "This will repair every repository of this Woodpecker instance: each webhook is recreated "
        "and each repository is read again from its forge.",
        (
            "It is instance-wide and runs one forge round-trip per repository, with an instance admin's rights.",
        ),
        describes=frozenset({r.SCOPE_INSTANCE}),
    ),
    "activate_repository": _Ask(
        "This will activate a forge repository in Woodpecker, install its webhook and make the calling "
        "account its owner.",
        lines=(("Forge repository id", "forge_remote_id"),),
        when=(
            _because(
                r.REACTIVATES,
                "Woodpecker already holds a record of it: its stored trusted flags, approval mode and "
                "secrets come back as they were, and its pipelines run under the calling account's forge token.",
            ),
            _because(
                r.UNKNOWN_RECORD,
                "The forge does not list it for the calling account, so this server cannot tell whether "
                "Woodpecker already holds a record of it; if it does, its stored trusted flags, approval "
                "mode and secrets come back as they were.",
            ),
        ),
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
    "restart_pipeline": _Ask(
        "This will run pipeline {number} of repository {repo_id} again, as a new pipeline.",
        (
            "The new pipeline runs the original commit and config with this repository's secrets, and "
            "starts at once: Woodpecker does not hold a re-run for approval.",
        ),
        when=(
            _because(
                r.RESTARTS_AS_DEPLOYMENT,
                "It runs as a deployment, with the deployment secrets, whatever the original pipeline "
                "was (a fork's pull request included).",
            ),
            _because(
                r.RESTARTS_DECLINED,
                "The original pipeline was declined: its code was refused, and this runs it anyway.",
            ),
            _because(
                r.RESTARTS_UNAPPROVED,
                "Under the repository's current settings the original pipeline needs an approval and none "
                "is on record: this goes around approve_pipeline.",
            ),
        ),
        fields=True,
    ),
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
            ),
            _because(
                r.EMPTIES_IMAGES,
                "It removes the image restriction, so any image of a matching pipeline can read the secret.",
            ),
            _because(
                r.ADDS_IMAGE,
                # The images are not listed: a name copied from a pipeline or a registry could speak
                # to the person. The call's own images argument says which.
                "It adds an image the secret is not limited to now (see the call's images argument), "
                "so steps running that image, a plugin included, can read the secret.",
            ),
        ),
        fields=True,
    ),
    "create_secret": _Ask(
        "This will create {secret}.",
        lines=(_SECRET_NAME,),
        when=(
            _because(
                r.ADDS_PULL_REQUEST_EVENT,
                "It makes the secret available to pull-request pipelines, whose code can come from a fork.",
            ),
        ),
        fields=True,
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
        fields=True,
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
        "This will create a Woodpecker account that is not an admin.",
        (
            "The account can sign in at once, even where registration is closed, and gets what its "
            "forge account can reach.",
        ),
        (_LOGIN,),
        when=(_given(lambda args: args.get("admin") is not False, _ADMIN_COST),),
        fields=True,
        what_when=(
            lambda args: args.get("admin") is not False,
            "This will create a Woodpecker account that is an instance admin.",
        ),
    ),
    "update_user": _Ask(
        "This will make an account of forge {forge_id} an instance admin.",
        (_ADMIN_COST,),
        (_LOGIN,),
        describes=frozenset({r.GRANTS_ADMIN}),
        fields=True,
    ),
    "delete_user": _Ask(
        "This will delete an account of forge {forge_id} from Woodpecker.",
        (
            "Repositories it owns lose the forge token Woodpecker uses for them, so their pipelines "
            "stop being triggered; chown_repository can hand them over first.",
        ),
        (_LOGIN,),
    ),
    "create_agent": _Ask(
        "This will register a new agent{agent_scope}.",
        (
            "An agent takes workflows, with their secrets, from every repository it serves. Its token "
            "comes back in the answer, so it ends up in this conversation.",
        ),
        (("Agent name", "name"),),
        fields=True,
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
            _given(
                lambda args: args.get("oauth_client_secret") is not None,
                "It sets a new OAuth client secret (not shown here).",
            ),
            _given(
                lambda args: args.get("skip_verify") is True,
                "skip_verify turns off TLS certificate checks towards the forge.",
            ),
        ),
        fields=True,
    ),
    "create_forge": _Ask(
        "This will add a forge to Woodpecker, through which accounts can sign in.",
        (
            "Woodpecker's admin list (WOODPECKER_ADMIN) matches logins on every forge: whoever can pick a "
            "listed login on this forge signs in as an instance admin.",
        ),
        (("New type", "type"), ("New url", "url")),
        when=(
            _given(
                lambda args: args.get("skip_verify") is True,
                "skip_verify turns off TLS certificate checks towards the forge.",
            ),
        ),
        fields=True,
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
        describes=frozenset({r.SILENCES_SERVER}),
        fields=True,
    ),
}


def question_for(tool: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    """The dialog message for this call. Deterministic: same tool, arguments and decision, same text."""
    builder = QUESTIONS.get(tool.name)
    if builder is None:
        # A guarded tool without its own text still asks; its name is ours, never Woodpecker's.
        return build(f"This will run {tool.name}.", [_UNDESCRIBED], _field_lines(tool, args)).message
    return builder(tool, args, decision.reasons).message


# Why each guarded tool asks, in a sentence: the guard table of docs/tools.md and the guide.
WHY_IT_ASKS: Mapping[str, str] = {
    "activate_repository": (
        "Reactivating a repository Woodpecker already holds brings back its stored trust flags, approval "
        "mode and secrets, and makes the caller its owner."
    ),
    "update_repository": "Each widening lets more code, or more people, reach the repository's pipelines, logs or secrets.",
    "repair_repository": "Instance-wide: every webhook is recreated, one forge round trip per repository.",
    "move_repository": "Woodpecker follows the new owner/name; on 3.11 a retry moves the repository twice.",
    "chown_repository": "The repository's pipelines run under the calling account's forge token afterwards.",
    "delete_repository": "Pipelines, logs, secrets, registries and crons are gone for good.",
    "restart_pipeline": (
        "A restart never re-checks approval: decline or cancel plus restart would run a fork's code with the "
        "secrets, and event=deployment turns any pipeline into a deployment."
    ),
    "approve_pipeline": "The held pipeline runs with the repository's secrets.",
    "delete_pipeline": "The pipeline, its steps and logs are gone for good.",
    "delete_step_logs": "The output is gone for good.",
    "delete_pipeline_logs": "The output of every step is gone for good.",
    "create_secret": "Pull-request code can come from a fork, and would see the secret.",
    "update_secret": "The secret reaches code or images it did not reach, or gets a value nobody can read back.",
    "delete_secret": "A secret's value cannot be read back, so it is lost for good.",
    "update_registry": "Pipelines pull with a password nobody can read back.",
    "delete_registry": "Private-image pulls from that address fail afterwards.",
    "delete_cron": "Its scheduled runs stop silently.",
    "delete_organization": "Its secrets, registries and agents are gone for good.",
    "create_user": "Sign-in finds a pre-created account before the 'registration closed' check: a new account lets a person in.",
    "update_user": "An instance admin controls every repository, secret, agent, forge and user.",
    "delete_user": "Repositories it owns lose the forge token their pipelines run with.",
    "create_agent": "An agent takes workflows with their secrets; its token lands in the conversation.",
    "delete_agent": "Its host cannot reconnect until a new agent is registered.",
    "create_forge": "WOODPECKER_ADMIN matches logins on every forge: a forge where anyone picks their login yields an instance admin.",
    "update_forge": "A mistake locks everyone out of sign-in and cuts Woodpecker off its repositories.",
    "delete_forge": "Its accounts cannot sign in and its repositories are cut off.",
    "pause_queue": "Instance-wide and silent: nothing starts until someone resumes it.",
    "set_log_level": "Failures and misuse go unrecorded until the level is raised again.",
}
