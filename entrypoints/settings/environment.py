"""The one place that reads the environment: every variable parsed, checked and refused in one line that never echoes its value.

The models get a plain mapping of the variables that are set (os.environ, or a dict in tests)
rather than letting pydantic-settings read the process environment itself, because the token
must be removed from the environment the moment it is read. `hide_input_in_errors` keeps
values (which may be secrets) out of every error, and each validator phrases its own refusal:
the variable, the problem and the fix.
"""

import difflib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping

from pydantic import ValidationError

from domain.guard.policy_file import Policy, apply_policy
from domain.tool_filter import ALLOW_VARIABLE, DENY_VARIABLE
from domain.toolsets import TOOLSETS_VARIABLE
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.settings import tools
from entrypoints.settings.model import HttpSettings, Settings, aliases
from entrypoints.settings.policy import POLICY_VARIABLE, read_policy
from entrypoints.settings.variables import KNOWN_VARIABLES, StartupError, line
from entrypoints.settings.woodpecker import parse_token
from ports.woodpecker import Credential

_URL, _TOKEN = "WOODPECKER_URL", "WOODPECKER_TOKEN"
# Flags are on only for the exact string `true` (behaviour.md): their value is not trimmed,
# so " true" is refused rather than silently taken as on.
_EXACT_FLAGS = frozenset({"WOODPECKER_READ_ONLY", "WOODPECKER_INSECURE_TLS", "WOODPECKER_MCP_CHECK_AT_START"})
_SETTINGS_VARIABLES = tuple(a for a in aliases(Settings) if a not in (_URL, _TOKEN))
_HTTP_VARIABLES = aliases(HttpSettings)


def _raw(environ: Mapping[str, str], name: str) -> str | None:
    """The variable trimmed; None when it is unset or blank."""
    value = environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def _present(environ: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    present = {}
    for name in names:
        if _raw(environ, name) is not None:
            present[name] = environ[name] if name in _EXACT_FLAGS else environ[name].strip()
    return present


def _take_token(environ: MutableMapping[str, str]) -> Credential | None:
    # Popping from os.environ also unsetenv()s it, so no child process inherits the token.
    raw = environ.pop(_TOKEN, None)
    if raw is None or not raw.strip():
        return None
    return parse_token(raw.strip())


# Woodpecker's own server, agent and CLI read WOODPECKER_* variables too, so outside our own
# WOODPECKER_MCP_ prefix only a near miss of a name this server reads is taken for a typo
# (WOODPECKER_READONLY=true would otherwise serve every write tool without a word). The cutoff
# keeps Woodpecker's own names (WOODPECKER_OPEN is 0.9 from WOODPECKER_TOKEN) out.
_NEAR_MISS = 0.92
_UNPREFIXED = sorted(
    name
    for name in KNOWN_VARIABLES
    if name.startswith("WOODPECKER_") and not name.startswith("WOODPECKER_MCP_")
)


# The variables that restrict what the server does or keep its record. A near miss of one of them
# stops the server (issue 36): `WOODPECKER_READONLY=true` served every write tool with a warning in a
# log the person never sees, while their client said "Connected".
RESTRICTING = frozenset(
    {
        "WOODPECKER_READ_ONLY",
        "WOODPECKER_ALLOW_TOOLS",
        "WOODPECKER_DENY_TOOLS",
        "WOODPECKER_TOOLSETS",
        "WOODPECKER_MCP_POLICY",
        "WOODPECKER_MCP_AUDIT_FILE",
        "WOODPECKER_MCP_APPROVAL_PAGE",
    }
)


def _strangers(environ: Mapping[str, str]) -> Iterator[tuple[str, bool, str | None]]:
    """Each WOODPECKER_* variable this server does not read: its name, whether it has our prefix,
    and the known name it is a near miss of, if any."""
    for name in sorted(environ):
        if name in KNOWN_VARIABLES or not name.startswith("WOODPECKER_"):
            continue
        ours = name.startswith("WOODPECKER_MCP_")
        meant = difflib.get_close_matches(
            name, sorted(KNOWN_VARIABLES) if ours else _UNPREFIXED, 1, _NEAR_MISS
        )
        yield name, ours, meant[0] if meant else None


def _near_misses_of_restrictions(environ: Mapping[str, str]) -> list[str]:
    """One line per variable that is a near miss of one that restricts the server: it stops it."""
    return [
        line(
            f"{name} is not a variable this server reads; did you mean {meant}? It would restrict "
            f"this server, so it does not start without it: rename it to {meant}, or unset it"
        )
        for name, _ours, meant in _strangers(environ)
        if meant in RESTRICTING
    ]


def _unknown_variables(environ: Mapping[str, str]) -> list[str]:
    # A typo in an optional variable would otherwise be silently ignored.
    return [
        line(
            f"{name} is not a variable this server reads (see --help); it is ignored"
            + (f"; did you mean {meant}?" if meant else "")
        )
        for name, ours, meant in _strangers(environ)
        if ours or meant
    ]


def _error_lines(error: ValidationError) -> list[str]:
    """One line per refused variable. Our validators phrase every message; pydantic's prefix goes."""
    lines = []
    for problem in error.errors(include_input=False, include_url=False):
        message = str(problem["msg"]).removeprefix("Value error, ")
        if problem["type"] != "value_error":
            variable = ".".join(str(part) for part in problem["loc"])
            message = f"{variable}: {message}"
        lines.append(line(message))
    return lines


def read_settings(
    environ: MutableMapping[str, str], *, woodpecker: tuple[str, Credential] | None = None
) -> Settings:
    """Parse the environment; remove WOODPECKER_TOKEN from it. Raises StartupError.

    `woodpecker` (url, token) replaces WOODPECKER_URL and WOODPECKER_TOKEN, which are then
    not parsed (the sandbox command); the token variable is removed all the same.
    """
    errors: list[str] = []
    warnings: list[str] = []
    data: dict[str, object] = dict(_present(environ, _SETTINGS_VARIABLES))
    token: Credential | None = None
    if woodpecker is None:
        try:
            token = _take_token(environ)
        except ValueError as e:
            errors.append(line(str(e)))
        if (raw_url := _raw(environ, _URL)) is not None:
            data[_URL] = raw_url
    else:
        environ.pop(_TOKEN, None)
        data["woodpecker_url"], token = woodpecker
    data["token"] = token
    settings: Settings | None = None
    try:
        settings = Settings.model_validate(data, context={"warnings": warnings})
    except ValidationError as e:
        errors.extend(_error_lines(e))
    selected = tools.select(
        _raw(environ, ALLOW_VARIABLE),
        _raw(environ, DENY_VARIABLE),
        _raw(environ, TOOLSETS_VARIABLE),
        read_only=settings.read_only if settings is not None else False,
        wait=(_raw(environ, "WOODPECKER_MCP_WAIT_SECONDS"), _raw(environ, "WOODPECKER_MCP_WAIT_MAX_SECONDS")),
    )
    errors.extend(selected.errors)
    policy: Policy | None = None
    if (path := _raw(environ, POLICY_VARIABLE)) is not None:
        try:
            policy = read_policy(path, WOODPECKER_TOOLS)
        except StartupError as e:
            errors.extend(e.lines)
    errors.extend(_near_misses_of_restrictions(environ))
    if errors or settings is None or selected.tools is None:
        raise StartupError(errors)
    warnings.extend(selected.warnings)
    warnings.extend(_unknown_variables(environ))
    return settings.model_copy(
        update={
            "tools": apply_policy(selected.tools, policy),
            "policy": policy,
            "warnings": tuple(warnings),
        }
    )


def _http_warnings(data: Mapping[str, object], server_token: Credential | None) -> list[str]:
    """What the other variables mean for the chosen mode: a bearer or a token ignored, links not kept."""
    warnings: list[str] = []
    mode = str(data.get("WOODPECKER_MCP_AUTH", "")).lower()
    if mode in ("per-client", "oauth"):
        if "WOODPECKER_MCP_BEARER" in data:
            warnings.append(line(f"WOODPECKER_MCP_BEARER is ignored with WOODPECKER_MCP_AUTH={mode}"))
        if server_token is not None:
            whose = (
                "each client's bearer is its own Woodpecker token"
                if mode == "per-client"
                else "each person links their own Woodpecker token"
            )
            warnings.append(line(f"WOODPECKER_TOKEN is ignored with WOODPECKER_MCP_AUTH={mode}; {whose}"))
    if mode == "oauth" and "WOODPECKER_MCP_LINK_KEYS" not in data:
        warnings.append(
            line(
                "WOODPECKER_MCP_LINK_KEYS is not set: linked Woodpecker tokens are sealed with a key of this "
                "process only, so a restart forgets every link and replicas cannot read each other's; generate "
                "one with: openssl rand -base64 32"
            )
        )
    return warnings


def read_http_settings(
    environ: Mapping[str, str],
    *,
    host: str | None = None,
    port: int | None = None,
    server_token: Credential | None = None,
) -> HttpSettings:
    """The HTTP transport's variables; `host`/`port` from the command line win. Raises StartupError.

    (The warning for a bind beyond loopback comes from `entrypoints.http_app.build_team_app`.)
    """
    data: dict[str, object] = dict(_present(environ, _HTTP_VARIABLES))
    if host is not None:
        data["WOODPECKER_MCP_HOST"] = host
    if port is not None:
        data["WOODPECKER_MCP_PORT"] = port
    warnings = _http_warnings(data, server_token)
    if str(data.get("WOODPECKER_MCP_AUTH", "")).lower() in ("per-client", "oauth"):
        data.pop("WOODPECKER_MCP_BEARER", None)
    try:
        http = HttpSettings.model_validate(data, context={"server_token": server_token})
    except ValidationError as e:
        raise StartupError(_error_lines(e)) from None
    return http.model_copy(update={"warnings": tuple(warnings)})
