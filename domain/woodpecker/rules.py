"""Woodpecker's widening rules: the seven conditional tools ask only in the direction that widens reach."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.guard.policy import WideningRule

# Reason ids: short, stable, and safe to show (they are ours, never Woodpecker's text).
SCOPE_INSTANCE = "scope_instance"
GRANTS_ADMIN = "grants_admin"
GRANTS_TRUSTED_NETWORK = "grants_trusted_network"
GRANTS_TRUSTED_VOLUMES = "grants_trusted_volumes"
GRANTS_TRUSTED_SECURITY = "grants_trusted_security"
LOWERS_REQUIRE_APPROVAL = "lowers_require_approval"
SETS_PUBLIC = "sets_public"
NEW_VALUE = "new_value"
ADDS_PULL_REQUEST_EVENT = "adds_pull_request_event"
EMPTIES_IMAGES = "empties_images"
NEW_PASSWORD = "new_password"  # noqa: S105 - a reason id, not a secret
SILENCES_SERVER = "silences_server"

# Strictest last. A stored value not in this list counts as the strictest (fail closed).
REQUIRE_APPROVAL_ORDER = ("none", "forks", "pull_requests", "all_events")
TRUSTED_FLAGS = {
    "trusted_network": GRANTS_TRUSTED_NETWORK,
    "trusted_volumes": GRANTS_TRUSTED_VOLUMES,
    "trusted_security": GRANTS_TRUSTED_SECURITY,
}
PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_closed", "pull_request_metadata"})
SILENT_LEVELS = frozenset({"fatal", "panic", "disabled"})


def _passed_true(args: Mapping[str, Any], name: str) -> bool:
    # Anything passed that is not an explicit false (or null) counts as granting: fail closed.
    value = args.get(name)
    return value is not None and value is not False


def _approval_rank(value: object) -> int:
    if isinstance(value, str) and value in REQUIRE_APPROVAL_ORDER:
        return REQUIRE_APPROVAL_ORDER.index(value)
    return len(REQUIRE_APPROVAL_ORDER) - 1


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
    """update_repository: a trust grant, a lower require_approval, or visibility becoming public."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        # A trust grant asks without a read; only these two compare against the stored repo.
        return "require_approval" in args or "visibility" in args

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        found = {reason for flag, reason in TRUSTED_FLAGS.items() if _passed_true(args, flag)}
        stored = current if current is not None else {}
        if "require_approval" in args:
            # An unread or unrecognised stored value is the strictest, so any known lower value asks.
            if _approval_rank(args["require_approval"]) < _approval_rank(stored.get("require_approval")):
                found.add(LOWERS_REQUIRE_APPROVAL)
        visibility = args.get("visibility")
        becomes_public = isinstance(visibility, str) and visibility.strip().lower() == "public"
        if becomes_public and stored.get("visibility") != "public":
            found.add(SETS_PUBLIC)
        return frozenset(found)


@dataclass(frozen=True, slots=True)
class NewValueOrWidening:
    """update_secret: a new value, an added pull-request event, or an emptied image list."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return "events" in args or "images" in args

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
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
        return frozenset(found)


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


WOODPECKER_RULES: Mapping[str, WideningRule] = {
    "scope_instance": ScopeInstance(),
    "grants_admin": GrantsAdmin(),
    "widens_repository": WidensRepository(),
    "new_value_or_widening": NewValueOrWidening(),
    "new_password": NewPassword(),
    "silences_server": SilencesServer(),
}
