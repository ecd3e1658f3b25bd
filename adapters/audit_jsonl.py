"""The AuditSink port as JSON Lines, on stderr or appended to a file; recording never raises."""

import json
import sys
import threading
from collections.abc import Mapping


class JsonLinesAuditSink:
    """One JSON object per line. `path=None` writes to the process's stderr."""

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._warned = False

    def record(self, event: Mapping[str, object]) -> None:
        try:
            line = json.dumps(dict(event), ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
            with self._lock:
                if self._path is None:
                    sys.stderr.write(line)
                    sys.stderr.flush()
                else:
                    # Opened per record: a rotated or removed file is recreated, and no handle leaks.
                    with open(self._path, "a", encoding="utf-8") as file:
                        file.write(line)
        except Exception:  # an audit failure must never turn into a failed or repeated tool call
            self._warn_once()

    def _warn_once(self) -> None:
        if self._warned:
            return
        self._warned = True
        try:
            sys.stderr.write("woodpecker-ci-mcp: the audit sink could not write a record; check its file\n")
        except Exception:  # stderr itself may be gone; there is nowhere left to say it
            return
