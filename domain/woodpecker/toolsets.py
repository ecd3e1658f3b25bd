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
    }
)
