"""Woodpecker's widening rules: the fifteen conditional tools ask only in the direction that widens reach."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.guard.policy import WideningRule
from domain.woodpecker.reads import absent

# Reason ids: short, stable, and safe to show (they are ours, never Woodpecker's text).
SCOPE_INSTANCE = "scope_instance"
GRANTS_ADMIN = "grants_admin"
GRANTS_TRUSTED_NETWORK = "grants_trusted_network"
GRANTS_TRUSTED_VOLUMES = "grants_trusted_volumes"
GRANTS_TRUSTED_SECURITY = "grants_trusted_security"
LOWERS_REQUIRE_APPROVAL = "lowers_require_approval"
SETS_PUBLIC = "sets_public"
SETS_INTERNAL = "sets_internal"
ALLOWS_DEPLOY = "allows_deploy"
ALLOWS_PR_UNAPPROVED = "allows_pr_unapproved"
NEW_VALUE = "new_value"
ADDS_PULL_REQUEST_EVENT = "adds_pull_request_event"
EMPTIES_IMAGES = "empties_images"
ADDS_IMAGE = "adds_image"
NEW_PASSWORD = "new_password"  # noqa: S105 - a reason id, not a secret
SILENCES_SERVER = "silences_server"
RESTARTS_AS_DEPLOYMENT = "restarts_as_deployment"
RESTARTS_DECLINED = "restarts_declined"
RESTARTS_UNAPPROVED = "restarts_unapproved"
RESTARTS_UNTRACED = "restarts_untraced"
# Server facts a question says (issue 37): the pipeline comes from a fork, or whether it does could not be read.
FROM_FORK = "from_fork"
FORK_UNREAD = "fork_unread"
NOT_FROM_FORK = "not_from_fork"  # said too: a missing line would read like a server that never looked
REACTIVATES = "reactivates"
UNKNOWN_RECORD = "unknown_record"
RECORD_UNREAD = "record_unread"
SHADOWS_ORGANIZATION_SECRET = "shadows_organization_secret"  # noqa: S105 - a reason id, not a secret
SHADOWS_GLOBAL_SECRET = "shadows_global_secret"  # noqa: S105 - a reason id, not a secret
UNDRAINS_AGENT = "undrains_agent"
# guard.md §1c: starting a pipeline that Woodpecker never holds (manual, cron).
SETS_VARIABLES = "sets_variables"
BRANCH_HELD = "branch_held"
BRANCH_UNAPPROVED = "branch_unapproved"
BRANCH_UNREAD = "branch_unread"
BRANCH_UNLISTED = "branch_unlisted"
EVERY_EVENT_HELD = "every_event_held"
ADDS_UNHELD_EVENT = "adds_unheld_event"

# Strictest last. A stored value not in this list counts as the strictest (fail closed).
REQUIRE_APPROVAL_ORDER = ("none", "forks", "pull_requests", "all_events")
# Repository visibility, narrowest first.
VISIBILITY_ORDER = ("private", "internal", "public")
TRUSTED_FLAGS = {
    "trusted_network": GRANTS_TRUSTED_NETWORK,
    "trusted_volumes": GRANTS_TRUSTED_VOLUMES,
    "trusted_security": GRANTS_TRUSTED_SECURITY,
}
PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_closed", "pull_request_metadata"})
# Events whose pipelines Woodpecker never holds for approval (server/pipeline/gated.go).
UNHELD_EVENTS = frozenset({"manual", "cron"})
# Events a held pipeline can have: every other one Woodpecker knows, in its own order.
HELD_EVENTS = (
    "push",
    "pull_request",
    "pull_request_closed",
    "pull_request_metadata",
    "tag",
    "release",
    "deployment",
)
# Woodpecker's largest page (perPage over 50 is reset to 50): a full page may have more behind it.
BRANCH_PAGE = 50
# Pages of the forge's branch list read to find a start's branch by its exact name (50 each).
BRANCH_LIST_PAGES = 10
SILENT_LEVELS = frozenset({"fatal", "panic", "disabled"})
# How many parents restart_pipeline reads back from a re-run to the first run of its chain ("origin_1"...).
ORIGIN_HOPS = 8


def _passed_true(args: Mapping[str, Any], name: str) -> bool:
    # Anything passed that is not an explicit false (or null) counts as granting: fail closed.
    value = args.get(name)
    return value is not None and value is not False


def _approval_rank(value: object) -> int:
    if isinstance(value, str) and value in REQUIRE_APPROVAL_ORDER:
        return REQUIRE_APPROVAL_ORDER.index(value)
    return len(REQUIRE_APPROVAL_ORDER) - 1


def _visibility_rank(value: object, unknown: int) -> int:
    if isinstance(value, str) and value in VISIBILITY_ORDER:
        return VISIBILITY_ORDER.index(value)
    return unknown


def _another(stored: object, key: str, wanted: object) -> bool:
    """Whether the object read for the comparison names another object than the call does (a cache
    or a server that answered the wrong read). Such an answer counts as unread: the rule fails closed."""
    found = stored.get(key) if isinstance(stored, Mapping) else None
    return found is not None and found != wanted


def _str_items(value: object) -> frozenset[str] | None:
    """The strings of a JSON list, or None when it is not a list of strings."""
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None


@dataclass(frozen=True, slots=True)
class ScopeInstance:
    """repair_repository: asks only for the whole instance."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return False

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        return frozenset({SCOPE_INSTANCE}) if args.get("scope") == "instance" else frozenset()


@dataclass(frozen=True, slots=True)
class GrantsAdmin:
    """create_user and update_user: asks when the account becomes an instance admin."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return False

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        return frozenset({GRANTS_ADMIN}) if _passed_true(args, "admin") else frozenset()


@dataclass(frozen=True, slots=True)
class WidensRepository:
    """update_repository: a trust grant, a lower require_approval, a wider visibility, deployments
    turned on, or pull requests turned on while nothing waits for approval."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        # A trust grant asks without a read; the rest compare against the stored repository.
        return (
            "require_approval" in args
            or "visibility" in args
            or _passed_true(args, "allow_deploy")
            or _passed_true(args, "allow_pr")
        )

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        if _another(current, "id", args.get("repo_id")):
            current = None
        found = {reason for flag, reason in TRUSTED_FLAGS.items() if _passed_true(args, flag)}
        stored = current if current is not None else {}
        if "require_approval" in args:
            # An unread or unrecognised stored value is the strictest, so any known lower value asks.
            if _approval_rank(args["require_approval"]) < _approval_rank(stored.get("require_approval")):
                found.add(LOWERS_REQUIRE_APPROVAL)
        if "visibility" in args:
            # Unread or unrecognised: the stored value counts as private, a wanted one as public.
            widest = len(VISIBILITY_ORDER) - 1
            wanted = _visibility_rank(args["visibility"], widest)
            if wanted > _visibility_rank(stored.get("visibility"), 0):
                found.add(SETS_PUBLIC if wanted == widest else SETS_INTERNAL)
        if _passed_true(args, "allow_deploy") and stored.get("allow_deploy") is not True:
            found.add(ALLOWS_DEPLOY)
        if _passed_true(args, "allow_pr") and stored.get("allow_pr") is not True:
            # require_approval after the call: the value passed, else the stored one. Unread counts as
            # none (fail closed); a stored value read but not recognised counts as the strictest.
            if "require_approval" in args:
                after: object = args["require_approval"]
            elif current is None:
                after = REQUIRE_APPROVAL_ORDER[0]
            else:
                after = stored.get("require_approval")
            if _approval_rank(after) == 0:
                found.add(ALLOWS_PR_UNAPPROVED)
        return frozenset(found)


@dataclass(frozen=True, slots=True)
class NewValueOrWidening:
    """update_secret: a new value, an added pull-request event, an emptied image list, or an image
    added to a secret limited to images (it then reaches a plugin image it did not reach)."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return "events" in args or "images" in args

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        if _another(current, "name", args.get("name")):
            current = None
        found: set[str] = set()
        if args.get("value") is not None:
            found.add(NEW_VALUE)
        if "events" in args:
            wanted = _str_items(args["events"])
            # Unread, missing or malformed stored events: assume the secret has none.
            had = _str_items(current.get("events")) if current is not None else None
            if wanted is None or (wanted & PULL_REQUEST_EVENTS) - (had or frozenset()):
                found.add(ADDS_PULL_REQUEST_EVENT)
        if "images" in args and isinstance(args["images"], list | tuple) and len(args["images"]) == 0:
            if current is None:
                found.add(EMPTIES_IMAGES)
            else:
                stored = current.get("images")
                # null and [] both mean "no restriction now"; anything unreadable counts as a restriction.
                if stored is not None and not (isinstance(stored, list | tuple) and len(stored) == 0):
                    found.add(EMPTIES_IMAGES)
        elif "images" in args and _adds_image(args["images"], current):
            found.add(ADDS_IMAGE)
        return frozenset(found)


def _adds_image(wanted: object, current: Mapping[str, Any] | None) -> bool:
    """Whether a non-empty image list names an image the stored secret is not limited to now.

    A secret without images (null or []) reaches every image, so any list narrows it. An unread
    or unreadable stored list counts as a restriction the call may widen (fail closed)."""
    items = _str_items(wanted)
    if items is None:
        return True
    if current is None:
        return True
    stored = current.get("images")
    if stored is None or (isinstance(stored, list | tuple) and len(stored) == 0):
        return False
    had = _str_items(stored)
    return had is None or bool(items - had)


@dataclass(frozen=True, slots=True)
class NewPassword:
    """update_registry: asks whenever a password comes with the call."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return False

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        return frozenset({NEW_PASSWORD}) if args.get("password") is not None else frozenset()


@dataclass(frozen=True, slots=True)
class SilencesServer:
    """set_log_level: fatal, panic and disabled suppress nearly every record."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return False

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        level = args.get("level")
        if isinstance(level, str) and level.strip().lower() not in SILENT_LEVELS:
            return frozenset()
        return frozenset({SILENCES_SERVER})


@dataclass(frozen=True, slots=True)
class BypassesApproval:
    """restart_pipeline: a re-run as a deployment, of a declined pipeline, or of one that would need an
    approval it never had. Woodpecker restarts anything but a blocked pipeline and never re-checks approval.

    `current` is {"pipeline": <the source pipeline>, "repo": <its repository>} and, for a re-run, its
    parents back to the first run ("origin_1", ...): the review on record is the one made there
    (`review_origin`), and a decline there counts as one here. A chain not read to its first run asks.
    """

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        # A deployment asks whatever the pipeline was: nothing to read.
        return args.get("event") != "deployment"

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        if "event" in args:
            # deployment is the only override the schema lets through; anything else fails closed too.
            return frozenset({RESTARTS_AS_DEPLOYMENT})
        pipeline = current.get("pipeline") if current is not None else None
        repo = current.get("repo") if current is not None else None
        if (
            not isinstance(pipeline, Mapping)
            or not isinstance(repo, Mapping)
            or _another(pipeline, "number", args.get("number"))
            or _another(repo, "id", args.get("repo_id"))
        ):
            # Unread, unreadable, or another pipeline or repository: assume the widening case.
            return frozenset({RESTARTS_UNAPPROVED})
        found: set[str] = set()
        origin = review_origin(pipeline, current or {})
        if origin is None:
            found.add(RESTARTS_UNTRACED)
        if pipeline.get("status") == "declined" or (
            origin is not None and origin.get("status") == "declined"
        ):
            found.add(RESTARTS_DECLINED)
        # No approval on record: none read back to, no reviewed_by there, or the review there a decline
        # (a declined pipeline itself already asks as declined, whoever declined it).
        if needs_approval(repo, pipeline) and (
            origin is None or not _reviewed(origin) or (origin is not pipeline and not _approved(origin))
        ):
            found.add(RESTARTS_UNAPPROVED)
        if found and pipeline.get("from_fork") is True:
            # Said where it already asks; a fork's pipeline alone is not a reason to ask about a restart.
            found.add(FROM_FORK)
        return frozenset(found)


def parent_number(pipeline: Mapping[str, Any]) -> int | None:
    """A pipeline's parent number: 0 for a first run, None when the answer does not say."""
    parent = pipeline.get("parent", 0)
    if parent is None:
        return 0
    return parent if isinstance(parent, int) and not isinstance(parent, bool) and parent >= 0 else None


def _first_run(
    pipeline: Mapping[str, Any], parent_at: Callable[[int, int], object]
) -> Mapping[str, Any] | None:
    """The first run of a pipeline's chain of parents, each found by `parent_at(hop, number)` (hop 1 is
    the pipeline's own parent); None when one is not found, is another number, or lies past ORIGIN_HOPS."""
    node = pipeline
    for hop in range(1, ORIGIN_HOPS + 1):
        parent = parent_number(node)
        if parent is None:
            return None
        if parent == 0:
            return node
        found = parent_at(hop, parent)
        if not isinstance(found, Mapping) or found.get("number") != parent:
            return None
        node = found
    return node if parent_number(node) == 0 else None


def review_origin(pipeline: Mapping[str, Any], current: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first run of a pipeline's chain of parents, where its review on record was made.

    Woodpecker 3.17 sets reviewed_by on approve and on decline alike, and a restart copies it (with
    everything else) from the pipeline it re-runs and is never held itself: a re-run's reviewed_by is
    whatever review its first run had. The parents are `current["origin_1"]`, `["origin_2"]`, ... (one
    read each); None when one is missing, 404, for another number, or the chain is longer than read.
    """
    return _first_run(pipeline, lambda hop, _number: current.get(f"origin_{hop}"))


def _approved(origin: Mapping[str, Any]) -> bool:
    """Whether a first run's review was an approval: reviewed_by is also set by a decline."""
    return _reviewed(origin) and origin.get("status") != "declined"


def needs_approval(repo: Mapping[str, Any], pipeline: Mapping[str, Any]) -> bool:
    """Woodpecker 3.17's needsApproval (server/pipeline/gated.go) under the repository's current settings.

    Fails closed: an unrecognised require_approval counts as all_events, an unreadable allow list as empty.
    """
    event = pipeline.get("event")
    if event in ("cron", "manual"):
        return False
    allowed = _str_items(repo.get("approval_allowed_users")) or frozenset()
    author = pipeline.get("author")
    if isinstance(author, str) and author in allowed:
        return False
    mode = repo.get("require_approval")
    is_pull_request = event in PULL_REQUEST_EVENTS
    if mode == "none":
        return False
    if mode == "forks":
        return is_pull_request and pipeline.get("from_fork") not in (None, False)
    if mode == "pull_requests":
        return is_pull_request
    return True


@dataclass(frozen=True, slots=True)
class Reactivates:
    """activate_repository: asks when Woodpecker already holds an inactive record of the repository.

    `current` is {"repos": <GET /user/repos?all=true>, "record": <GET /repos/lookup/<listed full name>>}:
    the forge's repositories for the caller, each merged with Woodpecker's record where the caller has a
    permission row on it (a record has an id), and, for an entry without one, the record Woodpecker holds
    under its name (ABSENT on a 404; left out when unread). Only that 404 says there is no record.
    """

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return True

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        listed = current.get("repos") if current is not None else None
        if not isinstance(listed, list | tuple):
            return frozenset({UNKNOWN_RECORD})
        wanted = args.get("forge_remote_id")
        matches = [r for r in listed if isinstance(r, Mapping) and r.get("forge_remote_id") == wanted]
        if not matches:
            # Not listed for this account: this server cannot tell whether Woodpecker knows it.
            return frozenset({UNKNOWN_RECORD})
        # A stored record has an id; an active one is refused by Woodpecker (409) and changes nothing.
        if any(r.get("id") not in (None, 0) and r.get("active") is not True for r in matches):
            return frozenset({REACTIVATES})
        if all(r.get("id") not in (None, 0) for r in matches):
            return frozenset()
        # The list merges a record only where the caller has a permission row, while POST /repos finds
        # it by forge_remote_id whatever the rows: only the lookup by name tells (`current["record"]`).
        record = current.get("record") if current is not None else None
        if absent(current, "record"):
            return frozenset()
        if not isinstance(record, Mapping) or record.get("forge_remote_id") != wanted:
            # Unread, or the name holds another forge repository's record: a record of this one may
            # still be stored under an older name.
            return frozenset({RECORD_UNREAD})
        return frozenset() if record.get("active") is True else frozenset({REACTIVATES})


@dataclass(frozen=True, slots=True)
class PullRequestEvents:
    """create_secret: asks when the new secret reaches pull-request pipelines."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return False

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        events = _str_items(args.get("events"))
        if events is None or events & PULL_REQUEST_EVENTS:
            return frozenset({ADDS_PULL_REQUEST_EVENT})
        return frozenset()


# The levels a secret of each scope takes precedence over (repository < organization < global), each
# with the key of its probe in `current` and the reason it gives. An unrecognised scope: every level.
_WIDER_SECRETS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "repository": (("organization", SHADOWS_ORGANIZATION_SECRET), ("global", SHADOWS_GLOBAL_SECRET)),
    "organization": (("global", SHADOWS_GLOBAL_SECRET),),
    "global": (),
}


@dataclass(frozen=True, slots=True)
class PullRequestEventsOrShadows:
    """create_secret: the new secret reaches pull-request pipelines (PullRequestEvents), or a secret of
    its name exists at a wider level, which pipelines of this repository or organization then no longer get:
    this one replaces it for them, unasked (guard.md §1c).

    `current` holds one probe per wider level ("organization": the repository's organization's secret
    of that name, "global": the global one; domain/woodpecker/reads.py). Only a clear 404 says there is
    none; a key left out (a 403, a 5xx, an unreadable repository) counts as one that exists.
    """

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return args.get("scope") != "global"

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        found = set(PullRequestEvents().reasons(args, current))
        wider = _WIDER_SECRETS.get(str(args.get("scope")), _WIDER_SECRETS["repository"])
        found.update(reason for key, reason in wider if not absent(current, key))
        return frozenset(found)


@dataclass(frozen=True, slots=True)
class Undrains:
    """update_agent: no_schedule turned false on an agent that has it true puts a drained agent back to
    taking workflows, with their secrets (create_agent always asks for the same reach).

    `current` is {"agent": <the stored agent>}. Unread, unreadable, another agent's record, or a stored
    no_schedule that is not plainly false: counted as drained (fail closed).
    """

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return "no_schedule" in args and args["no_schedule"] is not True

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        if "no_schedule" not in args or args["no_schedule"] is True:
            return frozenset()
        agent = current.get("agent") if current is not None else None
        if not isinstance(agent, Mapping) or _another(agent, "id", args.get("agent_id")):
            return frozenset({UNDRAINS_AGENT})
        return frozenset() if agent.get("no_schedule") is False else frozenset({UNDRAINS_AGENT})


def branch_to_check(args: Mapping[str, Any], answers: Mapping[str, Any]) -> str | None:
    """The branch a start runs: the call's `branch`, else the stored cron's (`answers["cron"]`, when the
    call names a cron), else the repository's default branch (`answers["repo"]`), as Woodpecker picks
    it; None when the answer that names it is missing or unreadable."""
    named = args.get("branch")
    if isinstance(named, str) and named:
        return named
    if "cron_id" in args:
        cron = answers.get("cron")
        if not isinstance(cron, Mapping) or _another(cron, "id", args.get("cron_id")):
            return None
        stored = cron.get("branch")
        if not isinstance(stored, str):
            return None
        if stored:
            return stored
    repo = answers.get("repo")
    if not isinstance(repo, Mapping) or _another(repo, "id", args.get("repo_id")):
        return None
    default = repo.get("default_branch")
    return default if isinstance(default, str) and default else None


def unreviewed_events(repo: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The events of a branch's pipelines that can need approval under `repo`'s current settings
    (the pull-request events under forks and pull_requests, every held event otherwise, an unknown
    mode counting as all_events); None under `none`, where nothing needs approval."""
    mode = repo.get("require_approval")
    if mode == "none":
        return None
    if mode in ("forks", "pull_requests"):
        return tuple(e for e in HELD_EVENTS if e in PULL_REQUEST_EVENTS)
    return HELD_EVENTS


def _listed(value: object, branch: str, status: str | None = None) -> list[Mapping[str, Any]] | None:
    """A page of a branch's pipelines, or None when it is not one: not a list of objects, or one
    naming another branch or (for a status-filtered read) another status than was asked for."""
    if not isinstance(value, list | tuple) or not all(isinstance(p, Mapping) for p in value):
        return None
    for p in value:
        if p.get("branch") != branch or (status is not None and p.get("status") != status):
            return None
    return list(value)


def pull_request_events() -> tuple[str, ...]:
    """The pull-request events, in Woodpecker's order: their pipelines run the pull request's head."""
    return tuple(e for e in HELD_EVENTS if e in PULL_REQUEST_EVENTS)


def source_branch(pipeline: Mapping[str, Any]) -> str | None:
    """The branch a pull request's pipeline runs the code of: the head of its `refspec` (`head:base`,
    as Woodpecker's forge drivers write it); None when the refspec does not say."""
    refspec = pipeline.get("refspec")
    if not isinstance(refspec, str) or refspec.count(":") != 1:
        return None
    head = refspec.split(":", 1)[0]
    return head or None


def _from_branch(value: object, branch: str, status: str | None = None) -> list[Mapping[str, Any]] | None:
    """Of a page of the repository's pull-request pipelines (any target branch), those that run `branch`'s
    code: Woodpecker files a pull request's pipeline under the branch it goes into, so the branch's own
    lists never show them. None when the page cannot tell: not a list of objects, a pipeline of another
    event or status than was asked for, one whose refspec names no head, or a full page without one
    from the branch (older ones lie beyond it)."""
    if not isinstance(value, list | tuple) or not all(isinstance(p, Mapping) for p in value):
        return None
    found = []
    for p in value:
        if p.get("event") not in PULL_REQUEST_EVENTS or (status is not None and p.get("status") != status):
            return None
        source = source_branch(p)
        if source is None:
            return None
        if source == branch:
            found.append(p)
    if not found and len(value) >= BRANCH_PAGE:
        return None
    return found


def branch_listed(answers: Mapping[str, Any], branch: str) -> bool:
    """Whether the forge's branch list ("branches_1", "branches_2", ... one page of BRANCH_PAGE names
    each) names `branch` exactly. A page missing or not a list of names before the name is found, or
    the name not found within BRANCH_LIST_PAGES full pages, is False."""
    for number in range(1, BRANCH_LIST_PAGES + 1):
        page = answers.get(f"branches_{number}")
        if not isinstance(page, list | tuple) or not all(isinstance(b, str) for b in page):
            return False
        if branch in page:
            return True
        if len(page) < BRANCH_PAGE:
            return False
    return False


def branch_reasons(args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
    """Why starting a manual or cron pipeline on the branch would go around an approval.

    `current` holds "repo" (its approval settings), "blocked" and "declined" (the branch's pipelines
    of each status) and, unless nothing needs approval, "unreviewed" (the branch's pipelines of the
    events `unreviewed_events` names); "pr_blocked", "pr_declined" and "pr_unreviewed" the same of the
    repository's pull-request pipelines into any branch, of which those from this one count
    (`_from_branch`); "cron" too for a call that names one. Each list is one page of
    BRANCH_PAGE, newest first. Anything missing, malformed, answering another branch, repository or
    cron, or a full page of "unreviewed" without a finding, counts as unread: BRANCH_UNREAD (it asks).
    A repository that holds every event (all_events, or a mode not recognised) always asks,
    EVERY_EVENT_HELD: the branch's newest commit may never have had a pipeline to approve.

    The lists are filtered by the branch's name exactly, while Woodpecker starts the pipeline at whatever
    the forge's BranchHead answers for that name (GitHub follows a renamed branch's old name to the new
    branch): a name the forge's branch list ("branches_<n>") does not hold exactly asks, BRANCH_UNLISTED.
    """
    answers = current if current is not None else {}
    branch = branch_to_check(args, answers)
    repo = answers.get("repo")
    if branch is None or not isinstance(repo, Mapping) or _another(repo, "id", args.get("repo_id")):
        return frozenset({BRANCH_UNREAD})
    found: set[str] = set()
    if _approval_rank(repo.get("require_approval")) == len(REQUIRE_APPROVAL_ORDER) - 1:
        # Every event waits for approval, yet a manual or cron pipeline runs the branch's newest commit,
        # which may have left no pipeline to approve ([skip ci], a config without push) or sit above an
        # approved one: the API shows no branch head to compare, so such a start always asks.
        found.add(EVERY_EVENT_HELD)
    if not branch_listed(answers, branch):
        found.add(BRANCH_UNLISTED)
    for status in ("blocked", "declined"):
        listed = _listed(answers.get(status), branch, status)
        if listed is None:
            found.add(BRANCH_UNREAD)
        elif listed:
            found.add(BRANCH_HELD)
    if unreviewed_events(repo) is not None:
        listed = _listed(answers.get("unreviewed"), branch)
        if listed is None:
            found.add(BRANCH_UNREAD)
        else:
            if any(needs_approval(repo, p) and not _approved_in(p, listed) for p in listed):
                found.add(BRANCH_UNAPPROVED)
            elif len(listed) >= BRANCH_PAGE:
                found.add(BRANCH_UNREAD)  # older pipelines lie beyond the page read
    # A pull request from this branch into another: its pipeline is filed under the other branch, and
    # runs this branch's code (found on a real Woodpecker 3.17: a start on the pull request's own
    # branch ran its held code unasked).
    for status in ("blocked", "declined"):
        from_here = _from_branch(answers.get(f"pr_{status}"), branch, status)
        if from_here is None:
            found.add(BRANCH_UNREAD)
        elif from_here:
            found.add(BRANCH_HELD)
    if unreviewed_events(repo) is not None:
        page = answers.get("pr_unreviewed")
        from_here = _from_branch(page, branch)
        if from_here is None:
            found.add(BRANCH_UNREAD)
        elif any(needs_approval(repo, p) and not _approved_in(p, list(page or [])) for p in from_here):
            found.add(BRANCH_UNAPPROVED)
    return frozenset(found)


def _approved_in(pipeline: Mapping[str, Any], listed: list[Mapping[str, Any]]) -> bool:
    """Whether a listed pipeline's review on record is an approval: the review of the first run of its
    chain of parents (`review_origin`), looked up on the same page; a re-run whose first run is not on
    the page counts as unapproved (fail closed)."""
    by_number = {p.get("number"): p for p in listed if p.get("number") is not None}
    origin = _first_run(pipeline, lambda _hop, number: by_number.get(number))
    return origin is not None and _approved(origin)


def _reviewed(pipeline: Mapping[str, Any]) -> bool:
    """Whether a review is on record: a non-empty reviewed_by, which an approval and a decline both set."""
    reviewed_by = pipeline.get("reviewed_by")
    return isinstance(reviewed_by, str) and reviewed_by != ""


@dataclass(frozen=True, slots=True)
class StartsPastApproval:
    """trigger_pipeline, create_cron and run_cron (and update_cron with `only_with_branch`): a manual or
    cron pipeline is never held, so starting one on a branch with a blocked, declined or unapproved
    pipeline runs that code unasked; and a trigger's variables reach every step (any name may change
    what a step's own tools run or fetch), so non-empty variables always ask.

    With `only_with_branch` (update_cron) only a change that can start runs on a branch is decided: a new
    branch, or `enabled: true` on a cron that is not enabled now (an unread cron counts as not enabled).
    """

    only_with_branch: bool = False

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return not self.only_with_branch or "branch" in args or _passed_true(args, "enabled")

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        found: set[str] = set()
        if "variables" in args:
            variables = args["variables"]
            if not isinstance(variables, Mapping) or len(variables) > 0:
                found.add(SETS_VARIABLES)
        if self.needs_current(args) and not self._already_enabled(args, current):
            found |= branch_reasons(args, current)
        return frozenset(found)

    def _already_enabled(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
        """update_cron re-enabling, on the same branch, a cron that is enabled already: no new run."""
        if not self.only_with_branch or "branch" in args:
            return False
        cron = current.get("cron") if current is not None else None
        return (
            isinstance(cron, Mapping)
            and not _another(cron, "id", args.get("cron_id"))
            and cron.get("enabled") is True
        )


def _requires_approval(args: Mapping[str, Any], repo: object) -> bool:
    """Whether a secret's repository holds any pipeline for approval (require_approval other than none).

    An organization or global secret reaches repositories this server did not read, and an unread,
    another or an unrecognised repository counts as the strictest: both require approval (fail closed).
    """
    if args.get("scope") != "repository":
        return True
    if not isinstance(repo, Mapping) or _another(repo, "id", args.get("repo_id")):
        return True
    return _approval_rank(repo.get("require_approval")) > 0


@dataclass(frozen=True, slots=True)
class SecretWidening:
    """update_secret: NewValueOrWidening's cases, and `manual` or `cron` added to the events of a secret
    that reaches a repository requiring approval (those pipelines are never held, so the secret then
    reaches code nobody approved).

    `current` is {"secret": <the stored secret>, "repo": <its repository, for a repository secret
    when events names manual or cron>}.
    """

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return NewValueOrWidening().needs_current(args)

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        stored = current.get("secret") if current is not None else None
        secret = stored if isinstance(stored, Mapping) else None
        found = set(NewValueOrWidening().reasons(args, secret))
        if "events" in args:
            wanted = _str_items(args["events"])
            if secret is not None and _another(secret, "name", args.get("name")):
                secret = None
            had = _str_items(secret.get("events")) if secret is not None else None
            added = wanted is None or bool((wanted & UNHELD_EVENTS) - (had or frozenset()))
            if added and _requires_approval(args, current.get("repo") if current is not None else None):
                found.add(ADDS_UNHELD_EVENT)
        return frozenset(found)


WOODPECKER_RULES: Mapping[str, WideningRule] = {
    "scope_instance": ScopeInstance(),
    "grants_admin": GrantsAdmin(),
    "widens_repository": WidensRepository(),
    "new_value_or_widening": SecretWidening(),
    "new_password": NewPassword(),
    "silences_server": SilencesServer(),
    "bypasses_approval": BypassesApproval(),
    "reactivates": Reactivates(),
    "pull_request_events_or_shadows": PullRequestEventsOrShadows(),
    "undrains": Undrains(),
    "starts_past_approval": StartsPastApproval(),
    "moves_cron_past_approval": StartsPastApproval(only_with_branch=True),
}
