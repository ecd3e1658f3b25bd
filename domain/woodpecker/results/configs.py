"""get_pipeline_config's files: base64 decoded to text without terminal escapes, bounded in count and size."""

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from domain.woodpecker.results.envelope import ShapeError, as_list
from domain.woodpecker.results.text import strip_terminal

CONFIG_FILES = 20
CONFIG_FILE_BYTES = 200_000


def decode_configs(data: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Pipeline config files with their base64 `data` decoded, bounded in count and size."""
    notes: list[str] = []
    files = as_list(data)
    if len(files) > CONFIG_FILES:
        notes.append(f"{len(files) - CONFIG_FILES} config files left out (at most {CONFIG_FILES} are shown)")
        files = files[:CONFIG_FILES]
    out: list[dict[str, Any]] = []
    for f in files:
        if not isinstance(f, Mapping):
            raise ShapeError("a pipeline config entry is not an object")
        raw = f.get("data") or ""
        try:
            content = base64.b64decode(raw, validate=True) if isinstance(raw, str) else bytes(raw)
        except (binascii.Error, ValueError, TypeError):
            raise ShapeError("a pipeline config's data is not base64") from None
        entry = {k: v for k, v in f.items() if k != "data"}
        if len(content) > CONFIG_FILE_BYTES:
            notes.append(
                f"{entry.get('name', 'a file')!s:.100}: cut at {CONFIG_FILE_BYTES} of {len(content)} bytes"
            )
            content = content[:CONFIG_FILE_BYTES]
        entry["content"] = strip_terminal(content.decode("utf-8", errors="replace"))
        out.append(entry)
    return out, notes
