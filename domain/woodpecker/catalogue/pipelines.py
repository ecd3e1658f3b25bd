"""Pipelines: listing, reading (config, metadata, why it failed), triggering, restarting, cancelling, approving and deleting them."""

import dataclasses
from collections.abc import Mapping
from typing import Any

from domain.guard.question import DEFAULT_LIMIT, labelled
from domain.tools import Arg, Catalogue, Endpoint, GuardRule, Is, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, FailedSteps, Ids, Listed, One, Waited
from domain.woodpecker.asking import Ask, because
from domain.woodpecker.before_asking import BLOCKED, EXISTING
from domain.woodpecker.catalogue.common import (
    BRANCH_RULES,
    CONFIRM_TOKEN,
    EVENTS,
    MAY_HAVE_STARTED,
    NUMBER,
    PAGING,
    PAGING_QUERY,
    REPO_ID,
    WRITE_DESTRUCTIVE,
    WRITE_IDEMPOTENT,
    WRITE_STARTS_BUILD,
    asks_always,
    read_tool,
    write_tool,
)
from domain.woodpecker.glances import FEED, PIPELINE
from domain.woodpecker.plans import FailureSummary, Resolve, WaitForPipeline
from domain.woodpecker.read_back import APPROVED, gone
from domain.woodpecker.reads import Probe
from domain.woodpecker.requests import Request, pipeline, segment
from domain.woodpecker.waiting import DEFAULT_WINDOW, MAX_WINDOW


def wait_window(default: int, ceiling: int) -> Param:
    """wait_for_pipeline's `timeout_seconds`: `default` when a call names none, at most `ceiling`."""
    why = (
        "under most clients' one-minute timeout"
        if ceiling == MAX_WINDOW
        else "as this server's operator set it for its clients"
    )
    return Param(
        "timeout_seconds",
        "integer",
        False,
        f"Longest wait in seconds; answers as soon as the pipeline finishes. At most {ceiling}, {why}.",
        constraints={"minimum": 1, "maximum": ceiling, "default": default},
    )


def with_wait_window(catalogue: Catalogue, default: int, ceiling: int) -> Catalogue:
    """The catalogue with wait_for_pipeline's window as the operator configured it (the same catalogue
    for the defaults); validation, the listed schema and the use case all read it from there."""
    if (default, ceiling) == (DEFAULT_WINDOW, MAX_WINDOW) or "wait_for_pipeline" not in catalogue:
        return catalogue
    window = wait_window(default, ceiling)

    def adjusted(tool: ToolSpec) -> ToolSpec:
        if tool.name != "wait_for_pipeline":
            return tool
        params = tuple(window if p.name == window.name else p for p in tool.params)
        return dataclasses.replace(tool, params=params)

    return Catalogue(tuple(map(adjusted, catalogue)))


# git's ref rules (git check-ref-format) for a branch that Woodpecker builds from.
_GIT_BRANCH_RULES: Mapping[str, Any] = {
    "minLength": 1,
    "maxLength": 250,
    "pattern": r"^(?!-)(?!.*\.\.)(?!.*@\{)(?!.*//)(?!.*/$)(?!.*\.lock$)(?!.*\.$)[^\x00-\x20\x7f\\~^:?*\[\]#%]+$",
}

# Variables Woodpecker sets itself: a trigger's variables are applied after them and reach every
# step, the clone included, so overriding one (CI_COMMIT_SHA) would build another commit unheld.
_VARIABLE_NAME_RULES: Mapping[str, Any] = {
    "minLength": 1,
    "maxLength": 200,
    "pattern": r"^(?!(CI_|DRONE_|WOODPECKER_|PLUGIN_|LD_|DYLD_|GIT_)|(PATH|HOME|SHELL)$)[A-Za-z_][A-Za-z0-9_]*$",
}

# Documented additions beyond the shared catalogue (see the package's docstring).
ADDED: tuple[str, ...] = ("get_pipeline_failure_summary", "resolve", "wait_for_pipeline")


# The fork, a server fact (Woodpecker's from_fork), on its own labelled line of the questions that
# run a pipeline's code (issue 37): approve_pipeline reads it before asking (before_asking.BLOCKED),
# restart_pipeline with the source pipeline its rule reads, where it asks.
_FROM_FORK = because(
    r.FROM_FORK,
    "A fork is a repository other than this one: whoever can push to it wrote this code.",
    lambda args: ["From a fork: yes (Woodpecker's from_fork)"],
)
_NOT_FROM_FORK = because(r.NOT_FROM_FORK, "", lambda args: ["From a fork: no (Woodpecker's from_fork)"])
_FORK_UNREAD = because(
    r.FORK_UNREAD,
    "Whether its code comes from a fork could not be read: assume it does.",
    lambda args: ["From a fork: unknown (the pipeline could not be read)"],
)


def _restart_sources(args: Mapping[str, Any]) -> Mapping[str, Request | Probe] | None:
    """The source pipeline (status, event, author, fork, review) and the repository's approval
    settings, unless the restart is a deployment (which asks whatever they say); then, for a re-run,
    its parents one by one back to the first run, whose review is the one on record (rules.review_origin)."""
    if args.get("event") == "deployment":
        return None
    repo = f"/api/repos/{segment(args['repo_id'])}"
    reads: dict[str, Request | Probe] = {"pipeline": pipeline(args), "repo": Request("GET", repo)}

    def parent_of(hop: int) -> Probe:
        def build(_args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
            child = answers.get("pipeline" if hop == 1 else f"origin_{hop - 1}")
            parent = r.parent_number(child) if isinstance(child, Mapping) else None
            if not parent:
                return None  # a first run, or nothing to follow: the rule decides from what it has
            return Request("GET", f"{repo}/pipelines/{parent}")

        return Probe(build)

    for hop in range(1, r.ORIGIN_HOPS + 1):
        reads[f"origin_{hop}"] = parent_of(hop)
    return reads


def branch_sources(args: Mapping[str, Any]) -> Mapping[str, Probe]:
    """What a start's guard reads (guard.md §1c): the stored cron when the call names one, the
    repository's approval settings (and default branch), then one page each of the branch's blocked,
    declined and possibly unapproved pipelines (rules.branch_reasons). Each read is worked out from
    the answers before it, and a failed one counts as unread (it asks)."""
    repo = f"/api/repos/{segment(args['repo_id'])}"
    reads: dict[str, Probe] = {}
    if "cron_id" in args:
        reads["cron"] = Probe(Request("GET", f"{repo}/cron/{segment(args['cron_id'])}"))
    reads["repo"] = Probe(Request("GET", repo))

    def listing(status: str | None) -> Probe:
        def build(_args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
            branch = r.branch_to_check(args, answers)
            stored = answers.get("repo")
            if branch is None or not isinstance(stored, Mapping):
                return None  # the rule asks without it
            query = {"branch": branch, "page": "1", "perPage": str(r.BRANCH_PAGE)}
            if status is not None:
                query["status"] = status
            else:
                events = r.unreviewed_events(stored)
                if events is None:
                    return None  # nothing needs approval: nothing to read
                query["event"] = ",".join(events)
            return Request("GET", f"{repo}/pipelines", query=query)

        return Probe(build)

    reads["blocked"] = listing("blocked")
    reads["declined"] = listing("declined")
    reads["unreviewed"] = listing(None)

    def pull_requests(status: str | None) -> Probe:
        # The repository's pull-request pipelines into any branch: those from this branch run its code.
        def build(_args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
            stored = answers.get("repo")
            if r.branch_to_check(args, answers) is None or not isinstance(stored, Mapping):
                return None
            events = r.pull_request_events()
            if status is None:
                events = tuple(e for e in r.unreviewed_events(stored) or () if e in events)
                if not events:
                    return None
            query = {"event": ",".join(events), "page": "1", "perPage": str(r.BRANCH_PAGE)}
            if status is not None:
                query["status"] = status
            return Request("GET", f"{repo}/pipelines", query=query)

        return Probe(build)

    reads["pr_blocked"] = pull_requests("blocked")
    reads["pr_declined"] = pull_requests("declined")
    reads["pr_unreviewed"] = pull_requests(None)

    def branches(number: int) -> Probe:
        # The forge's branch names, a page at a time until the branch is found or a page is short.
        def build(_args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
            branch = r.branch_to_check(args, answers)
            if branch is None:
                return None
            if number > 1:
                before = answers.get(f"branches_{number - 1}")
                if not isinstance(before, list) or len(before) < r.BRANCH_PAGE or branch in before:
                    return None
            query = {"page": str(number), "perPage": str(r.BRANCH_PAGE)}
            return Request("GET", f"{repo}/branches", query=query)

        return Probe(build)

    for number in range(1, r.BRANCH_LIST_PAGES + 1):
        reads[f"branches_{number}"] = branches(number)
    return reads


def _variable_lines(args: Mapping[str, Any]) -> list[str]:
    """Each variable's name on its own labelled line, in order, flattened; values are never shown. A name
    is the caller's, in the alphabet `_VARIABLE_NAME_RULES` allows (no space, so no sentence): cut only
    past that bound, like every plain name, so two long names never read alike."""
    variables = args.get("variables")
    names = sorted(str(n) for n in variables) if isinstance(variables, Mapping) else []
    bound = max(DEFAULT_LIMIT, int(_VARIABLE_NAME_RULES["maxLength"]))
    return [labelled("Variable name", name, limit=bound) for name in names]


# The reads branch_sources makes, as the tool reference lists them.
BRANCH_READS = (
    Endpoint(
        "GET", "/api/repos/{repo_id}", step="to decide whether it asks (approval settings, default branch)"
    ),
    Endpoint(
        "GET",
        "/api/repos/{repo_id}/pipelines",
        step=(
            "then one page of 50 each (branch, status or event filtered): the branch's blocked, its "
            "declined, and (unless require_approval is none) its pipelines of the events that can need approval"
        ),
    ),
    Endpoint(
        "GET",
        "/api/repos/{repo_id}/branches",
        step=(
            f"then the forge's branch names, 50 a page, until the branch is found (at most {r.BRANCH_LIST_PAGES} "
            "pages): the lists above match its name exactly, the forge may resolve it to another branch"
        ),
    ),
)

# Why a start asks on a branch (guard.md §1c): shared by trigger_pipeline and the cron tools.
BRANCH_CLAUSES = (
    because(
        r.EVERY_EVENT_HELD,
        "The repository requires approval for every event, and Woodpecker never holds a manual or cron "
        "pipeline: this runs the branch's newest commit, which may never have had a pipeline to approve.",
    ),
    because(
        r.BRANCH_HELD,
        "The branch has a pipeline that is waiting for approval or was declined: this runs the branch's "
        "code anyway, going around approve_pipeline.",
    ),
    because(
        r.BRANCH_UNAPPROVED,
        "Under the repository's current settings a pipeline of the branch needs an approval and none is "
        "on record: this goes around approve_pipeline.",
    ),
    because(
        r.BRANCH_UNLISTED,
        "The forge does not list a branch by exactly this name, yet may start one for it (a renamed "
        "branch's old name reaches the new branch), and that branch's pipelines were not read.",
    ),
    because(
        r.BRANCH_UNREAD,
        "This server could not read all of the branch's recent pipelines, so it cannot tell whether this "
        "goes around an approval.",
    ),
)
STARTS_CONDITION = (
    "whenever the repository requires approval for every event (all_events: its newest commit may never "
    "have had a pipeline to approve); when the branch has a pipeline that is blocked or declined, or one "
    "that needs approval under the "
    "repository's current settings (Woodpecker's needsApproval rule) with no review on record "
    "(no approval on the first run of its chain of re-runs, looked up on the same page: a decline sets "
    "reviewed_by too); a read that fails or does not reach the branch's oldest such pipeline "
    f"(one page of {r.BRANCH_PAGE} each, newest first) asks too, and so does a branch the forge's branch list "
    "does not hold by exactly that name"
)


TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_pipelines",
        group="pipelines",
        essential=True,
        untrusted_output=True,
        description=(
            "A repository's pipelines, newest first, filtered. Other tools take the number, not the id."
        ),
        params=(
            REPO_ID,
            Param("branch", "string", False, "", constraints=BRANCH_RULES),
            Param("event", "enum", False, "", choices=EVENTS),
            Param(
                "status",
                "enum",
                False,
                "blocked: awaiting approval.",
                choices=(
                    "skipped",
                    "pending",
                    "running",
                    "success",
                    "failure",
                    "killed",
                    "canceled",
                    "error",
                    "blocked",
                    "declined",
                    "created",
                ),
            ),
            Param(
                "ref",
                "string",
                False,
                "Ref contains this, e.g. refs/tags/.",
                constraints={"minLength": 1, "maxLength": 250},
            ),
            Param(
                "before",
                "string",
                False,
                "",
                constraints={"format": "date-time"},
            ),
            Param(
                "after",
                "string",
                False,
                "",
                constraints={"format": "date-time"},
            ),
            *PAGING,
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/repos/{repo_id}/pipelines",
                query={
                    **PAGING_QUERY,
                    "branch": Arg("branch"),
                    "event": Arg("event"),
                    "status": Arg("status"),
                    "ref": Arg("ref"),
                    "before": Arg("before"),
                    "after": Arg("after"),
                },
            ),
        ),
        notes=(
            "Always a JSON array, [] when empty; entries have no repo_id and no workflows.",
            "An unknown event or status, or before/after that are not RFC 3339, answer 400.",
            "ref is a substring (SQL LIKE) match; before/after compare with created.",
        ),
        answer=Listed("pipelines", PIPELINE),
    ),
    read_tool(
        "get_pipeline",
        group="pipelines",
        essential=True,
        untrusted_output=True,
        description=(
            "A pipeline's workflows and steps (id, state, exit code); get_step_logs takes these step ids."
        ),
        params=(REPO_ID, NUMBER),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),),
        notes=(
            (
                "Steps are in workflows[].children[] in the API; present them as steps. The step id is "
                "Step.id, not pid."
            ),
            "Woodpecker also accepts 'latest' for the number; this tool takes numbers only.",
            "Message, title, branch, variables and changed files are pushed content.",
        ),
        answer=One("pipeline", "Pipeline {number} of repository {repo_id}: {status}."),
    ),
    read_tool(
        "get_pipeline_config",
        group="pipelines",
        untrusted_output=True,
        description=("The YAML a pipeline was built from, as at its commit."),
        params=(REPO_ID, NUMBER),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}/config"),),
        notes=(
            (
                "Answers [Config {hash, name, data}]; data is base64 (a Go []byte), not the integer "
                "array the swagger claims."
            ),
            (
                "Bound the work before decoding: at most 20 files and 200 000 bytes each in the "
                "reference, saying what was cut. Strip terminal control characters."
            ),
        ),
        answer=Listed("files"),
    ),
    read_tool(
        "get_pipeline_metadata",
        group="pipelines",
        untrusted_output=True,
        description=("The metadata behind a pipeline's CI_* variables."),
        params=(REPO_ID, NUMBER),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}/metadata"),),
        notes=("Needs push permission; without it Woodpecker answers 404.",),
        answer=One("metadata", "Metadata of pipeline {number} of repository {repo_id}."),
    ),
    read_tool(
        "list_queued_pipelines",
        group="pipelines",
        admin="always",
        untrusted_output=True,
        description=("Pending and running pipelines of the instance. Instance admin only."),
        endpoints=(Endpoint("GET", "/api/pipelines"),),
        notes=(
            ("Answers [Feed] (repo_id, full_name and pipeline summary fields); not paged; always an array."),
        ),
        answer=Listed("pipelines", FEED),
    ),
    write_tool(
        "trigger_pipeline",
        group="pipelines",
        guard=GuardRule(
            when="starts_past_approval",
            condition=f"Asks when variables is non-empty (their names are listed, never their values); {STARTS_CONDITION}.",
            targets=("repo_id",),
            body_bound=True,
            needs_current_state=True,
        ),
        annotations=WRITE_STARTS_BUILD,
        essential=True,
        untrusted_output=True,
        description=(
            "Starts a manual pipeline at a branch's head. Not idempotent: every call,"
            " a repeat too, starts another run. Asks a person for variables or a"
            " branch with a blocked, declined or unapproved pipeline."
        ),
        params=(
            REPO_ID,
            Param(
                "branch",
                "string",
                True,
                "",
                constraints=_GIT_BRANCH_RULES,
            ),
            Param(
                "message",
                "string",
                False,
                "Shown by 3.18+.",
                constraints={"maxLength": 500},
            ),
            Param(
                "variables",
                "object",
                False,
                (
                    "Strings; never Woodpecker's own: CI_*, DRONE_*, WOODPECKER_*, PLUGIN_*, LD_*,"
                    " DYLD_*, GIT_*, PATH, HOME, SHELL."
                ),
                constraints={
                    "additionalProperties": {"type": "string", "maxLength": 10000},
                    "propertyNames": _VARIABLE_NAME_RULES,
                    # Ours, not the shared catalogue's: the same names in any case are refused too.
                    "propertyNamesAnyCase": True,
                    "maxProperties": 100,
                },
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "POST",
                "/api/repos/{repo_id}/pipelines",
                body={"branch": Arg("branch"), "variables": Arg("variables"), "message": Arg("message")},
            ),
            *BRANCH_READS,
        ),
        notes=(
            (
                "200 with the new pipeline (event manual). 204 with header Pipeline-Filtered: true "
                "when the config skipped or filtered everything: report that no pipeline was created."
            ),
            (
                "An unknown branch answers 500 with an empty body on 3.17 (400 was observed on 3.18); "
                "treat any error as not started, but a timeout as unknown."
            ),
            "Woodpecker has no idempotency key. Needs push permission.",
        ),
        answer=One(
            "pipeline",
            "Started pipeline {number} of repository {repo_id} ({status}).",
            filtered=True,
        ),
        hints={
            "server_error": (
                "An unknown branch answers 500 on Woodpecker 3.17 without starting a pipeline: check the branch "
                "with list_repository_branches."
            ),
            "unavailable": MAY_HAVE_STARTED,
        },
        question=Ask(
            "This will start a manual pipeline of repository {repo_id} at the head of the branch the call names.",
            (
                "Woodpecker never holds a manual pipeline for approval: it starts at once, with this "
                "repository's secrets for manual events.",
            ),
            when=(
                because(
                    r.SETS_VARIABLES,
                    "Its variables reach every step, the clone included: a name such as NODE_OPTIONS, BASH_ENV "
                    "or PIP_INDEX_URL makes a step's own tools run or fetch what the caller chose. Their names "
                    "are listed above; their values are not shown.",
                    _variable_lines,
                ),
                *BRANCH_CLAUSES,
            ),
            fields=True,
        ),
        why=(
            "Woodpecker never holds a manual pipeline, so on a branch whose code is held or was declined it "
            "goes around approve_pipeline; and variables reach every step, where any name may change what runs."
        ),
        current=branch_sources,
    ),
    write_tool(
        "restart_pipeline",
        group="pipelines",
        guard=GuardRule(
            when="bypasses_approval",
            condition=(
                "Asks when event is deployment; when the source pipeline, or the first run it is a "
                "re-run of, is declined; or when the source pipeline would need approval under the "
                "repository's current settings (Woodpecker's needsApproval rule) and no approval is on "
                "record (reviewed_by empty on that first run: a decline sets it too, and a restart copies "
                "it). A re-run whose parents cannot be read back to the first run asks. "
                "Other restarts never ask."
            ),
            targets=("repo_id", "number"),
            body_bound=True,
            needs_current_state=True,
        ),
        annotations=WRITE_STARTS_BUILD,
        essential=True,
        untrusted_output=True,
        description=(
            "Runs a pipeline again as a new one. Not idempotent: every call, a repeat"
            " too, starts another run. Asks a person for event=deployment, a declined"
            " pipeline or one without its approval."
        ),
        params=(
            REPO_ID,
            NUMBER,
            Param(
                "event",
                "enum",
                False,
                "Run as a deployment (needs allow_deploy).",
                choices=("deployment",),
            ),
            Param(
                "deploy_to",
                "string",
                False,
                "Target environment.",
                constraints={
                    "minLength": 1,
                    "maxLength": 250,
                    "pattern": "^[A-Za-z0-9._/-]+$",
                },
                only_when=Is("event", "deployment"),
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "POST",
                "/api/repos/{repo_id}/pipelines/{number}",
                query={"event": Arg("event"), "deploy_to": Arg("deploy_to")},
            ),
        ),
        notes=(
            (
                "No body. Send no other query keys: Woodpecker turns every extra query key into a "
                "pipeline environment variable."
            ),
            (
                "Answers the new pipeline (parent = the old number). A blocked pipeline cannot be "
                "restarted (400): approve or decline it."
            ),
            (
                "403 for a deployment when the repository does not allow deployments; 404 when the "
                "repository has no owner."
            ),
        ),
        answer=One(
            "pipeline",
            "Restarted pipeline {old} of repository {repo_id} as pipeline {number} ({status}).",
        ),
        question=Ask(
            "This will run pipeline {number} of repository {repo_id} again, as a new pipeline.",
            (
                "The new pipeline runs the original commit and config with this repository's secrets, and "
                "starts at once: Woodpecker does not hold a re-run for approval.",
            ),
            when=(
                because(
                    r.RESTARTS_AS_DEPLOYMENT,
                    "It runs as a deployment, with the deployment secrets, whatever the original pipeline "
                    "was (a fork's pull request included).",
                ),
                because(
                    r.RESTARTS_DECLINED,
                    "The original pipeline was declined: its code was refused, and this runs it anyway.",
                ),
                because(
                    r.RESTARTS_UNTRACED,
                    "It is a re-run of an earlier pipeline that could not be read back to the first run, so "
                    "whether that code was ever approved, or was declined, is unknown.",
                ),
                because(
                    r.RESTARTS_UNAPPROVED,
                    "Under the repository's current settings the original pipeline needs an approval and none "
                    "is on record: this goes around approve_pipeline.",
                ),
                _FROM_FORK,
            ),
            fields=True,
        ),
        why=(
            "A restart never re-checks approval: decline or cancel plus restart would run a fork's code with the "
            "secrets, and event=deployment turns any pipeline into a deployment."
        ),
        hints={"unavailable": MAY_HAVE_STARTED},
        current=_restart_sources,
    ),
    write_tool(
        "cancel_pipeline",
        group="pipelines",
        annotations=WRITE_IDEMPOTENT,
        essential=True,
        description=("Stops a pending, running or blocked pipeline; record and logs stay."),
        params=(REPO_ID, NUMBER),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/cancel", success=204),),
        notes=(
            (
                "Answers 204 (the swagger says 200). 400 when the pipeline is not pending, running or "
                "blocked. Needs push permission."
            ),
        ),
        answer=Done("Cancelled pipeline {number} of repository {repo_id}."),
    ),
    write_tool(
        "approve_pipeline",
        settled=APPROVED,
        before_asking=BLOCKED,
        group="pipelines",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "number"),
        untrusted_output=True,
        description=(
            "Releases a blocked pipeline, often fork code that then gets secrets: "
            "read get_pipeline_config first. Always asks a person."
        ),
        params=(REPO_ID, NUMBER, CONFIRM_TOKEN),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/approve"),),
        notes=(
            (
                "400 'cannot approve a pipeline with status X' when the pipeline is not blocked, so a "
                "repeated approval changes nothing."
            ),
            "The question names only numeric ids; branch, title, message and log text never reach it.",
        ),
        answer=One(
            "pipeline",
            "Approved pipeline {number} of repository {repo_id} ({status}).",
        ),
        question=Ask(
            "This will approve pipeline {number} of repository {repo_id}.",
            (
                # The seed's words (seeds/asking-a-person.txt); the read before asking adds the fork.
                "The pipeline runs with this repository's secrets, and its code comes from the source "
                "that opened it.",
            ),
            when=(_FROM_FORK, _FORK_UNREAD, _NOT_FROM_FORK),
        ),
        why="The held pipeline runs with the repository's secrets.",
    ),
    write_tool(
        "decline_pipeline",
        group="pipelines",
        annotations=WRITE_IDEMPOTENT,
        untrusted_output=True,
        description=("Rejects a blocked pipeline; nothing runs."),
        params=(REPO_ID, NUMBER),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/decline"),),
        notes=(
            (
                "A pipeline that is not blocked answers 500 with an empty body; check its status with "
                "get_pipeline when that happens."
            ),
        ),
        answer=One(
            "pipeline",
            "Declined pipeline {number} of repository {repo_id} ({status}).",
        ),
        hints={
            "server_error": "A pipeline that is not blocked answers 500: check its status with get_pipeline."
        },
    ),
    write_tool(
        "delete_pipeline",
        settled=gone("pipeline"),
        before_asking=EXISTING,
        group="pipelines",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "number"),
        description=(
            "Deletes a finished pipeline with its logs (cancel or decline it first). Always asks a person."
        ),
        params=(REPO_ID, NUMBER, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/pipelines/{number}", success=204),),
        notes=(
            (
                "422 'Cannot delete pipeline with status X' for pending, running or blocked. Needs "
                "repository admin."
            ),
        ),
        answer=Done("Deleted pipeline {number} of repository {repo_id}."),
        question=Ask(
            "This will delete pipeline {number} of repository {repo_id}, with its workflows, steps and logs.",
            ("This cannot be undone.",),
        ),
        why="The pipeline, its steps and logs are gone for good.",
    ),
    read_tool(
        "get_pipeline_failure_summary",
        group="pipelines",
        essential=True,
        untrusted_output=True,
        description=("Why a pipeline failed: failed steps' exit codes, error-like and last log lines."),
        params=(
            REPO_ID,
            NUMBER,
            Param(
                "error_signs",
                "boolean",
                False,
                "Also list what counts as an error-looking line.",
                constraints={"default": False},
            ),
        ),
        endpoints=(
            Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),
            Endpoint(
                "GET", "/api/repos/{repo_id}/logs/{number}/{step_id}", step="once per failed or killed step"
            ),
        ),
        notes=(
            "Each failed step's log is read once: its last 30 lines and up to 20 error-looking lines (all are "
            "counted), each with the 3 lines after it that explain it (a test's file:line and want/got, a "
            "traceback); the list of error signs is domain/woodpecker/results/failures.py's ERROR_SIGNS, in "
            "the result only with error_signs=true.",
            "No log read starts after 30 s of the call (READ_SECONDS), so that it answers before clients "
            "give up (commonly after 60 s): a step left unread says so and names the call that reads it.",
        ),
        answer=FailedSteps(),
        plan=FailureSummary(),
    ),
    read_tool(
        "resolve",
        group="pipelines",
        essential=True,
        untrusted_output=True,
        description=(
            "Turns a pasted web UI link (repository, pipeline or step), owner/name or owner/name#42 into "
            "repo_id, number and step_id, with names and states. Refuses links to other servers."
        ),
        params=(
            Param(
                "reference",
                "string",
                True,
                "A web UI link of this server, owner/name, or owner/name#42 (a pipeline number).",
                constraints={"minLength": 1, "maxLength": 2000},
            ),
            Param(
                "step",
                "string",
                False,
                "A step of that pipeline: its name (workflow/name if ambiguous) or its pid.",
                constraints={"minLength": 1, "maxLength": 250},
            ),
        ),
        endpoints=(
            Endpoint("GET", "/api/repos/{repo_id}", step="when a link names the repository by id"),
            Endpoint(
                "GET", "/api/repos/lookup/{full_name}", step="for owner/name, or an older owner/name link"
            ),
            Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}", step="when a pipeline is named"),
        ),
        notes=(
            "The link is read, never fetched: only its numbers and names are used, looked up on WOODPECKER_URL. "
            "A link must start with WOODPECKER_URL's origin and path prefix; user names, backslashes, "
            "percent-encoded hosts or slashes, and '.' or '..' segments are refused "
            "(domain/woodpecker/references.py).",
        ),
        answer=Ids(),
        plan=Resolve(),
    ),
    read_tool(
        "wait_for_pipeline",
        group="pipelines",
        essential=True,
        untrusted_output=True,
        description=(
            "Waits until a pipeline finishes or timeout_seconds pass; answers its status, whether it finished, "
            "how long it waited and any failed steps. Call again to keep waiting. Reports progress."
        ),
        params=(
            REPO_ID,
            NUMBER,
            wait_window(DEFAULT_WINDOW, MAX_WINDOW),
        ),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),),
        notes=(
            "Looks after 1 s, then at growing intervals up to every 5 s, and once more at the end of the "
            "window; a blocked pipeline (awaiting approval) answers at once, since waiting cannot finish it.",
        ),
        answer=Waited(),
        plan=WaitForPipeline(),
    ),
)
