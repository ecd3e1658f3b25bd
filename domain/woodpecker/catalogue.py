"""The Woodpecker tools as data: the 71 of the shared catalogue, then documented additions. Checked by tests/domain/test_catalogue.py."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from domain.tools import Annotations, Catalogue, Endpoint, GuardRule, Param, ToolSpec

# ---------------------------------------------------------------------------------------- annotations
# Every call leaves this process for the Woodpecker server, so open_world is true throughout.

_READ = Annotations(read_only=True, destructive=False, idempotent=True, open_world=True)
# A repeat finds the work done: activating, cancelling, pausing, setting a level.
_WRITE_IDEMPOTENT = Annotations(read_only=False, destructive=False, idempotent=True, open_world=True)
# Overwrites or removes stored state; a repeat changes nothing more.
_WRITE_DESTRUCTIVE = Annotations(read_only=False, destructive=True, idempotent=True, open_world=True)
# Every call stores one more object.
_WRITE_ADDS = Annotations(read_only=False, destructive=False, idempotent=False, open_world=True)
# Every call starts a build, and what a build does is written in the repository, not here.
_WRITE_STARTS_BUILD = Annotations(read_only=False, destructive=True, idempotent=False, open_world=True)

# ------------------------------------------------------------------------------------------ arguments

# 2**53 - 1: the largest integer a JSON client is sure to carry without rounding.
_MAX_ID = 9007199254740991
_EVENTS = (
    "push",
    "pull_request",
    "pull_request_closed",
    "pull_request_metadata",
    "tag",
    "release",
    "deployment",
    "cron",
    "manual",
)

_BRANCH_RULES: Mapping[str, Any] = {"minLength": 1, "maxLength": 250, "pattern": r"^[^\s\\~^:?*\[\]]+$"}
# owner/name, or group/subgroup/name on GitLab; no segment may be "." or ".." (guard.md §3).
_FULL_NAME_RULES: Mapping[str, Any] = {
    "minLength": 3,
    "maxLength": 200,
    "pattern": r"^(?!\.\.?/)(?!.*/\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+$",
}
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
_URL_RULES: Mapping[str, Any] = {"maxLength": 500, "format": "uri", "pattern": "^https?://"}
_TIMEZONE_PATTERN = r"^[A-Za-z0-9_+\-/]+$"
_SECRET_EVENTS_RULES: Mapping[str, Any] = {
    "items": {"enum": list(_EVENTS)},
    "minItems": 1,
    "maxItems": 9,
    "uniqueItems": True,
}
_IMAGES_RULES: Mapping[str, Any] = {
    "items": {"type": "string", "minLength": 1, "maxLength": 200},
    "maxItems": 50,
}


def _id(name: str, description: str, *, required: bool = True, **conditions: str) -> Param:
    """A Woodpecker id; `conditions` are required_when / only_when rules."""
    return Param(
        name, "integer", required, description, constraints={"minimum": 1, "maximum": _MAX_ID, **conditions}
    )


def _optional(param: Param) -> Param:
    """The same argument where it may be left out, as in an update that keeps what is not passed."""
    return replace(param, required=False)


def _only_when(param: Param, condition: str) -> Param:
    """The same argument, accepted only under `condition` (see Param)."""
    return replace(param, constraints={**param.constraints, "only_when": condition})


_CONFIRM_TOKEN = Param(
    "confirm_token",
    "string",
    False,
    "Only without a dialog: the token this tool's first call returned for these same arguments "
    "(single use, 5 minutes).",
    constraints={"pattern": "^[0-9a-f]{32}$"},
    sensitive=True,
)
_PAGE = Param(
    "page",
    "integer",
    False,
    "Page number, from 1.",
    constraints={"minimum": 1, "maximum": 10000, "default": 1},
)
_PER_PAGE = Param(
    "per_page",
    "integer",
    False,
    "Entries per page, at most 50.",
    constraints={"minimum": 1, "maximum": 50, "default": 50},
)
_PAGING = (_PAGE, _PER_PAGE)

_REPO_ID = _id("repo_id", "Numeric repository id, not owner/name (lookup_repository finds it).")
_NUMBER = _id("number", "Pipeline number within the repository, as the web UI shows it; not its global id.")
_STEP_ID = _id("step_id", "The step's id as get_pipeline lists it (its database id, not its pid).")
_CRON_ID = _id("cron_id", "Cron job id, from list_crons.")
_ORG_ID = _id("org_id", "Organization id (lookup_organization finds it by name).")
_AGENT_ID = _id("agent_id", "Agent id, from list_agents.")
_FORGE_ID = _id("forge_id", "Forge id, from list_forges.")
_USER_FORGE_ID = _id(
    "forge_id",
    "The account's forge id, from list_users or list_forges (1 on an instance with one forge). "
    "The same login can exist on several forges.",
)
_AGENT_ORG_ID = _id(
    "org_id",
    "For an organization's agents: its id selects that organization's routes, open to its admins. "
    "Without it, the instance's agents, which need an instance admin.",
    required=False,
)

# Secrets and registries live at one of three levels; these three arguments pick it.
_SCOPE = Param(
    "scope",
    "enum",
    True,
    "repository (with repo_id), organization (with org_id) or global.",
    choices=("repository", "organization", "global"),
)
_SCOPE_REPO_ID = _id("repo_id", _REPO_ID.description, required=False, required_when="scope == 'repository'")
_SCOPE_ORG_ID = _id("org_id", _ORG_ID.description, required=False, required_when="scope == 'organization'")
_AT_SCOPE = (_SCOPE, _SCOPE_REPO_ID, _SCOPE_ORG_ID)

_SECRET_NAME = Param(
    "name",
    "string",
    True,
    "The secret's name. Case counts: Deploy_Key and deploy_key are two secrets.",
    constraints={"minLength": 1, "maxLength": 100, "pattern": r"^(?!\.\.?$)[A-Za-z0-9_.-]+$"},
)
_REGISTRY_ADDRESS = Param(
    "address",
    "string",
    True,
    "Registry host, optionally with a path (ghcr.io, registry.example.com:5000). It is the entry's key, "
    "compared as written: docker.io and registry-1.docker.io are two entries.",
    constraints={
        "minLength": 1,
        "maxLength": 200,
        "pattern": r"^(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[A-Za-z0-9.:_-]+(/[A-Za-z0-9._-]+)*$",
    },
)
_SCHEDULE = Param(
    "schedule",
    "string",
    True,
    "When it fires: five crontab fields (minute hour day month weekday; '30 2 * * 1' is Mondays at 02:30), "
    "one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, or @every with a Go duration "
    "(@every 6h). There is no seconds field.",
    constraints={"minLength": 1, "maxLength": 200},
)
_LOGIN = Param(
    "login",
    "string",
    True,
    "The account's login, spelled exactly as in the forge.",
    constraints={"minLength": 1, "maxLength": 200, "pattern": r"^(?!\.\.?$)[A-Za-z0-9._-]+$"},
)
_AGENT_NAME = Param(
    "name", "string", True, "The name shown for the agent.", constraints={"minLength": 1, "maxLength": 250}
)
_CUSTOM_LABELS = Param(
    "custom_labels",
    "object",
    False,
    "Not supported: Woodpecker ignores it, because an agent's labels come from WOODPECKER_AGENT_LABELS "
    "on its host. A call that carries it is refused, so nothing is half-applied.",
    constraints={
        "additionalProperties": {"type": "string", "maxLength": 500},
        "propertyNames": {"minLength": 1, "maxLength": 100},
    },
)
_FORGE_TYPE = Param(
    "type",
    "enum",
    True,
    "Which kind of forge.",
    choices=("github", "gitlab", "gitea", "forgejo", "bitbucket", "bitbucket-dc", "addon"),
)
_FORGE_URL = Param(
    "url", "string", True, "The forge's address: an absolute http:// or https:// URL.", constraints=_URL_RULES
)
_OAUTH_CLIENT = Param(
    "client",
    "string",
    True,
    "The OAuth application's client id.",
    constraints={"minLength": 1, "maxLength": 500},
)
_OAUTH_HOST = Param(
    "oauth_host",
    "string",
    False,
    "The forge URL the browser is sent to for the OAuth redirect, when it differs from url.",
    constraints=_URL_RULES,
)

# ------------------------------------------------------------------------------------------ endpoints

_PAGING_QUERY: Mapping[str, str] = {"page": "page", "perPage": "per_page"}
_LEVELS = (
    ("repository", "/api/repos/{repo_id}"),
    ("organization", "/api/orgs/{org_id}"),
    ("global", "/api"),
)


def _at_each_level(
    method: str,
    path: str,
    *,
    also: str = "",
    query: Mapping[str, str] | None = None,
    body: tuple[str, ...] = (),
    success: int = 200,
) -> tuple[Endpoint, ...]:
    """One request per level (repository, organization, global) for `path` below the level's route."""
    return tuple(
        Endpoint(
            method,
            prefix + path,
            when=f"scope == '{level}'{also}",
            query=query or {},
            body=body,
            success=success,
        )
        for level, prefix in _LEVELS
    )


# ---------------------------------------------------------------------------------------------- tools


def _asks_always(*targets: str, body_bound: bool = False) -> GuardRule:
    return GuardRule("always", "Every call asks, whatever the arguments.", targets, body_bound, False)


def _read(
    name: str,
    *,
    group: str,
    description: str,
    params: tuple[Param, ...] = (),
    endpoints: tuple[Endpoint, ...],
    notes: tuple[str, ...] = (),
    admin: str = "never",
    admin_when: str | None = None,
    essential: bool = False,
    untrusted_output: bool = False,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=_title(name),
        group=group,
        kind="read",
        admin=admin,
        admin_when=admin_when,
        essential=essential,
        annotations=_READ,
        guard=None,
        untrusted_output=untrusted_output,
        description=description,
        params=params,
        endpoints=endpoints,
        notes=notes,
    )


def _write(
    name: str,
    *,
    group: str,
    annotations: Annotations,
    description: str,
    params: tuple[Param, ...] = (),
    endpoints: tuple[Endpoint, ...],
    notes: tuple[str, ...] = (),
    guard: GuardRule | None = None,
    admin: str = "never",
    admin_when: str | None = None,
    essential: bool = False,
    untrusted_output: bool = False,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=_title(name),
        group=group,
        kind="write",
        admin=admin,
        admin_when=admin_when,
        essential=essential,
        annotations=annotations,
        guard=guard,
        untrusted_output=untrusted_output,
        description=description,
        params=params,
        endpoints=endpoints,
        notes=notes,
    )


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


WOODPECKER_TOOLS = Catalogue(
    (
        # ---------- repositories
        _read(
            "list_repositories",
            group="repositories",
            admin="instance_scope",
            admin_when="scope=instance",
            essential=True,
            untrusted_output=True,
            description=(
                "Lists the repositories this account can see, each with its latest pipeline. "
                "include_inactive adds forge repositories never activated, with the forge_remote_id that "
                "activate_repository takes. scope=instance lists every repository on the server instead, "
                "paged (instance admin only)."
            ),
            params=(
                Param(
                    "scope",
                    "enum",
                    False,
                    "account (default): this account's repositories, in one unpaged answer. instance: "
                    "every repository on the server, paged; instance admin only.",
                    choices=("account", "instance"),
                    constraints={"default": "account"},
                ),
                Param(
                    "include_inactive",
                    "boolean",
                    False,
                    "Also list forge repositories that are not activated yet. Slow: it costs a round of "
                    "forge requests.",
                    constraints={"default": False, "only_when": "scope == 'account'"},
                ),
                Param(
                    "name",
                    "string",
                    False,
                    "Keep only repositories whose name contains this text.",
                    constraints={"minLength": 1, "maxLength": 200, "only_when": "scope == 'account'"},
                ),
                _only_when(_PAGE, "scope == 'instance'"),
                _only_when(_PER_PAGE, "scope == 'instance'"),
            ),
            endpoints=(
                Endpoint(
                    "GET",
                    "/api/user/repos",
                    when="scope == 'account'",
                    query={"all": "include_inactive", "name": "name"},
                ),
                Endpoint("GET", "/api/repos", when="scope == 'instance'", query=_PAGING_QUERY),
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
        ),
        _read(
            "get_repository",
            group="repositories",
            essential=True,
            description=(
                "Returns a repository's complete Woodpecker record: visibility, trust flags, approval "
                "rule, timeout, config path and the rest. Read it before changing any of them."
            ),
            params=(_REPO_ID,),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}"),),
            notes=(
                (
                    "404 with an empty body both for an unknown id and for a repository this account may "
                    "not pull."
                ),
                "A deactivated repository still answers, with active=false.",
            ),
        ),
        _read(
            "lookup_repository",
            group="repositories",
            description=(
                "Resolves owner/name to Woodpecker's repository record, with the numeric id the other "
                "tools take. A forge repository that was never activated answers 404; list_repositories "
                "with include_inactive shows those."
            ),
            params=(
                Param(
                    "full_name",
                    "string",
                    True,
                    "owner/name, as the forge writes it.",
                    constraints=_FULL_NAME_RULES,
                ),
            ),
            endpoints=(Endpoint("GET", "/api/repos/lookup/{full_name}"),),
            notes=(
                (
                    "Wildcard route: the slash of owner/name may travel literally or as %2F; Woodpecker "
                    "decodes it."
                ),
                (
                    "Follows Woodpecker's rename redirections, so a former name resolves to the moved "
                    "repository."
                ),
                "Needs pull permission; a repository the account cannot pull answers 404.",
            ),
        ),
        _read(
            "get_repository_permissions",
            group="repositories",
            description=(
                "Shows this account's pull, push and admin rights on a repository, as Woodpecker last "
                "synced them from the forge. Explains a 403 or an unexpected 404 from the other repository "
                "tools."
            ),
            params=(_REPO_ID,),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/permissions"),),
            notes=(
                "Answers Perm {pull, push, admin, synced, created, updated}; times are Unix seconds.",
                "Permissions are inherited from the forge and cached by Woodpecker.",
            ),
        ),
        _read(
            "list_repository_branches",
            group="repositories",
            untrusted_output=True,
            description=(
                "Lists the branch names the forge has for a repository. Check here before "
                "trigger_pipeline, which fails on a branch that does not exist."
            ),
            params=(_REPO_ID, *_PAGING),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/branches", query=_PAGING_QUERY),),
            notes=(
                "Answers [string]; paging is passed on to the forge.",
                "null when the forge does not implement branch listing: treat as empty.",
                "404 when the repository has no owner (deactivated repositories lose theirs).",
                "Branch names are chosen by whoever can push.",
            ),
        ),
        _read(
            "list_pull_requests",
            group="repositories",
            untrusted_output=True,
            description=(
                "Lists a repository's open pull requests (index and title). A pipeline ref such as "
                "refs/pull/7/head belongs to the pull request with that index."
            ),
            params=(_REPO_ID, *_PAGING),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pull_requests", query=_PAGING_QUERY),),
            notes=(
                "Answers [{index, title}]; index is a string.",
                "Titles are written by whoever opened the pull request.",
            ),
        ),
        _write(
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
            annotations=_WRITE_IDEMPOTENT,
            description=(
                "Turns Woodpecker on for a forge repository that is not active yet: it is stored, its "
                "webhook installed, and pushes start pipelines from then on. Takes the forge's own id "
                "(forge_remote_id); a Woodpecker repo_id or owner/name does not work here. Asks a person "
                "first when Woodpecker already holds a record of it (its stored settings come back)."
            ),
            params=(
                Param(
                    "forge_remote_id",
                    "string",
                    True,
                    "The forge's own id for the repository: the forge_remote_id field of "
                    "list_repositories(include_inactive=true).",
                    constraints={
                        "minLength": 1,
                        "maxLength": 200,
                        "pattern": r"^(?!\.\.?$)[A-Za-z0-9._{}-]+$",
                    },
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(Endpoint("POST", "/api/repos", query={"forge_remote_id": "forge_remote_id"}),),
            notes=(
                "No request body; answers 200 with the repository (never 201).",
                (
                    "The guard reads GET /api/user/repos?all=true first: an inactive entry with this "
                    "forge_remote_id and an id is a record Woodpecker already holds; an unlisted one asks too."
                ),
                (
                    "400 'No forge_remote_id provided' for an empty value or '0'; 409 when already active; "
                    "403 when the account is not admin of the forge repository or its owner is not "
                    "allowed; 500 on forge errors."
                ),
            ),
        ),
        _write(
            "update_repository",
            group="repositories",
            annotations=_WRITE_DESTRUCTIVE,
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
                "Changes a repository's Woodpecker settings, sending only the fields passed. Asks a person "
                "first when the change widens exposure: a trusted_* flag set to true, require_approval "
                "lowered, visibility raised (towards public), allow_deploy turned on, or allow_pr turned on "
                "with require_approval none. Narrowing applies at once."
            ),
            params=(
                _REPO_ID,
                Param(
                    "config_file",
                    "string",
                    False,
                    "Where Woodpecker looks for pipeline definitions: one file (.woodpecker.yml) or a "
                    "folder (.woodpecker/). '' restores the default lookup.",
                    constraints={"maxLength": 500},
                ),
                Param(
                    "timeout",
                    "integer",
                    False,
                    "Minutes a pipeline may run. Above the server's configured maximum, only an instance "
                    "admin may set it.",
                    constraints={"minimum": 1, "maximum": 10080},
                ),
                Param(
                    "visibility",
                    "enum",
                    False,
                    "Who sees builds and logs: public (everyone), internal (any signed-in user) or private "
                    "(users with access in the forge). Raising it (private < internal < public) asks a person.",
                    choices=("public", "private", "internal"),
                ),
                Param(
                    "allow_pr",
                    "boolean",
                    False,
                    "Whether pull-request events start pipelines; turning it on while require_approval is "
                    "none asks a person.",
                ),
                Param(
                    "allow_deploy",
                    "boolean",
                    False,
                    "Whether deployment events are accepted; re-running a pipeline as a deployment needs it. "
                    "Turning it on asks a person.",
                ),
                Param(
                    "require_approval",
                    "enum",
                    False,
                    "Which pipelines wait for approve_pipeline, loosest to strictest: none, forks, "
                    "pull_requests, all_events. A step towards none asks a person.",
                    choices=("none", "forks", "pull_requests", "all_events"),
                ),
                Param(
                    "cancel_previous_pipeline_events",
                    "array",
                    False,
                    "Events for which a newer pipeline cancels an older one still running; replaces the "
                    "stored list.",
                    constraints={"items": {"enum": list(_EVENTS)}, "maxItems": 9, "uniqueItems": True},
                ),
                Param(
                    "trusted_network",
                    "boolean",
                    False,
                    "Host networking for pipelines (instance admin only); true asks a person.",
                ),
                Param(
                    "trusted_volumes",
                    "boolean",
                    False,
                    "Volume mounts of host paths for pipelines (instance admin only); true asks a person.",
                ),
                Param(
                    "trusted_security",
                    "boolean",
                    False,
                    "Privileged containers, i.e. control over the agent host (instance admin only); true "
                    "asks a person.",
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint(
                    "GET",
                    "/api/repos/{repo_id}",
                    when=(
                        "require_approval or visibility is passed, or allow_deploy or allow_pr is true "
                        "(current values, for the comparison)"
                    ),
                ),
                Endpoint(
                    "PATCH",
                    "/api/repos/{repo_id}",
                    body=(
                        "config_file",
                        "timeout",
                        "visibility",
                        "allow_pr",
                        "allow_deploy",
                        "require_approval",
                        "cancel_previous_pipeline_events",
                        "trusted.network",
                        "trusted.volumes",
                        "trusted.security",
                    ),
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
        ),
        _write(
            "repair_repository",
            group="repositories",
            annotations=_WRITE_IDEMPOTENT,
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
                "Reinstalls a repository's forge webhook and re-reads its data from the forge: the fix "
                "when pushes stop starting builds, e.g. after a rename or a new Woodpecker URL. "
                "scope=instance repairs every repository, one forge round-trip each; it needs an instance "
                "admin and asks a person first. scope=repository does not ask."
            ),
            params=(
                _SCOPE_REPO_ID,
                Param(
                    "scope",
                    "enum",
                    False,
                    "repository (default): repo_id only. instance: every repository on the server; asks a "
                    "person.",
                    choices=("repository", "instance"),
                    constraints={"default": "repository"},
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint("POST", "/api/repos/{repo_id}/repair", when="scope == 'repository'", success=204),
                Endpoint("POST", "/api/repos/repair", when="scope == 'instance'", success=204),
            ),
            notes=(
                "Both routes answer 204 with no body.",
                (
                    "The instance route answers 500 with JSON {error, failed_repos} when some repositories "
                    "failed; report which."
                ),
                "The repository route needs repository admin.",
            ),
        ),
        _write(
            "move_repository",
            group="repositories",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "to"),
            description=(
                "Tells Woodpecker a repository's new owner/name after a transfer or rename in the forge; "
                "the forge is not changed. Always asks a person first. On 3.11 Woodpecker performs the "
                "move and then answers HTTP 500, so a retry moves it twice: read it back with "
                "get_repository or lookup_repository instead. 3.18 answers cleanly."
            ),
            params=(
                _REPO_ID,
                Param(
                    "to",
                    "string",
                    True,
                    "The owner/name the forge lists the repository under now.",
                    constraints=_FULL_NAME_RULES,
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/move", query={"to": "to"}, success=204),),
            notes=(
                "Answers 204. A missing or malformed to answers 500 with an empty body.",
                "401 when the account is not admin of the repository at the new location.",
                (
                    "Forges that send rename webhooks are usually followed without this call; a redundant "
                    "move can fail on a duplicate redirection."
                ),
                "After any 5xx, call get_repository before deciding anything: the move may have happened.",
            ),
        ),
        _write(
            "chown_repository",
            group="repositories",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id"),
            description=(
                "Makes this account the repository's owner in Woodpecker: from then on Woodpecker uses "
                "this account's forge token for the repository's clones, status reports, webhooks and "
                "every pipeline. Meant for when the previous owner can no longer sign in. Always asks a "
                "person first."
            ),
            params=(_REPO_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/chown"),),
            notes=(
                (
                    "Needs repository admin. Answers the repository; the owner itself (user_id) is not "
                    "serialised."
                ),
            ),
        ),
        _write(
            "delete_repository",
            group="repositories",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id"),
            description=(
                "Deletes a repository from Woodpecker with its whole history: pipelines, logs, secrets, "
                "registries, cron jobs, and its webhook. The repository in the forge stays. Always asks a "
                "person first."
            ),
            params=(_REPO_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}", query={"remove": "=true"}),),
            notes=(
                (
                    "Send remove=true: without it Woodpecker only deactivates (active=false, owner "
                    "cleared, history kept)."
                ),
                "Answers 200 with the repository body, not 204. Needs repository admin.",
                "With remove=true Woodpecker ignores a failure to remove the forge webhook.",
            ),
        ),
        # ---------- pipelines
        _read(
            "list_pipelines",
            group="pipelines",
            essential=True,
            untrusted_output=True,
            description=(
                "Pages through a repository's pipelines, newest first, one summary each (number, status, "
                "event, branch, ref, author, times, short commit, message subject), filtered by the "
                "server. The other pipeline tools take the number, not the id."
            ),
            params=(
                _REPO_ID,
                Param("branch", "string", False, "Only this branch.", constraints=_BRANCH_RULES),
                Param("event", "enum", False, "Only this trigger event.", choices=_EVENTS),
                Param(
                    "status",
                    "enum",
                    False,
                    "Only this status (blocked means waiting for approval).",
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
                    "Only pipelines whose git ref contains this text, e.g. refs/tags/.",
                    constraints={"minLength": 1, "maxLength": 250},
                ),
                Param(
                    "before",
                    "string",
                    False,
                    "Only pipelines created before this time (exclusive).",
                    constraints={"format": "date-time"},
                ),
                Param(
                    "after",
                    "string",
                    False,
                    "Only pipelines created after this time (exclusive).",
                    constraints={"format": "date-time"},
                ),
                *_PAGING,
            ),
            endpoints=(
                Endpoint(
                    "GET",
                    "/api/repos/{repo_id}/pipelines",
                    query={
                        **_PAGING_QUERY,
                        "branch": "branch",
                        "event": "event",
                        "status": "status",
                        "ref": "ref",
                        "before": "before",
                        "after": "after",
                    },
                ),
            ),
            notes=(
                "Always a JSON array, [] when empty; entries have no repo_id and no workflows.",
                "An unknown event or status, or before/after that are not RFC 3339, answer 400.",
                "ref is a substring (SQL LIKE) match; before/after compare with created.",
            ),
        ),
        _read(
            "get_pipeline",
            group="pipelines",
            essential=True,
            untrusted_output=True,
            description=(
                "Returns a pipeline with its workflows and their steps (id, name, type, state, exit code, "
                "times). get_step_logs takes the step ids listed here."
            ),
            params=(_REPO_ID, _NUMBER),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),),
            notes=(
                (
                    "Steps are in workflows[].children[] in the API; present them as steps. The step id is "
                    "Step.id, not pid."
                ),
                "Woodpecker also accepts 'latest' for the number; this tool takes numbers only.",
                "Message, title, branch, variables and changed files are pushed content.",
            ),
        ),
        _read(
            "get_pipeline_config",
            group="pipelines",
            untrusted_output=True,
            description=(
                "Shows the YAML files a pipeline was really built from, decoded, as they were at its "
                "commit; the branch may hold something else by now."
            ),
            params=(_REPO_ID, _NUMBER),
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
        ),
        _read(
            "get_pipeline_metadata",
            group="pipelines",
            untrusted_output=True,
            description=(
                "Returns the metadata Woodpecker turns into the CI_* variables: repository, this and the "
                "previous pipeline, workflow, step, system and forge. Useful when a step behaves "
                "differently from what its config suggests."
            ),
            params=(_REPO_ID, _NUMBER),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}/metadata"),),
            notes=("Needs push permission; without it Woodpecker answers 404.",),
        ),
        _read(
            "list_queued_pipelines",
            group="pipelines",
            admin="always",
            untrusted_output=True,
            description=(
                "Lists every pending or running pipeline on the instance, across repositories. Instance "
                "admin only. get_queue_info adds the tasks and workers behind them."
            ),
            endpoints=(Endpoint("GET", "/api/pipelines"),),
            notes=(
                (
                    "Answers [Feed] (repo_id, full_name and pipeline summary fields); not paged; always an "
                    "array."
                ),
            ),
        ),
        _write(
            "trigger_pipeline",
            group="pipelines",
            annotations=_WRITE_STARTS_BUILD,
            essential=True,
            untrusted_output=True,
            description=(
                "Starts a manual pipeline on a branch, built from the config at the branch's head. Not "
                "idempotent: every call, a repeat or a retry after a timeout included, starts another run, "
                "so check list_pipelines before calling again. list_repository_branches confirms the "
                "branch exists."
            ),
            params=(
                _REPO_ID,
                Param(
                    "branch",
                    "string",
                    True,
                    "The branch to build, at its current head; a valid git branch name.",
                    constraints=_GIT_BRANCH_RULES,
                ),
                Param(
                    "message",
                    "string",
                    False,
                    "Why it runs. Woodpecker 3.18 and later show it as 'MANUAL: <message> @ <branch>'; "
                    "3.17 drops it.",
                    constraints={"maxLength": 500},
                ),
                Param(
                    "variables",
                    "object",
                    False,
                    "Variables for this run only, never one of Woodpecker's own (CI_*, PATH, LD_*, …). "
                    "Keys and values are strings, nothing nested; refused names: CI_*, DRONE_*, "
                    "WOODPECKER_*, PLUGIN_*, LD_*, DYLD_*, GIT_*, PATH, HOME, SHELL.",
                    constraints={
                        "additionalProperties": {"type": "string", "maxLength": 10000},
                        "propertyNames": _VARIABLE_NAME_RULES,
                        "maxProperties": 100,
                    },
                ),
            ),
            endpoints=(
                Endpoint("POST", "/api/repos/{repo_id}/pipelines", body=("branch", "variables", "message")),
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
        ),
        _write(
            "restart_pipeline",
            group="pipelines",
            guard=GuardRule(
                when="bypasses_approval",
                condition=(
                    "Asks when event is deployment; when the source pipeline is declined; or when the "
                    "source pipeline would need approval under the repository's current settings "
                    "(Woodpecker's needsApproval rule) and no approval is on record (reviewed_by empty). "
                    "Other restarts never ask."
                ),
                targets=("repo_id", "number"),
                body_bound=True,
                needs_current_state=True,
            ),
            annotations=_WRITE_STARTS_BUILD,
            essential=True,
            untrusted_output=True,
            description=(
                "Runs a pipeline again from its original commit and config as a new pipeline; the old one "
                "stays. Not idempotent: every call, a repeat or retry included, starts another run. Asks a "
                "person first for event=deployment, a declined pipeline, or one that needs an approval it "
                "never had."
            ),
            params=(
                _REPO_ID,
                _NUMBER,
                Param(
                    "event",
                    "enum",
                    False,
                    "deployment, the only override Woodpecker allows (anything else is a 400); the "
                    "repository must allow deployments.",
                    choices=("deployment",),
                ),
                Param(
                    "deploy_to",
                    "string",
                    False,
                    "The environment to deploy to: a plain name (letters, digits, . _ / -).",
                    constraints={
                        "minLength": 1,
                        "maxLength": 250,
                        "pattern": "^[A-Za-z0-9._/-]+$",
                        "only_when": "event == 'deployment'",
                    },
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint(
                    "POST",
                    "/api/repos/{repo_id}/pipelines/{number}",
                    query={"event": "event", "deploy_to": "deploy_to"},
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
        ),
        _write(
            "cancel_pipeline",
            group="pipelines",
            annotations=_WRITE_IDEMPOTENT,
            essential=True,
            description=(
                "Stops a pending, running or blocked pipeline, killing any step in progress. Its record "
                "and logs stay, and restart_pipeline can run it again."
            ),
            params=(_REPO_ID, _NUMBER),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/cancel", success=204),),
            notes=(
                (
                    "Answers 204 (the swagger says 200). 400 when the pipeline is not pending, running or "
                    "blocked. Needs push permission."
                ),
            ),
        ),
        _write(
            "approve_pipeline",
            group="pipelines",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "number"),
            untrusted_output=True,
            description=(
                "Releases a pipeline held for approval (status blocked). Such pipelines usually carry code "
                "from a fork, which then runs with this repository's secrets: read get_pipeline_config "
                "before approving. Always asks a person first."
            ),
            params=(_REPO_ID, _NUMBER, _CONFIRM_TOKEN),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/approve"),),
            notes=(
                (
                    "400 'cannot approve a pipeline with status X' when the pipeline is not blocked, so a "
                    "repeated approval changes nothing."
                ),
                "The question names only numeric ids; branch, title, message and log text never reach it.",
            ),
        ),
        _write(
            "decline_pipeline",
            group="pipelines",
            annotations=_WRITE_IDEMPOTENT,
            untrusted_output=True,
            description=(
                "Rejects a pipeline held for approval: its status becomes declined and none of its steps "
                "run. The record stays."
            ),
            params=(_REPO_ID, _NUMBER),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/pipelines/{number}/decline"),),
            notes=(
                (
                    "A pipeline that is not blocked answers 500 with an empty body; check its status with "
                    "get_pipeline when that happens."
                ),
            ),
        ),
        _write(
            "delete_pipeline",
            group="pipelines",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "number"),
            description=(
                "Deletes a finished pipeline with everything under it: workflows, steps, logs. Woodpecker "
                "refuses while it is pending, running or blocked, so cancel or decline it first. Always "
                "asks a person first."
            ),
            params=(_REPO_ID, _NUMBER, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/pipelines/{number}", success=204),),
            notes=(
                (
                    "422 'Cannot delete pipeline with status X' for pending, running or blocked. Needs "
                    "repository admin."
                ),
            ),
        ),
        # ---------- logs
        _read(
            "get_step_logs",
            group="logs",
            essential=True,
            untrusted_output=True,
            description=(
                "Returns a step's console output as text, with its exit code. By default the last 200 "
                "lines, where errors usually are; from=head reads from the top and limit sets the number "
                "of lines. Every answer states which lines it shows and the total line count."
            ),
            params=(
                _REPO_ID,
                _NUMBER,
                _STEP_ID,
                Param(
                    "limit",
                    "integer",
                    False,
                    "How many lines to return.",
                    constraints={"minimum": 1, "maximum": 5000, "default": 200},
                ),
                Param(
                    "from",
                    "enum",
                    False,
                    "tail (default): the last lines; head: the first.",
                    choices=("head", "tail"),
                    constraints={"default": "tail"},
                ),
            ),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/logs/{number}/{step_id}"),),
            notes=(
                (
                    "Answers [LogEntry {id, step_id, time, line, data, type}] or null (no output yet). "
                    "data is base64 of raw bytes; decode, order by line, join with newlines (the agent "
                    "stripped one trailing newline per chunk)."
                ),
                (
                    "type 0 and 1 are output, 2 carries the exit code, 3 and 4 (metadata, progress) are "
                    "dropped. An entry is a chunk and may hold several lines."
                ),
                "step_id must belong to that pipeline, otherwise 404.",
                (
                    "Strip terminal control sequences, keep the text after the last carriage return of "
                    "each line, and cap the text from the end being read (40 000 bytes in the reference) "
                    "before returning."
                ),
                "Log text is whatever the step's container printed.",
            ),
        ),
        _write(
            "delete_step_logs",
            group="logs",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "number", "step_id"),
            description=(
                "Deletes what one step wrote to its log; the step and its result stay. Meant for a log "
                "that exposed a secret: rotate that secret as well, since anyone with read access may "
                "already have seen it. Always asks a person first."
            ),
            params=(_REPO_ID, _NUMBER, _STEP_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/logs/{number}/{step_id}", success=204),),
            notes=("422 while the step is pending or running. Needs push permission.",),
        ),
        _write(
            "delete_pipeline_logs",
            group="logs",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "number"),
            description=(
                "Deletes the logs of every step of a pipeline. The step results stay visible; only the "
                "output behind them is gone. Always asks a person first."
            ),
            params=(_REPO_ID, _NUMBER, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/logs/{number}", success=204),),
            notes=("422 while the pipeline is pending, running or blocked. Needs push permission.",),
        ),
        # ---------- secrets
        _read(
            "list_secrets",
            group="secrets",
            description=(
                "Lists the secrets of one level (repository, organization or global): names, events, image "
                "filters, notes. Values are never returned. Pipelines also get the other levels' secrets, "
                "so one missing here may still come from elsewhere."
            ),
            params=(*_AT_SCOPE, *_PAGING),
            endpoints=_at_each_level("GET", "/secrets", query=_PAGING_QUERY),
            notes=(
                (
                    "Repository level needs push permission, organization level organization admin, global "
                    "level any signed-in user."
                ),
                "The repository list is null when empty; ordered by name.",
                "Woodpecker strips values; drop any value field anyway.",
            ),
        ),
        _read(
            "get_secret",
            group="secrets",
            description=(
                "Returns one secret's settings: events, images, note. Its value is never returned, by this "
                "or any other tool, the create call included."
            ),
            params=(*_AT_SCOPE, _SECRET_NAME),
            endpoints=_at_each_level("GET", "/secrets/{name}"),
            notes=("The name is URL-encoded as a single path segment. 404 when absent.",),
        ),
        _write(
            "create_secret",
            group="secrets",
            guard=GuardRule(
                when="pull_request_events",
                condition="Asks when events includes pull_request, pull_request_closed or pull_request_metadata.",
                targets=("scope", "repo_id", "org_id", "name"),
                body_bound=True,
                needs_current_state=False,
            ),
            annotations=_WRITE_ADDS,
            admin="instance_scope",
            admin_when="scope=global",
            description=(
                "Stores a new secret at one level. The value is never returned, so keep a copy elsewhere. "
                "events has no default and needs at least one entry. Asks a person first when events has a "
                "pull-request event (forks' code would see it). The global level needs an instance admin."
            ),
            params=(
                *_AT_SCOPE,
                _SECRET_NAME,
                Param(
                    "value",
                    "string",
                    True,
                    "The secret's content; it can never be read back.",
                    constraints={"minLength": 1, "maxLength": 100000},
                    sensitive=True,
                ),
                Param(
                    "events",
                    "array",
                    True,
                    "Events whose pipelines receive the secret; there is no default.",
                    constraints=_SECRET_EVENTS_RULES,
                ),
                Param(
                    "images",
                    "array",
                    False,
                    "Images allowed to receive the secret; leave it out or pass [] for any image.",
                    constraints=_IMAGES_RULES,
                ),
                Param(
                    "note",
                    "string",
                    False,
                    "A comment kept with the secret, shown in the UI.",
                    constraints={"maxLength": 500},
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=_at_each_level("POST", "/secrets", body=("name", "value", "events", "images", "note")),
            notes=(
                (
                    "Validation failures (no event, an unknown event, a bad image name) answer 422 at "
                    "every level; an existing name answers 500, not 409."
                ),
                "Answers 200 with the secret, value stripped.",
            ),
        ),
        _write(
            "update_secret",
            group="secrets",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="scope=global",
            guard=GuardRule(
                when="new_value_or_widening",
                condition=(
                    "Asks when value is passed, when events adds a pull_request, pull_request_closed or "
                    "pull_request_metadata event the secret does not have yet, when images is [] while "
                    "the stored list is not empty, or when images adds an image the stored list lacks."
                ),
                targets=("scope", "repo_id", "org_id", "name"),
                body_bound=True,
                needs_current_state=True,
            ),
            description=(
                "Changes a secret's value, events, images or note; an events or images list replaces the "
                "stored one, and a secret cannot be renamed. Asks a person first for a new value, an added "
                "pull-request event, an emptied image list or an added image; narrowing and notes apply at "
                "once. Values are never returned. Global level: instance admin."
            ),
            params=(
                *_AT_SCOPE,
                _SECRET_NAME,
                Param(
                    "value",
                    "string",
                    False,
                    "New content, replacing the old for good; asks a person.",
                    constraints={"minLength": 1, "maxLength": 100000},
                    sensitive=True,
                ),
                Param(
                    "events",
                    "array",
                    False,
                    "The complete event list to store in place of the current one; adding a pull-request "
                    "event asks a person.",
                    constraints=_SECRET_EVENTS_RULES,
                ),
                Param(
                    "images",
                    "array",
                    False,
                    "The complete image list to store; [] lifts the restriction, which asks a person when "
                    "there was one.",
                    constraints=_IMAGES_RULES,
                ),
                Param("note", "string", False, "New comment.", constraints={"maxLength": 500}),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                *_at_each_level(
                    "GET",
                    "/secrets/{name}",
                    also=", and events or images is passed (current lists, for the comparison)",
                ),
                *_at_each_level("PATCH", "/secrets/{name}", body=("value", "events", "images", "note")),
            ),
            notes=(
                "Woodpecker ignores an empty value and any name in the body.",
                "Validation answers 422 at repository and organization level but 400 at global level.",
                (
                    "The current secret is read only when events or images is named, and only compared; "
                    "nothing read goes into the question."
                ),
                "A call with nothing to change is an error.",
            ),
        ),
        _write(
            "delete_secret",
            group="secrets",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="scope=global",
            guard=_asks_always("scope", "repo_id", "org_id", "name"),
            description=(
                "Deletes a secret. Its value was never readable, so it is lost, and pipelines that use it "
                "get nothing. The global level needs an instance admin. Always asks a person first."
            ),
            params=(*_AT_SCOPE, _SECRET_NAME, _CONFIRM_TOKEN),
            endpoints=_at_each_level("DELETE", "/secrets/{name}", success=204),
            notes=("404 when absent.",),
        ),
        # ---------- registries
        _read(
            "list_registries",
            group="registries",
            description=(
                "Lists the container-registry logins stored at one level (address, username). Passwords "
                "are never returned."
            ),
            params=(*_AT_SCOPE, *_PAGING),
            endpoints=_at_each_level("GET", "/registries", query=_PAGING_QUERY),
            notes=(
                'password is always "" in responses. The repository list is null when empty; ordered by id.',
                (
                    "Repository level needs push permission, organization level organization admin, global "
                    "level any signed-in user."
                ),
            ),
        ),
        _read(
            "get_registry",
            group="registries",
            description=(
                "Returns the login stored for one registry address: the username. The password is never "
                "returned."
            ),
            params=(*_AT_SCOPE, _REGISTRY_ADDRESS),
            endpoints=_at_each_level("GET", "/registries/{address}"),
            notes=(
                (
                    "The address travels URL-encoded as one path segment (slashes and colons included). "
                    "404 when absent."
                ),
            ),
        ),
        _write(
            "create_registry",
            group="registries",
            annotations=_WRITE_ADDS,
            admin="instance_scope",
            admin_when="scope=global",
            description=(
                "Stores a username and password for a container registry so pipelines can pull private "
                "images from it. The address is the key; the password is never returned. The global level "
                "needs an instance admin."
            ),
            params=(
                *_AT_SCOPE,
                _REGISTRY_ADDRESS,
                Param(
                    "username",
                    "string",
                    True,
                    "The account name at the registry.",
                    constraints={"minLength": 1, "maxLength": 2000},
                ),
                Param(
                    "password",
                    "string",
                    True,
                    "Password or access token for the registry; never returned.",
                    constraints={"minLength": 1, "maxLength": 100000},
                    sensitive=True,
                ),
            ),
            endpoints=_at_each_level("POST", "/registries", body=("address", "username", "password")),
            notes=(
                (
                    "Repository level answers 400 on validation and echoes a copy of the request (id 0, "
                    'password "") rather than the stored row; read it back with get_registry.'
                ),
                "Validation answers 422 at organization level and 400 at global level.",
            ),
        ),
        _write(
            "update_registry",
            group="registries",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="scope=global",
            guard=GuardRule(
                when="new_password",
                condition="Asks whenever password is passed.",
                targets=("scope", "repo_id", "org_id", "address"),
                body_bound=True,
                needs_current_state=False,
            ),
            description=(
                "Replaces the username and/or password stored for an address; to change the address, "
                "delete the entry and create another. Asks a person first when a password is passed; a "
                "username alone applies at once. The password is never returned. The global level needs an "
                "instance admin."
            ),
            params=(
                *_AT_SCOPE,
                _REGISTRY_ADDRESS,
                Param(
                    "username",
                    "string",
                    False,
                    "New account name.",
                    constraints={"minLength": 1, "maxLength": 2000},
                ),
                Param(
                    "password",
                    "string",
                    False,
                    "New password or token; the old one cannot be recovered. Asks a person.",
                    constraints={"minLength": 1, "maxLength": 100000},
                    sensitive=True,
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                *_at_each_level("PATCH", "/registries/{address}", body=("username", "password")),
                *_at_each_level(
                    "GET", "/registries/{address}", also=", and after the update (to report the stored entry)"
                ),
            ),
            notes=(
                "Never send address in the body: the organization and global routes would rename the entry.",
                (
                    "Repository level answers 422 on validation and echoes the request, not the stored "
                    "row; organization level 422, global level 400."
                ),
                "A call with nothing to change is an error.",
            ),
        ),
        _write(
            "delete_registry",
            group="registries",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="scope=global",
            guard=_asks_always("scope", "repo_id", "org_id", "address"),
            description=(
                "Deletes the login stored for a registry address; pulling private images from it fails "
                "afterwards. The global level needs an instance admin. Always asks a person first."
            ),
            params=(*_AT_SCOPE, _REGISTRY_ADDRESS, _CONFIRM_TOKEN),
            endpoints=_at_each_level("DELETE", "/registries/{address}", success=204),
            notes=("404 when absent.",),
        ),
        # ---------- crons
        _read(
            "list_crons",
            group="crons",
            untrusted_output=True,
            description=(
                "Lists a repository's cron jobs: schedule, branch, time zone, whether enabled, and when "
                "each fires next."
            ),
            params=(_REPO_ID, *_PAGING),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/cron", query=_PAGING_QUERY),),
            notes=(
                (
                    "null when there are none; ordered by name; next_exec is Unix seconds. Needs push "
                    "permission."
                ),
                (
                    "Names and branches are written by people with push access; the name also becomes the "
                    "message of the pipelines the job starts."
                ),
            ),
        ),
        _read(
            "get_cron",
            group="crons",
            untrusted_output=True,
            description="Returns one cron job with all its fields, variables included.",
            params=(_REPO_ID, _CRON_ID),
            endpoints=(Endpoint("GET", "/api/repos/{repo_id}/cron/{cron_id}"),),
            notes=("A non-numeric id answers 400, an unknown one 404. Needs push permission.",),
        ),
        _write(
            "create_cron",
            group="crons",
            annotations=_WRITE_ADDS,
            description=(
                "Adds an enabled cron job to a repository. Its pipelines have event cron: steps limited to "
                "other events are skipped, and secrets limited to other events are missing."
            ),
            params=(
                _REPO_ID,
                Param(
                    "name",
                    "string",
                    True,
                    "The job's name, unique within the repository.",
                    constraints={"minLength": 1, "maxLength": 250},
                ),
                _SCHEDULE,
                Param(
                    "branch",
                    "string",
                    False,
                    "The branch to build; it must exist in the forge. Without it, whatever the default "
                    "branch is when the job fires.",
                    constraints=_BRANCH_RULES,
                ),
                Param(
                    "timezone",
                    "string",
                    False,
                    "Zone name such as Europe/Berlin, UTC by default. Servers on the stock container image "
                    "have no zone data and refuse anything but UTC ('unknown time zone').",
                    constraints={
                        "default": "UTC",
                        "minLength": 1,
                        "maxLength": 100,
                        "pattern": _TIMEZONE_PATTERN,
                    },
                ),
            ),
            endpoints=(
                Endpoint(
                    "POST",
                    "/api/repos/{repo_id}/cron",
                    body=("name", "schedule", "branch", "timezone", "enabled=true"),
                ),
            ),
            notes=(
                "Always send enabled: true; since 3.13 an omitted enabled creates a disabled job.",
                (
                    "Validation answers 422, an unparsable schedule 400, a branch missing in the forge "
                    "400, a duplicate name 409. A six-field expression fails with 'expected exactly 5 "
                    "fields, found 6'."
                ),
            ),
        ),
        _write(
            "update_cron",
            group="crons",
            annotations=_WRITE_DESTRUCTIVE,
            untrusted_output=True,
            description=(
                "Changes a cron job's name, schedule, branch, time zone or enabled flag; fields not passed "
                "stay as they are. enabled=false pauses the job and keeps its definition."
            ),
            params=(
                _REPO_ID,
                _CRON_ID,
                Param(
                    "name", "string", False, "New job name.", constraints={"minLength": 1, "maxLength": 250}
                ),
                _optional(_SCHEDULE),
                Param(
                    "branch",
                    "string",
                    False,
                    "New branch; it must exist in the forge.",
                    constraints=_BRANCH_RULES,
                ),
                Param(
                    "timezone",
                    "string",
                    False,
                    "New zone name such as Europe/Berlin; the stock server image knows only UTC ('unknown "
                    "time zone' otherwise).",
                    constraints={"minLength": 1, "maxLength": 100, "pattern": _TIMEZONE_PATTERN},
                ),
                Param("enabled", "boolean", False, "false pauses the job; true resumes it."),
            ),
            endpoints=(
                Endpoint(
                    "PATCH",
                    "/api/repos/{repo_id}/cron/{cron_id}",
                    body=("name", "schedule", "branch", "timezone", "enabled"),
                ),
            ),
            notes=(
                (
                    "Woodpecker ignores blank strings. A bad schedule or time zone answers 400, a missing "
                    "branch 400, failed final validation 422."
                ),
                (
                    "The caller becomes the job's creator_id; next_exec is recomputed when schedule or "
                    "time zone change or the job is re-enabled."
                ),
                "A call with nothing to change is an error.",
            ),
        ),
        _write(
            "run_cron",
            group="crons",
            annotations=_WRITE_STARTS_BUILD,
            untrusted_output=True,
            description=(
                "Starts a cron job's pipeline now, as a cron event, leaving the schedule alone; a way to "
                "test a job before it fires. Not idempotent: every call, a repeat or retry included, "
                "starts another run."
            ),
            params=(_REPO_ID, _CRON_ID),
            endpoints=(Endpoint("POST", "/api/repos/{repo_id}/cron/{cron_id}"),),
            notes=(
                (
                    "No body. 200 with the new pipeline; 204 when the config filtered everything out "
                    "(report that no pipeline was created)."
                ),
                "Forge or branch errors answer 500 with a text body.",
            ),
        ),
        _write(
            "delete_cron",
            group="crons",
            annotations=_WRITE_DESTRUCTIVE,
            guard=_asks_always("repo_id", "cron_id"),
            description=(
                "Deletes a cron job. Nothing will report the runs that stop happening; to pause it "
                "instead, use update_cron with enabled=false. Always asks a person first."
            ),
            params=(_REPO_ID, _CRON_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/repos/{repo_id}/cron/{cron_id}", success=204),),
            notes=("404 when absent. Needs push permission.",),
        ),
        # ---------- organizations
        _read(
            "list_organizations",
            group="organizations",
            admin="always",
            description=(
                "Lists the organizations stored on the instance. Instance admin only. Personal accounts, "
                "which Woodpecker also keeps as organizations, are left out; lookup_organization finds one "
                "by name."
            ),
            params=_PAGING,
            endpoints=(Endpoint("GET", "/api/orgs", query=_PAGING_QUERY),),
            notes=("Only entries with is_user=false; ordered by id; null when empty.",),
        ),
        _read(
            "get_organization",
            group="organizations",
            description=(
                "Returns an organization by id: name, forge, and whether it stands for a personal account."
            ),
            params=(_ORG_ID,),
            endpoints=(Endpoint("GET", "/api/orgs/{org_id}"),),
            notes=(
                (
                    "Needs membership (instance admins always pass). A single object, although the swagger "
                    "declares an array."
                ),
            ),
        ),
        _read(
            "lookup_organization",
            group="organizations",
            description=(
                "Finds an organization, or a personal account, by its name in the forge and returns it "
                "with the id that organization-level secret, registry and agent calls take."
            ),
            params=(
                Param(
                    "name",
                    "string",
                    True,
                    "The organization's name in the forge; GitLab subgroups contain slashes.",
                    constraints={
                        "minLength": 1,
                        "maxLength": 200,
                        "pattern": r"^(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
                    },
                ),
            ),
            endpoints=(Endpoint("GET", "/api/orgs/lookup/{name}"),),
            notes=(
                (
                    "Searched within the caller's forge. 404 for an unknown name, and for a private "
                    "organization unless the caller is an instance admin or it is the caller's own."
                ),
                "Wildcard route; slashes may travel literally.",
            ),
        ),
        _read(
            "get_organization_permissions",
            group="organizations",
            description=(
                "Tells whether this account is a member, and an admin, of an organization; managing its "
                "secrets, registries and agents needs admin."
            ),
            params=(_ORG_ID,),
            endpoints=(Endpoint("GET", "/api/orgs/{org_id}/permissions"),),
            notes=("Answers {member, admin}, a single object (the swagger says array).",),
        ),
        _write(
            "delete_organization",
            group="organizations",
            annotations=_WRITE_DESTRUCTIVE,
            admin="always",
            guard=_asks_always("org_id"),
            description=(
                "Deletes an organization and everything stored at its level in Woodpecker: secrets, "
                "registries, agents. The forge and the repositories stay, but their pipelines lose those "
                "secrets. Instance admin only. Always asks a person first."
            ),
            params=(_ORG_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/orgs/{org_id}", success=204),),
            notes=("Needs organization admin and instance admin.",),
        ),
        # ---------- account
        _read(
            "get_current_user",
            group="account",
            description=(
                "Shows which Woodpecker account the configured token belongs to and whether it is an "
                "instance admin. The first check for a 401 or 403."
            ),
            endpoints=(Endpoint("GET", "/api/user"),),
            notes=("admin is omitted from the JSON when false; report it as false.",),
        ),
        _read(
            "get_pipeline_feed",
            group="account",
            untrusted_output=True,
            description=(
                "One-call overview: the latest pipeline of every active repository this account can push "
                "to, instead of one list_pipelines call per repository."
            ),
            endpoints=(Endpoint("GET", "/api/user/feed", query={"latest": "=true"}),),
            notes=(
                (
                    "latest=true gives one entry per active repository with push or admin access, ordered "
                    "by full_name; a repository without pipelines appears with empty pipeline fields."
                ),
                (
                    "Without latest Woodpecker returns the 50 newest pipelines instead, and null when "
                    "there are none."
                ),
            ),
        ),
        # ---------- users
        _read(
            "list_users",
            group="users",
            admin="always",
            description=(
                "Lists every Woodpecker account. Instance admin only. Accounts appear at first sign-in or "
                "through create_user, so everyone who ever used the instance is listed."
            ),
            params=_PAGING,
            endpoints=(Endpoint("GET", "/api/users", query=_PAGING_QUERY),),
            notes=("Ordered by login; null when empty.",),
        ),
        _read(
            "get_user",
            group="users",
            admin="always",
            description="Returns one account, by login and forge. Instance admin only.",
            params=(
                _LOGIN,
                _USER_FORGE_ID,
                Param(
                    "forge_remote_id",
                    "string",
                    False,
                    "The user's id on the forge, to pick the right account when a login is ambiguous.",
                    constraints={"minLength": 1, "maxLength": 200},
                ),
            ),
            endpoints=(
                Endpoint(
                    "GET",
                    "/api/users/{login}",
                    query={"forge_id": "forge_id", "forge_remote_id": "forge_remote_id"},
                ),
            ),
            notes=(
                (
                    "Woodpecker would default a missing forge_id to 1; the tool requires it so the account "
                    "is never ambiguous. 404 when absent."
                ),
            ),
        ),
        _write(
            "create_user",
            group="users",
            annotations=_WRITE_IDEMPOTENT,
            admin="always",
            guard=GuardRule(
                when="always",
                condition=(
                    "Every call asks: a new account lets its holder sign in even where registration is "
                    "closed; the question says whether it grants admin."
                ),
                targets=("login",),
                body_bound=True,
                needs_current_state=False,
            ),
            description=(
                "Creates a Woodpecker account for a forge user who has not signed in yet; the forge is not "
                "touched. Spell the login exactly as the forge does, or the real sign-in makes a second "
                "account and this one stays unused. Instance admin only. Always asks a person first (a new "
                "account can sign in even where registration is closed)."
            ),
            params=(
                _LOGIN,
                Param(
                    "email",
                    "string",
                    False,
                    "Contact address.",
                    constraints={"maxLength": 500, "format": "email"},
                ),
                Param(
                    "admin",
                    "boolean",
                    False,
                    "true makes it an instance admin, with power over every repository, secret and agent; "
                    "asks a person.",
                    constraints={"default": False},
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint("POST", "/api/users", body=("login", "email")),
                Endpoint(
                    "GET",
                    "/api/users/{login}",
                    when="admin == true (after the create)",
                    query={"forge_id": "=1"},
                ),
                Endpoint(
                    "PATCH",
                    "/api/users/{login}",
                    when="admin == true (after the create)",
                    body=("login", "email", "avatar_url", "admin", "forge_id", "forge_remote_id"),
                ),
            ),
            notes=(
                (
                    "Woodpecker's POST ignores admin; setting it takes update_user's read-modify-write "
                    "right after the create, and nothing is created before the approval. If that second "
                    "step fails, say the account exists without admin."
                ),
                (
                    'A pre-created account gets forge_id 1 and forge_remote_id "0"; (forge_id, '
                    "forge_remote_id) is unique, so a second pre-created account on the same forge "
                    "collides with the first (500)."
                ),
                (
                    "A login outside [a-zA-Z0-9-_.] or longer than 250 characters answers 400; an existing "
                    "login on the same forge answers 500, so a repeated call changes nothing."
                ),
            ),
        ),
        _write(
            "update_user",
            group="users",
            annotations=_WRITE_DESTRUCTIVE,
            admin="always",
            guard=GuardRule(
                when="grants_admin",
                condition="Asks when admin is passed as true.",
                targets=("login", "forge_id"),
                body_bound=True,
                needs_current_state=False,
            ),
            description=(
                "Changes an account's email or instance-admin flag; anything not passed keeps its value. "
                "Instance admin only. Granting admin (admin=true) hands over the whole instance and asks a "
                "person first; revoking it or fixing the email applies at once."
            ),
            params=(
                _LOGIN,
                _USER_FORGE_ID,
                Param(
                    "email",
                    "string",
                    False,
                    "New contact address.",
                    constraints={"maxLength": 500, "format": "email"},
                ),
                Param(
                    "admin", "boolean", False, "true grants instance admin (asks a person); false revokes it."
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint(
                    "GET",
                    "/api/users/{login}",
                    when="before the update (current record)",
                    query={"forge_id": "forge_id"},
                ),
                Endpoint(
                    "PATCH",
                    "/api/users/{login}",
                    body=("login", "email", "avatar_url", "admin", "forge_id", "forge_remote_id"),
                ),
                Endpoint(
                    "GET",
                    "/api/users/{login}",
                    when="after the update (report the stored record)",
                    query={"forge_id": "forge_id"},
                ),
            ),
            notes=(
                (
                    "PATCH overwrites login, email, avatar_url and admin from the body and finds the row "
                    "by forge_id and forge_remote_id first: send the complete current record with the "
                    "changes merged, or the account is blanked."
                ),
                "The PATCH answer echoes the request; read the account again to report it.",
                "409 on a store conflict. A call with nothing to change is an error.",
            ),
        ),
        _write(
            "delete_user",
            group="users",
            annotations=_WRITE_DESTRUCTIVE,
            admin="always",
            guard=_asks_always("login", "forge_id"),
            description=(
                "Deletes a Woodpecker account. Instance admin only. Repositories it owns lose the forge "
                "token Woodpecker uses for them, so their pipelines stop being triggered; hand them over "
                "with chown_repository first. Always asks a person first."
            ),
            params=(_LOGIN, _USER_FORGE_ID, _CONFIRM_TOKEN),
            endpoints=(
                Endpoint("DELETE", "/api/users/{login}", query={"forge_id": "forge_id"}, success=204),
            ),
            notes=("404 when absent.",),
        ),
        # ---------- agents
        _read(
            "list_agents",
            group="agents",
            admin="instance_scope",
            admin_when="org_id omitted",
            description=(
                "Lists build agents and their state (platform, backend, capacity, version, labels, last "
                "contact); look here when pipelines stay pending. Without org_id the instance's agents "
                "(instance admin), with it that organization's (organization admin). Tokens are masked."
            ),
            params=(_AGENT_ORG_ID, *_PAGING),
            endpoints=(
                Endpoint("GET", "/api/agents", when="org_id is omitted", query=_PAGING_QUERY),
                Endpoint("GET", "/api/orgs/{org_id}/agents", when="org_id is passed", query=_PAGING_QUERY),
            ),
            notes=(
                (
                    "Woodpecker returns every agent's token in clear text: replace it with a redaction "
                    "marker (keep the key, so it does not read as 'no token')."
                ),
                (
                    "null when empty. The organization route exists only when the server allows "
                    "user-registered agents. org_id -1 in a record marks an instance agent."
                ),
            ),
        ),
        _read(
            "get_agent",
            group="agents",
            admin="always",
            description=(
                "Returns one agent, its token masked. Instance admin only. Tokens cannot be issued again: "
                "replacing a lost one takes delete_agent, then create_agent."
            ),
            params=(_AGENT_ID,),
            endpoints=(Endpoint("GET", "/api/agents/{agent_id}"),),
            notes=("The API returns the token in clear text; redact it.",),
        ),
        _read(
            "list_agent_tasks",
            group="agents",
            admin="always",
            untrusted_output=True,
            description=(
                "Lists the workflows an agent is running right now, with their pipeline and repository "
                "ids, e.g. to decide what to cancel. Instance admin only."
            ),
            params=(_AGENT_ID,),
            endpoints=(Endpoint("GET", "/api/agents/{agent_id}/tasks"),),
            notes=("null when the agent is idle.", "Task names and labels come from pipeline configs."),
        ),
        _write(
            "create_agent",
            group="agents",
            guard=GuardRule(
                when="always",
                condition="Every call asks, whatever the arguments.",
                targets=("name", "org_id"),
                body_bound=True,
                needs_current_state=False,
            ),
            annotations=_WRITE_ADDS,
            admin="instance_scope",
            admin_when="org_id omitted",
            description=(
                "Creates an agent and returns its token, once only. Whoever holds the token can attach a "
                "machine that receives pipelines and their secrets: put it in the agent's configuration, "
                "nowhere else. With org_id the agent serves only that organization's pipelines "
                "(organization admin); without, instance admin. Always asks a person first."
            ),
            params=(
                _AGENT_NAME,
                _AGENT_ORG_ID,
                Param(
                    "no_schedule",
                    "boolean",
                    False,
                    "Create it drained: it may connect but gets no work.",
                    constraints={"default": False},
                ),
                _CUSTOM_LABELS,
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint("POST", "/api/agents", when="org_id is omitted", body=("name", "no_schedule")),
                Endpoint(
                    "POST", "/api/orgs/{org_id}/agents", when="org_id is passed", body=("name", "no_schedule")
                ),
            ),
            notes=(
                "The one tool whose answer carries an agent token unredacted; say what it is.",
                "Instance agents get org_id -1 and the caller as owner_id.",
            ),
        ),
        _write(
            "update_agent",
            group="agents",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="org_id omitted",
            description=(
                "Renames an agent or changes its scheduling; anything not passed keeps its value. "
                "no_schedule=true lets it finish running work but take no more, e.g. before host "
                "maintenance. Without org_id it needs an instance admin; with it, an organization admin."
            ),
            params=(
                _AGENT_ID,
                _AGENT_ORG_ID,
                _optional(_AGENT_NAME),
                Param(
                    "no_schedule",
                    "boolean",
                    False,
                    "true keeps new work away from the agent; false lets it take work again.",
                ),
                _CUSTOM_LABELS,
            ),
            endpoints=(
                Endpoint("GET", "/api/agents/{agent_id}", when="org_id is omitted (current record)"),
                Endpoint(
                    "GET",
                    "/api/orgs/{org_id}/agents",
                    when="org_id is passed (current record: walk the pages until the id is found)",
                    query={"perPage": "=50"},
                ),
                Endpoint(
                    "PATCH", "/api/agents/{agent_id}", when="org_id is omitted", body=("name", "no_schedule")
                ),
                Endpoint(
                    "PATCH",
                    "/api/orgs/{org_id}/agents/{agent_id}",
                    when="org_id is passed",
                    body=("name", "no_schedule"),
                ),
            ),
            notes=(
                (
                    "Woodpecker overwrites name and no_schedule from the body: always send both, taking "
                    "the one not passed from the current record."
                ),
                "Answers the agent with its token in clear text: redact it.",
                (
                    "409 on a store failure (instance route), 500 (organization route); an agent of "
                    "another organization answers 404 on the organization route."
                ),
                "A call with nothing to change is an error.",
            ),
        ),
        _write(
            "delete_agent",
            group="agents",
            annotations=_WRITE_DESTRUCTIVE,
            admin="instance_scope",
            admin_when="org_id omitted",
            guard=_asks_always("agent_id", "org_id"),
            description=(
                "Deletes an agent: its token stops working and its host cannot reconnect. Woodpecker "
                "refuses while it still runs tasks, so drain it first (update_agent with "
                "no_schedule=true). Without org_id it needs an instance admin. Always asks a person first."
            ),
            params=(_AGENT_ID, _AGENT_ORG_ID, _CONFIRM_TOKEN),
            endpoints=(
                Endpoint("DELETE", "/api/agents/{agent_id}", when="org_id is omitted", success=204),
                Endpoint(
                    "DELETE", "/api/orgs/{org_id}/agents/{agent_id}", when="org_id is passed", success=204
                ),
            ),
            notes=("409 'Agent has running tasks' while it is busy. 204 on success (the swagger says 200).",),
        ),
        # ---------- forges
        _read(
            "list_forges",
            group="forges",
            description=(
                "Lists the configured forges (GitHub, GitLab, Gitea, Forgejo, Bitbucket…); their ids are "
                "the forge_id the user tools take. Without instance admin only id, type and url are shown. "
                "The OAuth client secret is never returned."
            ),
            params=_PAGING,
            endpoints=(Endpoint("GET", "/api/forges", query=_PAGING_QUERY),),
            notes=(
                (
                    "Answers even anonymously, with the public view; the full record needs an instance "
                    "admin. The OAuth client secret is never returned."
                ),
                "Redact credential-like keys inside additional_options.",
            ),
        ),
        _read(
            "get_forge",
            group="forges",
            description=(
                "Returns one forge's configuration; without instance admin only id, type and url. The "
                "OAuth client secret is never returned."
            ),
            params=(_FORGE_ID,),
            endpoints=(Endpoint("GET", "/api/forges/{forge_id}"),),
            notes=("Non-admins get id, type and url only. The client secret is never returned.",),
        ),
        _write(
            "create_forge",
            group="forges",
            guard=GuardRule(
                when="always",
                condition="Every call asks, whatever the arguments.",
                targets=("type", "url"),
                body_bound=True,
                needs_current_state=False,
            ),
            annotations=_WRITE_ADDS,
            admin="always",
            description=(
                "Adds a forge for sign-in and repositories. Instance admin only. It needs an OAuth app on "
                "that forge whose redirect points back at this Woodpecker. Always asks a person first: its "
                "logins can match the admin list. The OAuth client secret is never returned."
            ),
            params=(
                _FORGE_TYPE,
                _FORGE_URL,
                _OAUTH_CLIENT,
                Param(
                    "oauth_client_secret",
                    "string",
                    True,
                    "The OAuth application's client secret; never returned.",
                    constraints={"minLength": 1, "maxLength": 1000},
                    sensitive=True,
                ),
                _OAUTH_HOST,
                Param(
                    "skip_verify",
                    "boolean",
                    False,
                    "Skip certificate checks towards the forge; a last resort for private CAs.",
                    constraints={"default": False},
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint(
                    "POST",
                    "/api/forges",
                    body=("type", "url", "client", "oauth_client_secret", "oauth_host", "skip_verify"),
                ),
            ),
            notes=(
                (
                    "Woodpecker fetches url and oauth_host on every sign-in, so refuse schemes other than "
                    "http and https."
                ),
                "The answer never contains the secret.",
            ),
        ),
        _write(
            "update_forge",
            group="forges",
            annotations=_WRITE_DESTRUCTIVE,
            admin="always",
            guard=_asks_always("forge_id", body_bound=True),
            description=(
                "Changes a forge's configuration; anything not passed keeps its value. Instance admin "
                "only. A mistake can lock everyone out of sign-in, the web UI included, so it always asks "
                "a person first. The OAuth client secret is never returned."
            ),
            params=(
                _FORGE_ID,
                _optional(_FORGE_TYPE),
                _optional(_FORGE_URL),
                _optional(_OAUTH_CLIENT),
                Param(
                    "oauth_client_secret",
                    "string",
                    False,
                    "New client secret; never returned.",
                    constraints={"minLength": 1, "maxLength": 1000},
                    sensitive=True,
                ),
                _OAUTH_HOST,
                Param(
                    "skip_verify",
                    "boolean",
                    False,
                    "Whether certificate checks towards the forge are skipped.",
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(
                Endpoint("GET", "/api/forges/{forge_id}", when="before the update (current record)"),
                Endpoint(
                    "PATCH",
                    "/api/forges/{forge_id}",
                    body=(
                        "type",
                        "url",
                        "client",
                        "oauth_client_secret",
                        "oauth_host",
                        "skip_verify",
                        "additional_options",
                    ),
                ),
            ),
            notes=(
                (
                    "PATCH overwrites type, url, client, oauth_host, skip_verify and additional_options "
                    "from the body; send the current record with the changes merged. oauth_client_secret "
                    "changes only when non-empty."
                ),
                "409 on a store failure. A call with nothing to change is an error.",
            ),
        ),
        _write(
            "delete_forge",
            group="forges",
            annotations=_WRITE_DESTRUCTIVE,
            admin="always",
            guard=_asks_always("forge_id"),
            description=(
                "Deletes a forge configuration: its accounts can no longer sign in and Woodpecker loses "
                "access to its repositories. Instance admin only. Always asks a person first."
            ),
            params=(_FORGE_ID, _CONFIRM_TOKEN),
            endpoints=(Endpoint("DELETE", "/api/forges/{forge_id}", success=204),),
            notes=("Answers 204 (the swagger says 200).",),
        ),
        # ---------- server
        _read(
            "get_server_info",
            group="server",
            description=(
                "Reports the server's version and health check. Sent without credentials, so it tells "
                "connection trouble from token trouble: success here with failures elsewhere points at the "
                "token."
            ),
            endpoints=(
                Endpoint("GET", "/version", root=True),
                Endpoint("GET", "/healthz", root=True, success=204),
            ),
            notes=(
                (
                    "Both live at the server root, not under /api (/api/version answers the web UI with "
                    "200 text/html). Sent without Authorization."
                ),
                "healthz: 204 when healthy, 500 when the database ping fails.",
                "version is 'dev' or 'next-<sha>' on development builds.",
            ),
        ),
        _read(
            "get_queue_info",
            group="server",
            admin="always",
            untrusted_output=True,
            description=(
                "Shows the scheduler's state: pending, dependency-blocked and running tasks, worker "
                "counts, and whether the queue is paused. Instance admin only. Read it with "
                "list_queued_pipelines to see why work is waiting."
            ),
            endpoints=(Endpoint("GET", "/api/queue/info"),),
            notes=("Task names and labels come from pipeline configs.",),
        ),
        _read(
            "get_log_level",
            group="server",
            admin="always",
            description="Returns the log level the server runs with. Instance admin only.",
            endpoints=(Endpoint("GET", "/api/log-level"),),
            notes=('Answers {"log-level": "info"}.',),
        ),
        _write(
            "pause_queue",
            group="server",
            annotations=_WRITE_IDEMPOTENT,
            admin="always",
            guard=_asks_always(),
            description=(
                "Stops handing work to agents, for the whole instance, until resume_queue; running "
                "pipelines finish. Instance admin only. Users just see their builds wait, with no "
                "explanation, so it always asks a person first."
            ),
            params=(_CONFIRM_TOKEN,),
            endpoints=(Endpoint("POST", "/api/queue/pause", success=204),),
        ),
        _write(
            "resume_queue",
            group="server",
            annotations=_WRITE_IDEMPOTENT,
            admin="always",
            description=(
                "Hands out work again after pause_queue. Instance admin only. The backlog goes out at "
                "once, so expect a load spike."
            ),
            endpoints=(Endpoint("POST", "/api/queue/resume", success=204),),
        ),
        _write(
            "set_log_level",
            group="server",
            annotations=_WRITE_IDEMPOTENT,
            admin="always",
            guard=GuardRule(
                when="silences_server",
                condition="Asks when level is fatal, panic or disabled, whatever the current level.",
                targets=(),
                body_bound=True,
                needs_current_state=False,
            ),
            description=(
                "Changes the server's log level live, without a restart. Instance admin only. trace "
                "records request bodies and debug is noisy. Asks a person first for fatal, panic or "
                "disabled, which silence nearly all records; other levels apply at once."
            ),
            params=(
                Param(
                    "level",
                    "enum",
                    True,
                    "The new level; servers start at info.",
                    choices=("trace", "debug", "info", "warn", "error", "fatal", "panic", "disabled"),
                ),
                _CONFIRM_TOKEN,
            ),
            endpoints=(Endpoint("POST", "/api/log-level", body=("log-level",)),),
            notes=(
                (
                    'Body is {"log-level": level}; the answer echoes it. An unknown level answers 400 with '
                    "an empty body."
                ),
            ),
        ),
    )
)


# ------------------------------------------------------------------------------------------------
# Beyond the shared catalogue (issue 14: debugging a failed pipeline in one or two calls).
# Kept in this separate block: the 71 tools above follow the shared catalogue (catalogue.json with
# catalogue-beyond.json's entries) exactly;
# these are documented additions, read-only and never guarded, which the conformance test
# accepts by name (ADDED_TOOLS, ADDED_PARAMS) and nothing else.

_FROM_LINE = Param(
    "from_line",
    "integer",
    False,
    "Read lines numbered from this one on (Woodpecker's numbers, from 0, as results and "
    "search_step_logs show them); the first `limit` of them.",
    constraints={"minimum": 0, "maximum": _MAX_ID},
)
_TO_LINE = Param(
    "to_line",
    "integer",
    False,
    "Read lines numbered up to this one (included); alone, the last `limit` lines up to it.",
    constraints={"minimum": 0, "maximum": _MAX_ID},
)

_SEARCH_STEP_LOGS = _read(
    "search_step_logs",
    group="logs",
    untrusted_output=True,
    description=(
        "Searches every line of a step's log for a regular expression (RE2: no look-around or "
        "back-references) and returns the matching lines with their numbers and context lines, "
        "however long the log. Says how many lines matched in all and which are shown; "
        "get_step_logs with from_line reads around a match."
    ),
    params=(
        _REPO_ID,
        _NUMBER,
        _STEP_ID,
        Param(
            "pattern",
            "string",
            True,
            "The regular expression, matched within each line, e.g. 'FAIL|panic:|error:'.",
            constraints={"minLength": 1, "maxLength": 500},
        ),
        Param(
            "ignore_case",
            "boolean",
            False,
            "Match letters in either case.",
            constraints={"default": False},
        ),
        Param(
            "context",
            "integer",
            False,
            "Lines to show before and after each match.",
            constraints={"minimum": 0, "maximum": 20, "default": 2},
        ),
        Param(
            "max_matches",
            "integer",
            False,
            "How many matches to show (all are counted).",
            constraints={"minimum": 1, "maximum": 200, "default": 20},
        ),
    ),
    endpoints=(
        Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),
        Endpoint("GET", "/api/repos/{repo_id}/logs/{number}/{step_id}"),
    ),
    notes=("The log is read once as it streams; memory is bounded by the matches kept.",),
)

_PIPELINE_FAILURE_SUMMARY = _read(
    "get_pipeline_failure_summary",
    group="pipelines",
    untrusted_output=True,
    description=(
        "Says why a pipeline failed in one call: every failed or killed step of every workflow with its "
        "exit code, the log lines that look like errors (failed tests, error:, panic:, tracebacks, FAIL) "
        "and its last lines, in one size budget shared fairly. Says what it left out and which call reads more."
    ),
    params=(_REPO_ID, _NUMBER),
    endpoints=(
        Endpoint("GET", "/api/repos/{repo_id}/pipelines/{number}"),
        Endpoint(
            "GET", "/api/repos/{repo_id}/logs/{number}/{step_id}", when="once per failed or killed step"
        ),
    ),
    notes=(
        "Each failed step's log is read once: its last 30 lines and up to 20 error-looking lines (all are "
        "counted); the list of error signs is domain/woodpecker/results/failures.py's ERROR_SIGNS.",
    ),
)

ADDED_TOOLS: tuple[ToolSpec, ...] = (_SEARCH_STEP_LOGS, _PIPELINE_FAILURE_SUMMARY)
# Parameters added to tools of the shared catalogue, after its own (which keep their order).
ADDED_PARAMS: Mapping[str, tuple[Param, ...]] = {"get_step_logs": (_FROM_LINE, _TO_LINE)}


def _with_additions(shared: Catalogue) -> Catalogue:
    """The shared tools (with their added parameters), each added tool after the last of its group."""
    tools = [
        replace(tool, params=tool.params + ADDED_PARAMS[tool.name]) if tool.name in ADDED_PARAMS else tool
        for tool in shared
    ]
    for added in ADDED_TOOLS:
        last = max((i for i, t in enumerate(tools) if t.group == added.group), default=len(tools) - 1)
        tools.insert(last + 1, added)
    return Catalogue(tuple(tools))


WOODPECKER_TOOLS = _with_additions(WOODPECKER_TOOLS)
