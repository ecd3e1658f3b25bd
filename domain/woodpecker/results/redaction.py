"""Secret material never reaches a result: agent tokens, secret values, passwords and credential options."""

import re
from collections.abc import Mapping
from typing import Any

AGENT_TOKEN_MARKER = "[redacted: agent tokens are shown only once, by create_agent]"  # noqa: S105 - text, not a token
REDACTED = "[redacted]"

# Kind of entry -> fields that hold its secret; Woodpecker should leave them empty, we make sure.
_SECRET_FIELDS = {"secret": ("value",), "registry": ("password",), "forge": ("oauth_client_secret",)}
_CREDENTIAL_KEY = re.compile(r"secret|token|passw|credential|private|key", re.IGNORECASE)
# What JSON's scalars decode to: nothing in them to redact.
_SCALARS = frozenset({str, int, float, bool, type(None)})
# Arguments an action's result never echoes: secret material and the confirmation token.
_HIDDEN_ARGS = frozenset({"confirm_token", "value", "password", "oauth_client_secret"})


def redact(value: Any, keep_agent_tokens: bool = False) -> Any:
    """A copy without agent tokens (kept as a marker so the key does not read as "no token")."""
    if type(value) in _SCALARS:
        return value  # most of an answer, and the Mapping check below is an ABC's (slow) one
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "token" and not keep_agent_tokens and isinstance(item, str) and item:
                out[key] = AGENT_TOKEN_MARKER
            else:
                out[key] = redact(item, keep_agent_tokens)
        return out
    if isinstance(value, list):
        return [redact(item, keep_agent_tokens) for item in value]
    return value


def scrub(kind: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an entry of this kind without its secret fields, a forge's credential-like options masked."""
    out = dict(entry)
    for name in _SECRET_FIELDS.get(kind, ()):
        out.pop(name, None)
    options = out.get("additional_options")
    if kind == "forge" and isinstance(options, Mapping):
        out["additional_options"] = {
            k: (REDACTED if _CREDENTIAL_KEY.search(str(k)) else v) for k, v in options.items()
        }
    return out


def target(args: Mapping[str, Any]) -> dict[str, Any]:
    """The ids an action acted on, without secret material or the confirmation token."""
    return {k: v for k, v in args.items() if k not in _HIDDEN_ARGS}
