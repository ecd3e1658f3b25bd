"""The audit trail: one structured record per guarded decision."""

from collections.abc import Mapping
from typing import Protocol


class AuditSink(Protocol):
    def record(self, event: Mapping[str, object]) -> None:
        """Write one event (already free of secrets and Woodpecker-written text). Never raises."""
        ...
