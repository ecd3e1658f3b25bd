"""The audit trail: one structured record per guarded decision."""

from collections.abc import Mapping
from typing import Protocol


class AuditUnwritable(RuntimeError):
    """The configured audit file could not take a record. `reason` is the system's own word for why
    ("No space left on device", "Is a directory"); `named` how the file is named to a person (by its
    setting: "the audit file (SETTING)"). Neither holds a path."""

    def __init__(self, reason: str, named: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.named = named


class AuditSink(Protocol):
    def record(self, event: Mapping[str, object]) -> None:
        """Write one event (already free of secrets and Woodpecker-written text). Never raises."""
        ...

    def require(self, event: Mapping[str, object]) -> None:
        """Write one event that a guarded write may not go ahead without (guard.md §8: its `asked`
        or `approved` line), or raise AuditUnwritable: the call then does not run (ADR 0081)."""
        ...
