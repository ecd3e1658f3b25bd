"""The AuditSink port as JSON Lines, on stderr or appended to a file.

`record` never raises. `require` raises AuditUnwritable when the file cannot take the line, and
says so on stderr every time, so that a guarded write never runs without its record (ADR 0081)."""

import json
import sys
import threading
from collections.abc import Mapping

from ports.audit import AuditUnwritable

# How a line on stderr names the file: by the setting, never the path (as settings' own errors do).
_FILE = "the audit file (WOODPECKER_MCP_AUDIT_FILE)"


class JsonLinesAuditSink:
    """One JSON object per line. `path=None` writes to the process's stderr."""

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._warned = False

    def record(self, event: Mapping[str, object]) -> None:
        try:
            self._write(event)
        except Exception:  # a closing line that cannot be written must not turn into a repeated call
            self._warn_once()

    def require(self, event: Mapping[str, object]) -> None:
        if self._path is None:
            # stderr: the process's own log, which has nowhere else to go if it is gone.
            self.record(event)
            return
        try:
            self._write(event)
        except OSError as e:
            reason = e.strerror or type(e).__name__
            _say(
                f"woodpecker-ci-mcp: {_FILE} could not be written ({reason}); a guarded call was refused "
                "and nothing was sent. Guarded calls are refused until it can be written; reads go on."
            )
            raise AuditUnwritable(reason, _FILE) from None

    def _write(self, event: Mapping[str, object]) -> None:
        line = json.dumps(dict(event), ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
        with self._lock:
            if self._path is None:
                sys.stderr.write(line)
                sys.stderr.flush()
            else:
                # Opened per record: a rotated or removed file is recreated, and no handle leaks.
                with open(self._path, "a", encoding="utf-8") as file:
                    file.write(line)

    def _warn_once(self) -> None:
        if self._warned:
            return
        self._warned = True
        _say("woodpecker-ci-mcp: the audit sink could not write a record; check its file")


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:  # stderr itself may be gone; there is nowhere left to say it
        return
