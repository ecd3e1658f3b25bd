"""The question for each of Woodpecker's 23 guarded tools: numeric ids and fixed facts only.

Nothing read from Woodpecker reaches a question (no branch, title, message, log line, or a
name somebody else typed): the builders only see the caller's arguments and our own reason
ids. A value the caller chose appears only on a labelled, flattened, shortened line.
"""

from collections.abc import Callable, Mapping
from typing import Any

from domain.guard.fingerprint import CONFIRM_TOKEN_ARG
from domain.guard.policy import Decision
from domain.guard.question import Question, build, labelled
from domain.tools import ToolSpec
from domain.woodpecker import rules as r

_Builder = Callable[[Mapping[str, Any], frozenset[str]], Question]

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


def _sets(args: Mapping[str, Any], names: tuple[str, ...]) -> list[str]:
    """A sentence naming which of our parameter names the call sets (names only, never values)."""
    present = [n for n in names if n in args]
    return [f"The call sets: {', '.join(present)}."] if present else []


def _unknown(reasons: frozenset[str], known: frozenset[str]) -> list[str]:
    return [_UNDESCRIBED] if reasons - known - {"always"} else []


# --------------------------------------------------------------------- repositories


def _update_repository(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    lines: list[str] = []
    cost: list[str] = []
    if r.GRANTS_TRUSTED_NETWORK in reasons:
        cost.append("Its pipelines get the network of the agent's host (trusted network).")
    if r.GRANTS_TRUSTED_VOLUMES in reasons:
        cost.append("Its pipelines may mount volumes of the agent's host (trusted volumes).")
    if r.GRANTS_TRUSTED_SECURITY in reasons:
        cost.append("Its pipelines may run privileged containers on the agent (trusted security).")
    if r.LOWERS_REQUIRE_APPROVAL in reasons:
        lines.append(labelled("New require_approval", args.get("require_approval")))
        cost.append(
            "Fewer of its pipelines wait for approval, so code from forks or pull requests "
            "may run with its secrets without anyone looking first."
        )
    if r.SETS_PUBLIC in reasons:
        lines.append(labelled("New visibility", args.get("visibility")))
        cost.append(
            "It becomes public: its pipelines and their logs are visible to anyone who can reach Woodpecker."
        )
    known = frozenset(
        {
            r.GRANTS_TRUSTED_NETWORK,
            r.GRANTS_TRUSTED_VOLUMES,
            r.GRANTS_TRUSTED_SECURITY,
            r.LOWERS_REQUIRE_APPROVAL,
            r.SETS_PUBLIC,
        }
    )
    cost += _unknown(reasons, known)
    cost += _sets(
        args,
        (
            "config_file",
            "timeout",
            "visibility",
            "allow_pr",
            "allow_deploy",
            "require_approval",
            "cancel_previous_pipeline_events",
            "trusted_network",
            "trusted_volumes",
            "trusted_security",
        ),
    )
    return build(f"This will change the settings of repository {_id(args, 'repo_id')}.", cost, lines)


def _repair_repository(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        "This will repair every repository of this Woodpecker instance: each webhook is recreated "
        "and each repository is read again from its forge.",
        [
            "It is instance-wide and runs one forge round-trip per repository, with an instance admin's rights.",
            *_unknown(reasons, frozenset({r.SCOPE_INSTANCE})),
        ],
    )


def _move_repository(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will tell Woodpecker that repository {_id(args, 'repo_id')} now has a new owner/name.",
        [
            "The forge itself is not changed.",
            "On Woodpecker 3.11 the server performs the move and then answers HTTP 500: do not retry, "
            "read the repository back with get_repository, or it is moved twice.",
        ],
        [labelled("New owner/name", args.get("to"))],
    )


def _chown_repository(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will make the calling account the owner of repository {_id(args, 'repo_id')} in Woodpecker.",
        [
            "Every pipeline of that repository afterwards runs under the calling account's forge token, "
            "so that account's reach over the forge becomes the repository's reach."
        ],
    )


def _delete_repository(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete repository {_id(args, 'repo_id')} from Woodpecker, with its pipelines, logs, "
        "secrets, registries and cron jobs.",
        [
            "This cannot be undone. The repository in the forge remains, but its Woodpecker history "
            "and secrets are gone for good."
        ],
    )


# --------------------------------------------------------------------- pipelines


def _approve_pipeline(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will approve pipeline {_id(args, 'number')} of repository {_id(args, 'repo_id')}.",
        [
            "The pipeline runs with this repository's secrets, and its code comes from the source "
            "that opened it."
        ],
    )


def _delete_pipeline(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete pipeline {_id(args, 'number')} of repository {_id(args, 'repo_id')}, "
        "with its workflows, steps and logs.",
        ["This cannot be undone."],
    )


def _delete_step_logs(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will erase the log of step {_id(args, 'step_id')} of pipeline {_id(args, 'number')} "
        f"in repository {_id(args, 'repo_id')}.",
        [
            "The step and its result remain; its output is gone for good. If the log exposed a secret, "
            "rotate that secret too: anyone with read access may have seen it."
        ],
    )


def _delete_pipeline_logs(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will erase the logs of every step of pipeline {_id(args, 'number')} "
        f"in repository {_id(args, 'repo_id')}.",
        ["Step results remain visible; the output behind them is gone for good."],
    )


# --------------------------------------------------------------------- secrets and registries


def _update_secret(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    lines = [labelled("Secret name", args.get("name"))]
    cost: list[str] = []
    if r.NEW_VALUE in reasons:
        cost.append(
            "It stores a new value (not shown here); pipelines that use the secret get it from "
            "their next run, and the old value cannot be read back."
        )
    if r.ADDS_PULL_REQUEST_EVENT in reasons:
        events = args.get("events")
        if isinstance(events, list | tuple):
            lines.append(labelled("Events after the change", ", ".join(str(e) for e in events)))
        cost.append(
            "It makes the secret available to pull-request pipelines, whose code can come from a fork."
        )
    if r.EMPTIES_IMAGES in reasons:
        cost.append(
            "It removes the image restriction, so any image of a matching pipeline can read the secret."
        )
    cost += _unknown(reasons, frozenset({r.NEW_VALUE, r.ADDS_PULL_REQUEST_EVENT, r.EMPTIES_IMAGES}))
    cost += _sets(args, ("value", "events", "images", "note"))
    return build(f"This will change {_owned(args, 'secret')}.", cost, lines)


def _delete_secret(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete {_owned(args, 'secret')}.",
        ["Its value was never readable, so it is lost for good, and pipelines that use it get nothing."],
        [labelled("Secret name", args.get("name"))],
    )


def _update_registry(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    cost: list[str] = []
    if r.NEW_PASSWORD in reasons:
        cost.append(
            "It stores a new password (not shown here); pipelines pull private images with this "
            "login from their next run, and the old password cannot be read back."
        )
    cost += _unknown(reasons, frozenset({r.NEW_PASSWORD}))
    cost += _sets(args, ("username", "password"))
    return build(
        f"This will replace the login stored for {_owned(args, 'registry')}.",
        cost,
        [labelled("Registry address", args.get("address"))],
    )


def _delete_registry(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete the login stored for {_owned(args, 'registry')}.",
        ["Private-image pulls from that address fail afterwards."],
        [labelled("Registry address", args.get("address"))],
    )


# --------------------------------------------------------------------- crons and organizations


def _delete_cron(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete cron job {_id(args, 'cron_id')} of repository {_id(args, 'repo_id')}.",
        [
            "Its scheduled runs stop, and nothing will mention the runs that no longer happen. "
            "To suspend it instead, use update_cron with enabled=false."
        ],
    )


def _delete_organization(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete organization {_id(args, 'org_id')} from Woodpecker, with its secrets, "
        "registries and agents.",
        [
            "The forge and the repositories remain, but their pipelines lose the organization's "
            "secrets. This cannot be undone."
        ],
    )


# --------------------------------------------------------------------- users, agents, forges, server


def _create_user(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        "This will create a Woodpecker account that is an instance admin.",
        [_ADMIN_COST, *_unknown(reasons, frozenset({r.GRANTS_ADMIN}))],
        [labelled("Login", args.get("login"))],
    )


def _update_user(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will make an account of forge {_id(args, 'forge_id')} an instance admin.",
        [_ADMIN_COST, *_unknown(reasons, frozenset({r.GRANTS_ADMIN})), *_sets(args, ("email", "admin"))],
        [labelled("Login", args.get("login"))],
    )


def _delete_user(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete an account of forge {_id(args, 'forge_id')} from Woodpecker.",
        [
            "Repositories it owns lose the forge token Woodpecker uses for them, so their pipelines "
            "stop being triggered; chown_repository can hand them over first."
        ],
        [labelled("Login", args.get("login"))],
    )


def _delete_agent(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    owner = f" of organization {_id(args, 'org_id')}" if args.get("org_id") is not None else ""
    return build(
        f"This will delete agent {_id(args, 'agent_id')}{owner}.",
        ["Its token stops working and its host cannot reconnect until a new agent is registered."],
    )


def _update_forge(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    lines = [labelled(f"New {name}", args[name]) for name in ("type", "url", "oauth_host") if name in args]
    cost = [
        "A mistake here can make sign-in impossible for everyone, the web UI included, and cut "
        "Woodpecker off from the forge's repositories."
    ]
    if args.get("oauth_client_secret") is not None:
        cost.append("It sets a new OAuth client secret (not shown here).")
    if args.get("skip_verify") is True:
        cost.append("skip_verify turns off TLS certificate checks towards the forge.")
    cost += _sets(args, ("type", "url", "client", "oauth_client_secret", "oauth_host", "skip_verify"))
    return build(f"This will change the configuration of forge {_id(args, 'forge_id')}.", cost, lines)


def _delete_forge(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        f"This will delete forge {_id(args, 'forge_id')} from Woodpecker.",
        [
            "Accounts from that forge cannot sign in afterwards, and Woodpecker loses access to its repositories."
        ],
    )


def _pause_queue(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        "This will pause the pipeline queue of the whole Woodpecker instance.",
        [
            "It is instance-wide and silent: nothing starts until resume_queue is called, and nothing "
            "tells the people whose builds are queuing why. Pipelines already running complete."
        ],
    )


def _set_log_level(args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
    return build(
        "This will set the Woodpecker server's log level so that it records almost nothing.",
        [
            "Failures and misuse go unrecorded until the level is raised again.",
            *_unknown(reasons, frozenset({r.SILENCES_SERVER})),
        ],
        [labelled("New level", args.get("level"))],
    )


QUESTIONS: Mapping[str, _Builder] = {
    "update_repository": _update_repository,
    "repair_repository": _repair_repository,
    "move_repository": _move_repository,
    "chown_repository": _chown_repository,
    "delete_repository": _delete_repository,
    "approve_pipeline": _approve_pipeline,
    "delete_pipeline": _delete_pipeline,
    "delete_step_logs": _delete_step_logs,
    "delete_pipeline_logs": _delete_pipeline_logs,
    "update_secret": _update_secret,
    "delete_secret": _delete_secret,
    "update_registry": _update_registry,
    "delete_registry": _delete_registry,
    "delete_cron": _delete_cron,
    "delete_organization": _delete_organization,
    "create_user": _create_user,
    "update_user": _update_user,
    "delete_user": _delete_user,
    "delete_agent": _delete_agent,
    "update_forge": _update_forge,
    "delete_forge": _delete_forge,
    "pause_queue": _pause_queue,
    "set_log_level": _set_log_level,
}


def question_for(tool: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    """The dialog message for this call. Deterministic: same tool, arguments and decision, same text."""
    builder = QUESTIONS.get(tool.name)
    if builder is None:
        # A guarded tool without its own text still asks; its name is ours, never Woodpecker's.
        shown = [n for n in (p.name for p in tool.params) if n in args and n != CONFIRM_TOKEN_ARG]
        return build(f"This will run {tool.name}.", [_UNDESCRIBED, *_sets(args, tuple(shown))]).message
    return builder(args, decision.reasons).message
