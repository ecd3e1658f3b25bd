"""Woodpecker's toolsets: which catalogue groups each named toolset holds (see domain.toolsets)."""

from domain.toolsets import Toolsets

WOODPECKER_TOOLSETS = Toolsets(
    {
        "repositories": frozenset({"repositories"}),
        "pipelines": frozenset({"pipelines"}),
        "logs": frozenset({"logs"}),
        "secrets": frozenset({"secrets"}),
        "registries": frozenset({"registries"}),
        "crons": frozenset({"crons"}),
        "organizations": frozenset({"organizations"}),
        # The caller's own account (get_current_user, the feed) and the instance's users.
        "users": frozenset({"account", "users"}),
        # Instance administration: agents, forges, the queue, the log level, server info.
        "admin": frozenset({"agents", "forges", "server"}),
    },
    # Error texts and docs/troubleshooting.md say to call get_server_info first, and
    # get_current_user says whose token acts: in every selection.
    always=frozenset({"get_server_info", "get_current_user"}),
)
