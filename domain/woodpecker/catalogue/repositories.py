"""Repositories: finding them, reading their settings and rights, activating, changing, repairing, moving and deleting them."""

from collections.abc import Mapping
from typing import Any

from domain.arguments import check_value
from domain.tools import Arg, Endpoint, Fixed, GuardRule, Is, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, Listed, One
from domain.woodpecker.asking import Ask, because
from domain.woodpecker.before_asking import REPOSITORY_EXISTING
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    EVENTS,
    PAGE,
    PAGING,
    PAGING_QUERY,
    PER_PAGE,
    REPO_ID,
    SCOPE_REPO_ID,
    WRITE_DESTRUCTIVE,
    WRITE_IDEMPOTENT,
    asks_always,
    only_when,
    read_tool,
    write_tool,
)
from domain.woodpecker.glances import REPOSITORY
from domain.woodpecker.read_back import MOVED, REPOSITORY_GONE
from domain.woodpecker.reads import Probe
from domain.woodpecker.requests import Request, lookup_repository, segment
from domain.woodpecker.results.errors import failed_repos

# owner/name, or group/subgroup/name on GitLab; no segment may be "." or ".." (guard.md §3).
_FULL_NAME_RULES: Mapping[str, Any] = {
    "minLength": 3,
    "maxLength": 200,
    "pattern": r"^(?!\.\.?/)(?!.*/\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+$",
}


def _repair_failed(args: Mapping[str, Any], detail: str | None) -> str | None:
    """After an instance repair answered 500: which repositories failed, when Woodpecker said."""
    if args.get("scope") != "instance":
        return None
    failed = failed_repos(detail)
    if failed:
        return (
            f"{len(failed)} repositories could not be repaired ({', '.join(failed[:20])}"
            f"{', …' if len(failed) > 20 else ''}); the others were. Repair those one by one "
            "with scope=repository to see why."
        )
    return "Some repositories may not have been repaired; Woodpecker's server log names them."


def _repository_before_update(args: Mapping[str, Any]) -> Request | None:
    """The stored repository, when a field is passed that the guard compares with it."""
    if (
        "require_approval" in args
        or "visibility" in args
        or args.get("allow_deploy") is True
        or args.get("allow_pr") is True
    ):
        return Request("GET", f"/api/repos/{segment(args['repo_id'])}")
    return None


# The full name a repository of the forge's list is looked up by, read as the lookup tool's argument.
_LISTED_NAME = Param("full_name", "string", True, "", constraints=_FULL_NAME_RULES)


def _record_by_name(args: Mapping[str, Any], answers: Mapping[str, Any]) -> Request | None:
    """Woodpecker's record under the full name of the forge's entry for this forge_remote_id, when that
    entry carries no id: GET /user/repos?all=true merges a record only where the caller has a permission
    row, and every sign-in prunes the rows of inactive repositories (server/api/login.go), so an entry
    without an id does not say there is none. None (nothing to read, which asks) for a name that is not
    a plain owner/name."""
    listed = answers.get("repos")
    entries = listed if isinstance(listed, list | tuple) else ()
    wanted = args.get("forge_remote_id")
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("forge_remote_id") == wanted and not entry.get("id"):
            name = entry.get("full_name")
            if isinstance(name, str) and check_value(_LISTED_NAME, name)[0] is None:
                return lookup_repository(name)
            return None
    return None


def _forge_repositories(args: Mapping[str, Any]) -> Mapping[str, Request | Probe]:
    """The forge's repositories for the caller, merged with Woodpecker's records (not paged), and
    Woodpecker's record by the listed name when the list merged none into the entry."""
    return {
        "repos": Request("GET", "/api/user/repos", {"all": "true"}),
        "record": Probe(_record_by_name),
    }


TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "list_repositories",
        group="repositories",
        admin="instance_scope",
        admin_when="scope=instance",
        essential=True,
        untrusted_output=True,
        description=(
            "Repositories this account sees, with latest pipeline. include_inactive "
            "adds never-activated ones; scope=instance: all (instance admin)."
        ),
        params=(
            Param(
                "scope",
                "enum",
                False,
                "instance: every repository, paged (admin).",
                choices=("account", "instance"),
                constraints={"default": "account"},
            ),
            Param(
                "include_inactive",
                "boolean",
                False,
                "Add never-activated forge repositories (slow).",
                constraints={"default": False},
                only_when=Is("scope", "account"),
            ),
            Param(
                "name",
                "string",
                False,
                "Name contains this.",
                constraints={"minLength": 1, "maxLength": 200},
                only_when=Is("scope", "account"),
            ),
            only_when(PAGE, Is("scope", "instance")),
            only_when(PER_PAGE, Is("scope", "instance")),
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/user/repos",
                when=Is("scope", "account"),
                query={"all": Arg("include_inactive"), "name": Arg("name")},
            ),
            Endpoint("GET", "/api/repos", when=Is("scope", "instance"), query=PAGING_QUERY),
        ),
        notes=(
            (
                "Account scope answers [RepoLastPipeline]: each entry carries last_pipeline, whose "
                "commit message, branch and title are pushed content."
            ),
            "Account scope is one unpaged response; name is the way to narrow it.",
            (
                "With include_inactive, never-activated entries have no Woodpecker id but carry "
                "forge_remote_id; has_forge_name_conflict and has_no_forge_repo flag mismatches. On "
                "3.17 name filters only the stored repositories, not the forge's list."
            ),
            "Instance scope: 403 for non-admins; ordered by full_name; always an array.",
            (
                "A parameter given with the other scope (page with account, name with instance) is "
                "refused with an error naming its scope, not silently dropped."
            ),
        ),
        answer=Listed("repositories", REPOSITORY),
    ),
    read_tool(
        "get_repository",
        group="repositories",
        essential=True,
        description=(
            "A repository's settings (visibility, trust, approval, timeout, config "
            "path). Read before changing."
        ),
        params=(REPO_ID,),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}"),),
        notes=(
            ("404 with an empty body both for an unknown id and for a repository this account may not pull."),
            "A deactivated repository still answers, with active=false.",
        ),
        answer=One("repository", "Repository {id}."),
    ),
    read_tool(
        "lookup_repository",
        group="repositories",
        description=("owner/name to the repository and its id; 404 if never activated."),
        params=(
            Param(
                "full_name",
                "string",
                True,
                "owner/name as in the forge.",
                constraints=_FULL_NAME_RULES,
            ),
        ),
        endpoints=(Endpoint("GET", "/api/repos/lookup/{full_name}"),),
        notes=(
            (
                "Wildcard route: the slash of owner/name may travel literally or as %2F; Woodpecker "
                "decodes it."
            ),
            ("Follows Woodpecker's rename redirections, so a former name resolves to the moved repository."),
            "Needs pull permission; a repository the account cannot pull answers 404.",
        ),
        answer=One("repository", "Repository {full_name} has id {id}."),
        wildcard="full_name",
    ),
    read_tool(
        "get_repository_permissions",
        group="repositories",
        description=("This account's pull/push/admin rights on a repository; explains a 403 or odd 404."),
        params=(REPO_ID,),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/permissions"),),
        notes=(
            "Answers Perm {pull, push, admin, synced, created, updated}; times are Unix seconds.",
            "Permissions are inherited from the forge and cached by Woodpecker.",
        ),
        answer=One("permissions", "Permissions of this account on repository {repo_id}."),
    ),
    read_tool(
        "list_repository_branches",
        group="repositories",
        untrusted_output=True,
        description=("A repository's branches in the forge."),
        params=(REPO_ID, *PAGING),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/branches", query=PAGING_QUERY),),
        notes=(
            "Answers [string]; paging is passed on to the forge.",
            "null when the forge does not implement branch listing: treat as empty.",
            "404 when the repository has no owner (deactivated repositories lose theirs).",
            "Branch names are chosen by whoever can push.",
        ),
        answer=Listed("branches"),
    ),
    read_tool(
        "list_pull_requests",
        group="repositories",
        untrusted_output=True,
        description=("Open pull requests; ref refs/pull/7/head is index 7."),
        params=(REPO_ID, *PAGING),
        endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pull_requests", query=PAGING_QUERY),),
        notes=(
            "Answers [{index, title}]; index is a string.",
            "Titles are written by whoever opened the pull request.",
        ),
        answer=Listed("pull_requests"),
    ),
    write_tool(
        "activate_repository",
        group="repositories",
        guard=GuardRule(
            when="reactivates",
            condition=(
                "Asks when Woodpecker already holds a record of this repository (inactive): "
                "reactivation keeps its stored trust settings, approval mode and secrets, and makes "
                "the caller its owner."
            ),
            targets=("forge_remote_id",),
            body_bound=False,
            needs_current_state=True,
        ),
        annotations=WRITE_IDEMPOTENT,
        description=(
            "Turns Woodpecker on for a forge repository (webhook included); takes "
            "forge_remote_id. Asks a person if Woodpecker already holds a record of "
            "it."
        ),
        params=(
            Param(
                "forge_remote_id",
                "string",
                True,
                "From list_repositories include_inactive.",
                constraints={
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": r"^(?!\.\.?$)[A-Za-z0-9._{}-]+$",
                },
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(Endpoint("POST", "/api/repos", query={"forge_remote_id": Arg("forge_remote_id")}),),
        notes=(
            "No request body; answers 200 with the repository (never 201).",
            (
                "The guard reads GET /api/user/repos?all=true first: an inactive entry with this "
                "forge_remote_id and an id is a record Woodpecker already holds; an unlisted one asks too. "
                "The list merges a record only where the caller has a permission row (each sign-in drops "
                "those of inactive repositories), so an entry without an id is looked up by its full name: "
                "only a 404 there says Woodpecker holds none."
            ),
            (
                "400 'No forge_remote_id provided' for an empty value or '0'; 409 when already active; "
                "403 when the account is not admin of the forge repository or its owner is not "
                "allowed; 500 on forge errors."
            ),
        ),
        answer=One("repository", "Activated repository {id} (forge id {forge_remote_id})."),
        question=Ask(
            "This will activate a forge repository in Woodpecker, install its webhook and make the calling "
            "account its owner.",
            lines=(("Forge repository id", "forge_remote_id"),),
            when=(
                because(
                    r.REACTIVATES,
                    "Woodpecker already holds a record of it: its stored trusted flags, approval mode and "
                    "secrets come back as they were, and its pipelines run under the calling account's forge token.",
                ),
                because(
                    r.RECORD_UNREAD,
                    "This server could not read whether Woodpecker already holds a record of it; if it does, "
                    "its stored trusted flags, approval mode and secrets come back as they were.",
                ),
                because(
                    r.UNKNOWN_RECORD,
                    "The forge does not list it for the calling account, so this server cannot tell whether "
                    "Woodpecker already holds a record of it; if it does, its stored trusted flags, approval "
                    "mode and secrets come back as they were.",
                ),
            ),
        ),
        why=(
            "Reactivating a repository Woodpecker already holds brings back its stored trust flags, approval "
            "mode and secrets, and makes the caller its owner."
        ),
        current=_forge_repositories,
    ),
    write_tool(
        "update_repository",
        group="repositories",
        annotations=WRITE_DESTRUCTIVE,
        guard=GuardRule(
            when="widens_repository",
            condition=(
                "Asks when any trusted_* flag is passed as true; when require_approval is lower than "
                "the stored value in the order none < forks < pull_requests < all_events (an "
                "unrecognised stored value counts as strictest); when visibility rises in the order "
                "private < internal < public; when allow_deploy turns true from false; or when "
                "allow_pr turns true from false while require_approval (after the call) is none."
            ),
            targets=("repo_id",),
            body_bound=True,
            needs_current_state=True,
        ),
        description=(
            "Changes the settings passed. Asks a person if exposure widens: trusted_*"
            " on, require_approval or visibility loosened, allow_deploy on, allow_pr "
            "on without approval."
        ),
        params=(
            REPO_ID,
            Param(
                "config_file",
                "string",
                False,
                "Pipeline file or folder; '' for the default.",
                constraints={"maxLength": 500},
            ),
            Param(
                "timeout",
                "integer",
                False,
                "Minutes; above the server maximum, admin only.",
                constraints={"minimum": 1, "maximum": 10080},
            ),
            Param(
                "visibility",
                "enum",
                False,
                "Who sees builds: internal = any signed-in user. Raising it asks.",
                choices=("public", "private", "internal"),
            ),
            Param(
                "allow_pr",
                "boolean",
                False,
                "PR events start pipelines.",
            ),
            Param(
                "allow_deploy",
                "boolean",
                False,
                "Accept deployment events (on: asks).",
            ),
            Param(
                "require_approval",
                "enum",
                False,
                "Which pipelines wait for approval; loosening asks.",
                choices=("none", "forks", "pull_requests", "all_events"),
            ),
            Param(
                "cancel_previous_pipeline_events",
                "array",
                False,
                "Events where a newer pipeline cancels a running older one.",
                constraints={"items": {"enum": list(EVENTS)}, "maxItems": 9, "uniqueItems": True},
            ),
            Param(
                "trusted_network",
                "boolean",
                False,
                "Host networking (admin; true asks).",
            ),
            Param(
                "trusted_volumes",
                "boolean",
                False,
                "Host path mounts (admin; true asks).",
            ),
            Param(
                "trusted_security",
                "boolean",
                False,
                "Privileged containers (admin; true asks).",
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/repos/{repo_id}",
                step=(
                    "when require_approval or visibility is passed, or allow_deploy or allow_pr is true "
                    "(current values, for the comparison)"
                ),
            ),
            Endpoint(
                "PATCH",
                "/api/repos/{repo_id}",
                body={
                    "config_file": Arg("config_file"),
                    "timeout": Arg("timeout"),
                    "visibility": Arg("visibility"),
                    "allow_pr": Arg("allow_pr"),
                    "allow_deploy": Arg("allow_deploy"),
                    "require_approval": Arg("require_approval"),
                    "cancel_previous_pipeline_events": Arg("cancel_previous_pipeline_events"),
                    "trusted": {
                        "network": Arg("trusted_network"),
                        "volumes": Arg("trusted_volumes"),
                        "security": Arg("trusted_security"),
                    },
                },
            ),
        ),
        notes=(
            (
                "The three trusted_* parameters are sent nested as trusted: {network, volumes, "
                "security}, with only the flags that were passed."
            ),
            (
                "The current state is read only when require_approval or visibility is named; a trust "
                "grant asks without a read, and nothing read goes into the question."
            ),
            "A call with nothing to change is an error, not a no-op. Unknown fields are never forwarded.",
            (
                "403 when a non-admin changes a trusted flag or exceeds the maximum timeout; 400 for "
                "an invalid require_approval or visibility, or timeout < 1."
            ),
            "Answers the stored repository.",
        ),
        answer=One("repository", "Updated repository {id}."),
        question=Ask(
            "This will change the settings of repository {repo_id}.",
            when=(
                because(
                    r.GRANTS_TRUSTED_NETWORK,
                    "Its pipelines get the network of the agent's host (trusted network).",
                ),
                because(
                    r.GRANTS_TRUSTED_VOLUMES,
                    "Its pipelines may mount volumes of the agent's host (trusted volumes).",
                ),
                because(
                    r.GRANTS_TRUSTED_SECURITY,
                    "Its pipelines may run privileged containers on the agent (trusted security).",
                ),
                because(
                    r.LOWERS_REQUIRE_APPROVAL,
                    "Fewer of its pipelines wait for approval, so code from forks or pull requests "
                    "may run with its secrets without anyone looking first.",
                ),
                because(
                    r.SETS_PUBLIC,
                    "It becomes public: its pipelines and their logs are visible to anyone who can reach Woodpecker.",
                ),
                because(
                    r.SETS_INTERNAL,
                    "It becomes internal: its pipelines, logs and config are visible to every signed-in "
                    "user of Woodpecker.",
                ),
                because(
                    r.ALLOWS_DEPLOY,
                    "It accepts deployment events: any of its pipelines, a fork's included, can be re-run as a "
                    "deployment with its deployment secrets.",
                ),
                because(
                    r.ALLOWS_PR_UNAPPROVED,
                    "Pull requests start its pipelines and none waits for approval: code from forks runs with "
                    "its secrets without anyone looking first.",
                ),
            ),
            fields=True,
        ),
        why="Each widening lets more code, or more people, reach the repository's pipelines, logs or secrets.",
        changes=(
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
        current=_repository_before_update,
    ),
    write_tool(
        "repair_repository",
        group="repositories",
        annotations=WRITE_IDEMPOTENT,
        admin="instance_scope",
        admin_when="scope=instance",
        guard=GuardRule(
            when="scope_instance",
            condition="Asks only when scope is instance.",
            targets=("scope",),
            body_bound=False,
            needs_current_state=False,
        ),
        description=(
            "Reinstalls the webhook and re-reads the forge: fixes pushes that start "
            "no builds. scope=instance repairs all (instance admin) and asks a "
            "person."
        ),
        params=(
            SCOPE_REPO_ID,
            Param(
                "scope",
                "enum",
                False,
                "instance: all repositories (admin; asks).",
                choices=("repository", "instance"),
                constraints={"default": "repository"},
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(
            Endpoint("POST", "/api/repos/{repo_id}/repair", when=Is("scope", "repository"), success=204),
            Endpoint("POST", "/api/repos/repair", when=Is("scope", "instance"), success=204),
        ),
        notes=(
            "Both routes answer 204 with no body.",
            (
                "The instance route answers 500 with JSON {error, failed_repos} when some repositories "
                "failed; report which."
            ),
            "The repository route needs repository admin.",
        ),
        answer=Done("Repaired {target}."),
        question=Ask(
            "This will repair every repository of this Woodpecker instance: each webhook is recreated "
            "and each repository is read again from its forge.",
            (
                "It is instance-wide and runs one forge round-trip per repository, with an instance admin's rights.",
            ),
            describes=frozenset({r.SCOPE_INSTANCE}),
        ),
        why="Instance-wide: every webhook is recreated, one forge round trip per repository.",
        hints={"server_error": _repair_failed},
    ),
    write_tool(
        "move_repository",
        settled=MOVED,
        group="repositories",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id", "to"),
        description=(
            "Records a new owner/name after a forge rename. Always asks a person. "
            "3.11 moves, then answers HTTP 500: a retry moves twice, so check "
            "get_repository (3.18 is fine)."
        ),
        params=(
            REPO_ID,
            Param(
                "to",
                "string",
                True,
                "New owner/name.",
                constraints=_FULL_NAME_RULES,
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/move", query={"to": Arg("to")}, success=204),),
        notes=(
            "Answers 204. A missing or malformed to answers 500 with an empty body.",
            "401 when the account is not admin of the repository at the new location.",
            (
                "Forges that send rename webhooks are usually followed without this call; a redundant "
                "move can fail on a duplicate redirection."
            ),
            "After any 5xx, call get_repository before deciding anything: the move may have happened.",
        ),
        answer=Done("Moved repository {repo_id} to {to}."),
        question=Ask(
            "This will tell Woodpecker that repository {repo_id} now has a new owner/name.",
            (
                "The forge itself is not changed.",
                "On Woodpecker 3.11 the server performs the move and then answers HTTP 500: do not retry, "
                "read the repository back with get_repository, or it is moved twice.",
            ),
            (("New owner/name", "to"),),
        ),
        why="Woodpecker follows the new owner/name; on 3.11 a retry moves the repository twice.",
        hints={
            "unauthorized": (
                "Woodpecker answers 401 when this account is not admin of the repository at the new location as well."
            ),
            "server_error": (
                "On Woodpecker 3.11 the move is performed and then answered with HTTP 500, so it has probably "
                "happened: check with get_repository or lookup_repository before retrying; a retry moves the "
                "repository twice. (3.18 answers cleanly.)"
            ),
        },
    ),
    write_tool(
        "chown_repository",
        group="repositories",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id"),
        description=(
            "Makes this account the owner; its forge token then serves the repository. Always asks a person."
        ),
        params=(REPO_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("POST", "/api/repos/{repo_id}/chown"),),
        notes=(
            ("Needs repository admin. Answers the repository; the owner itself (user_id) is not serialised."),
        ),
        answer=One("repository", "Repository {id} is now owned by this account."),
        question=Ask(
            "This will make the calling account the owner of repository {repo_id} in Woodpecker.",
            (
                "Every pipeline of that repository afterwards runs under the calling account's forge token, "
                "so that account's reach over the forge becomes the repository's reach.",
            ),
        ),
        why="The repository's pipelines run under the calling account's forge token afterwards.",
    ),
    write_tool(
        "delete_repository",
        settled=REPOSITORY_GONE,
        before_asking=REPOSITORY_EXISTING,
        group="repositories",
        annotations=WRITE_DESTRUCTIVE,
        guard=asks_always("repo_id"),
        description=(
            "Deletes a repository and all its Woodpecker data; the forge keeps it. Always asks a person."
        ),
        params=(REPO_ID, CONFIRM_TOKEN),
        endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}", query={"remove": Fixed("true")}),),
        notes=(
            (
                "Send remove=true: without it Woodpecker only deactivates (active=false, owner "
                "cleared, history kept)."
            ),
            "Answers 200 with the repository body, not 204. Needs repository admin.",
            "With remove=true Woodpecker ignores a failure to remove the forge webhook.",
        ),
        answer=One("repository", "Deleted repository {id} (removed, with its history)."),
        question=Ask(
            "This will delete repository {repo_id} from Woodpecker, with its pipelines, logs, "
            "secrets, registries and cron jobs.",
            (
                "This cannot be undone. The repository in the forge remains, but its Woodpecker history "
                "and secrets are gone for good.",
            ),
        ),
        why="Pipelines, logs, secrets, registries and crons are gone for good.",
    ),
)
