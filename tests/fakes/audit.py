"""An AuditSink that keeps every event in memory."""

from collections.abc import Mapping


class RecordingAudit:
    def __init__(self) -> None:
        self.events: list[Mapping[str, object]] = []

    def record(self, event: Mapping[str, object]) -> None:
        self.events.append(dict(event))

    def require(self, event: Mapping[str, object]) -> None:
        self.record(event)

    def outcomes(self, tool: str | None = None) -> list[object]:
        return [e["outcome"] for e in self.events if tool is None or e["tool"] == tool]
