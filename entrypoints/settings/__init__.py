"""The settings: the environment, read in one place, into two validated records.

- `environment`: the one module that reads the environment (`read_settings`, `read_http_settings`).
- `model`: the records, `Settings` (stdio and HTTP) and `HttpSettings`; each field names its variable.
- one module per concern with the fields' parsers: `woodpecker` (the connection), `guard` (asking,
  seal keys, audit, token store), `tools` (which tools, their text), `http` (the transport, the
  bearer), `oauth` (resource URL, issuers, scope, link keys).
- `variables`: every variable with its default and meaning (`--help`, the docs test), and `StartupError`.

The values themselves (keys, URLs, token shapes) are parsed by `domain.parsing`, which every
other reader of such a value calls too. Adding a setting: a row in `variables.VARIABLES`, a field
in `model`, and its parser in the module of its concern.

Only `variables` (the standard library and two small domain modules) loads with this package:
`--help` and `--version` read it and nothing else, so they import neither pydantic nor the
catalogue (ADR 0052). The readers and the records load at their first use by name.
"""

import importlib
from typing import TYPE_CHECKING, Any

from entrypoints.settings.variables import (
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_OAUTH_SCOPE,
    DISTRIBUTION,
    KNOWN_VARIABLES,
    PROGRAM,
    VARIABLES,
    StartupError,
)

if TYPE_CHECKING:
    from entrypoints.settings.environment import read_http_settings, read_settings
    from entrypoints.settings.guard import MIN_SEAL_KEY_BYTES
    from entrypoints.settings.http import MIN_BEARER_CHARS, AuthMode
    from entrypoints.settings.model import HttpSettings, Settings
    from entrypoints.settings.oauth import LINK_KEY_BYTES

# Name -> the module that defines it, imported when the name is first read (PEP 562).
_LAZY = {
    "read_http_settings": "environment",
    "read_settings": "environment",
    "MIN_SEAL_KEY_BYTES": "guard",
    "MIN_BEARER_CHARS": "http",
    "AuthMode": "http",
    "HttpSettings": "model",
    "Settings": "model",
    "LINK_KEY_BYTES": "oauth",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_HTTP_HOST",
    "DEFAULT_HTTP_PORT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_OAUTH_SCOPE",
    "DISTRIBUTION",
    "KNOWN_VARIABLES",
    "LINK_KEY_BYTES",
    "MIN_BEARER_CHARS",
    "MIN_SEAL_KEY_BYTES",
    "PROGRAM",
    "VARIABLES",
    "AuthMode",
    "HttpSettings",
    "Settings",
    "StartupError",
    "read_http_settings",
    "read_settings",
]
