"""What each tool answers (a list, one object, a value, an action, a log window) and how its summary reads."""

from collections.abc import Mapping

# Tool -> key of its list. Lists are whole-entry trimmed to the budget.
LISTS: Mapping[str, str] = {
    "list_repositories": "repositories",
    "list_repository_branches": "branches",
    "list_pull_requests": "pull_requests",
    "list_pipelines": "pipelines",
    "get_pipeline_config": "files",
    "list_queued_pipelines": "pipelines",
    "list_secrets": "secrets",
    "list_registries": "registries",
    "list_crons": "crons",
    "list_organizations": "organizations",
    "get_pipeline_feed": "feed",
    "list_users": "users",
    "list_agents": "agents",
    "list_agent_tasks": "tasks",
    "list_forges": "forges",
}
# Key of a list -> the kind of its entries, for the lists whose entries are cleaned like single objects.
ENTRY_KIND: Mapping[str, str] = {
    "secrets": "secret",
    "registries": "registry",
    "forges": "forge",
    "users": "user",
    "pipelines": "pipeline",
}

# Tool -> (key of the one object it answers, its summary). The summary's fields come from the
# object, then from the caller's arguments (see shaping).
_OBJECT_ANSWERS: Mapping[str, tuple[str, str]] = {
    "get_repository": ("repository", "Repository {id}."),
    "lookup_repository": ("repository", "Repository {full_name} has id {id}."),
    "activate_repository": ("repository", "Activated repository {id} (forge id {forge_remote_id})."),
    "update_repository": ("repository", "Updated repository {id}."),
    "chown_repository": ("repository", "Repository {id} is now owned by this account."),
    "delete_repository": ("repository", "Deleted repository {id} (removed, with its history)."),
    "get_repository_permissions": ("permissions", "Permissions of this account on repository {repo_id}."),
    "get_organization_permissions": ("permissions", "Permissions of this account on organization {org_id}."),
    "get_pipeline": ("pipeline", "Pipeline {number} of repository {repo_id}: {status}."),
    "trigger_pipeline": ("pipeline", "Started pipeline {number} of repository {repo_id} ({status})."),
    "restart_pipeline": (
        "pipeline",
        "Restarted pipeline {old} of repository {repo_id} as pipeline {number} ({status}).",
    ),
    "approve_pipeline": ("pipeline", "Approved pipeline {number} of repository {repo_id} ({status})."),
    "decline_pipeline": ("pipeline", "Declined pipeline {number} of repository {repo_id} ({status})."),
    "run_cron": (
        "pipeline",
        "Cron job {cron_id} started pipeline {number} of repository {repo_id} ({status}).",
    ),
    "get_pipeline_metadata": ("metadata", "Metadata of pipeline {number} of repository {repo_id}."),
    "get_secret": ("secret", "Secret {name} at {scope_text} (its value is never returned)."),
    "create_secret": ("secret", "Created secret {name} at {scope_text}."),
    "update_secret": ("secret", "Updated secret {name} at {scope_text}."),
    "get_registry": ("registry", "Registry {address} at {scope_text} (its password is never returned)."),
    "create_registry": ("registry", "Created registry {address} at {scope_text}."),
    "update_registry": ("registry", "Updated registry {address} at {scope_text}."),
    "get_cron": ("cron", "Cron job {id} of repository {repo_id}."),
    "create_cron": ("cron", "Created cron job {id} of repository {repo_id} (enabled)."),
    "update_cron": ("cron", "Updated cron job {id} of repository {repo_id}."),
    "get_organization": ("organization", "Organization {id}."),
    "lookup_organization": ("organization", "Organization {name} has id {id}."),
    "get_current_user": ("user", "Signed in as {login} (admin: {admin})."),
    "get_user": ("user", "User {login} (id {id}, admin: {admin})."),
    "create_user": ("user", "Created user {login} (id {id}, admin: {admin})."),
    "update_user": ("user", "Updated user {login} (id {id}, admin: {admin})."),
    "get_agent": ("agent", "Agent {id}."),
    "create_agent": ("agent", "Created agent {id}; its token is in this result, shown only this once."),
    "update_agent": ("agent", "Updated agent {id}."),
    "get_forge": ("forge", "Forge {id} ({type})."),
    "create_forge": ("forge", "Created forge {id} ({type})."),
    "update_forge": ("forge", "Updated forge {id} ({type})."),
    "get_queue_info": ("queue", "Queue: {pending} pending, {running} running, paused: {paused}."),
    "get_server_info": ("server", "Woodpecker {version}; healthy: {healthy}."),
}
OBJECTS: Mapping[str, str] = {tool: key for tool, (key, _) in _OBJECT_ANSWERS.items()}
OBJECT_TEXT: Mapping[str, str] = {tool: text for tool, (_, text) in _OBJECT_ANSWERS.items()}
# 204 + Pipeline-Filtered: no pipeline was created, and the object is null.
FILTERED = ("trigger_pipeline", "run_cron")

# Tool -> (key of the one value it answers, its summary with the value as {value}).
_VALUE_ANSWERS: Mapping[str, tuple[str, str]] = {
    "get_log_level": ("log_level", "The server logs at level {value}."),
    "set_log_level": ("log_level", "Log level set to {value}."),
}
VALUES: Mapping[str, str] = {tool: key for tool, (key, _) in _VALUE_ANSWERS.items()}
VALUE_TEXT: Mapping[str, str] = {tool: text for tool, (_, text) in _VALUE_ANSWERS.items()}

# Tools whose success is an empty answer (204): the result says what was done to which target.
ACTIONS: Mapping[str, str] = {
    "repair_repository": "Repaired {target}.",
    "move_repository": "Moved repository {repo_id} to {to}.",
    "cancel_pipeline": "Cancelled pipeline {number} of repository {repo_id}.",
    "delete_pipeline": "Deleted pipeline {number} of repository {repo_id}.",
    "delete_step_logs": "Deleted the logs of step {step_id} of pipeline {number} of repository {repo_id}.",
    "delete_pipeline_logs": "Deleted the logs of pipeline {number} of repository {repo_id}.",
    "delete_secret": "Deleted secret {name} at {scope_text}.",
    "delete_registry": "Deleted registry {address} at {scope_text}.",
    "delete_cron": "Deleted cron job {cron_id} of repository {repo_id}.",
    "delete_organization": "Deleted organization {org_id}.",
    "delete_user": "Deleted user {login} of forge {forge_id}.",
    "delete_agent": "Deleted agent {agent_id}.",
    "delete_forge": "Deleted forge {forge_id}.",
    "pause_queue": "Paused the queue: nothing is dispatched to agents until resume_queue.",
    "resume_queue": "Resumed the queue; the backlog is being dispatched.",
}

LOG_TOOL = "get_step_logs"  # a window of lines, shaped by shape_logs
SEARCH_TOOL = "search_step_logs"  # matching lines with context, shaped by shape_search
SUMMARY_TOOL = "get_pipeline_failure_summary"  # failed steps and their lines, shaped by shape_failure_summary
