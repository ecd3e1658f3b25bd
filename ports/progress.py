"""Telling the client how a long call is going (MCP progress notifications), where it asked to be told."""

from typing import Protocol


class Progress(Protocol):
    async def report(self, progress: float, total: float | None, message: str) -> None:
        """One step further: `progress` grows with every report, out of `total` when known.

        Never raises: a client that cannot be told (gone, no back-channel) does not fail the call.
        """
        ...
