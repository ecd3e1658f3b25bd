"""Parsing the settings with a fixed set of values: ELICITATION (on unless exactly false), the other flags (off unless exactly true) and WOODPECKER_MCP_TEXT."""

from typing import Literal

ELICITATION_VARIABLE = "ELICITATION"
ELICITATION_OFF_LINE = "woodpecker-ci-mcp: ELICITATION=false — guarded tools fall back to the two-call token"


class ConfigError(ValueError):
    """A setting the server cannot start with. `str(e)` names the variable and the fix, never a secret."""


def _shown(raw: str) -> str:
    """The value quoted when it is short and plain; otherwise it stays out of the message."""
    value = raw.strip()
    if 0 < len(value) <= 12 and value.isascii() and value.replace("-", "").replace("_", "").isalnum():
        return f"'{value}' is neither"
    return "the value given is neither"


def parse_elicitation(raw: str | None) -> bool:
    """`ELICITATION`: trimmed and case-insensitive; unset, empty or `true` is on, `false` is off.

    Anything else stops the server: a typo that fell back to the default would leave the
    dialog running while the operator believed it was off.

    Raises:
        ConfigError: the value is neither `true` nor `false`.
    """
    value = "" if raw is None else raw.strip().lower()
    if value in ("", "true"):
        return True
    if value == "false":
        return False
    raise ConfigError(f"{ELICITATION_VARIABLE} must be true or false (unset means true); {_shown(value)}")


APPROVAL_PAGE_VARIABLE = "WOODPECKER_MCP_APPROVAL_PAGE"
ApprovalPageMode = Literal["auto", "always", "off"]


def parse_approval_page(raw: str | None) -> ApprovalPageMode:
    """`WOODPECKER_MCP_APPROVAL_PAGE`: trimmed and case-insensitive, as ELICITATION; unset or empty is
    `auto`. Anything else stops the server (ADR 0063).

    Raises:
        ConfigError: the value is none of `auto`, `always` and `off`.
    """
    value = "" if raw is None else raw.strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value == "always":
        return "always"
    if value == "off":
        return "off"
    raise ConfigError(
        f"{APPROVAL_PAGE_VARIABLE} must be auto, always or off (unset means auto); {_shown(value)}"
    )


def parse_flag(name: str, raw: str | None) -> bool:
    """Every other boolean (WOODPECKER_READ_ONLY, WOODPECKER_INSECURE_TLS, ...): off by default.

    Only the exact string `true` turns a flag on; unset, empty and the exact string `false` leave
    it off. Anything else (`TRUE`, `1`, `yes`, ` true`) is refused rather than guessed: these
    flags widen or narrow what the server does, and a value read as the opposite of what the
    operator meant would go unnoticed.

    Raises:
        ConfigError: the value is neither unset, empty, `true` nor `false`.
    """
    if raw is None or raw == "" or raw == "false":
        return False
    if raw == "true":
        return True
    raise ConfigError(f"{name} must be exactly true or false (lower case, no spaces); {_shown(raw)}")


TEXT_VARIABLE = "WOODPECKER_MCP_TEXT"


def parse_text_mode(raw: str | None) -> Literal["full", "summary"]:
    """`WOODPECKER_MCP_TEXT`: what a result's text content carries. Unset or empty means `full`
    (the warning, the summary and all the data); `summary` keeps only the warning and the summary
    line, for an operator whose clients all read `structuredContent`.

    Lower case and nothing else (surrounding spaces are trimmed, like every value but the flags):
    a typo must not silently change what every model reads.

    Raises:
        ConfigError: the value is neither `full` nor `summary`.
    """
    if raw is None or raw == "" or raw == "full":
        return "full"
    if raw == "summary":
        return "summary"
    raise ConfigError(
        f"{TEXT_VARIABLE} must be full or summary (lower case; unset means full); {_shown(raw)}"
    )
