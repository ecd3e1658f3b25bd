"""How the guard asks and remembers: ELICITATION, WOODPECKER_MCP_APPROVAL_PAGE, WOODPECKER_MCP_SEAL_KEYS,
WOODPECKER_MCP_AUDIT_FILE, WOODPECKER_MCP_TOKEN_STORE and WOODPECKER_MCP_FOUR_EYES."""

from typing import Annotated

from pydantic import BeforeValidator

from domain.config import ApprovalPageMode, ConfigError, parse_approval_page, parse_elicitation
from domain.parsing.keys import MIN_KEY_BYTES, parse_keys
from domain.parsing.urls import BadUrl, split_url
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.settings.values import comma_list

MIN_SEAL_KEY_BYTES = MIN_KEY_BYTES


def _elicitation(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    return parse_elicitation(None if raw is None else str(raw))


def _approval_page(raw: object) -> str:
    if raw in ("auto", "always", "off"):
        return str(raw)
    return parse_approval_page(None if raw is None else str(raw))


def _approval_wait(raw: object) -> int:
    value = raw.strip() if isinstance(raw, str) else raw
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 55:
        return value
    raise ValueError(
        "WOODPECKER_MCP_APPROVAL_WAIT_SECONDS must be a whole number of seconds from 1 to 55 (under the "
        "60 s after which clients commonly give up); e.g. 45"
    )


def _seal_keys(raw: object) -> object:
    return parse_keys(raw, "WOODPECKER_MCP_SEAL_KEYS") if isinstance(raw, str) else raw


def _audit_file(raw: object) -> object:
    # Found now rather than at the first guarded call, whose record would otherwise be lost.
    if not isinstance(raw, str):
        return raw
    try:
        with open(raw, "a", encoding="utf-8"):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise ValueError(
            f"WOODPECKER_MCP_AUDIT_FILE cannot be opened for appending ({reason}); "
            "point it at a writable file, or unset it to write the audit trail to stderr"
        ) from None
    return raw


def parse_token_store(raw: str | None) -> str:
    """`memory` (unset, or the word in any case), a redis:// or rediss:// URL with a host, or a unix:// path."""
    name = "WOODPECKER_MCP_TOKEN_STORE"
    if raw is None or raw.lower() == "memory":
        return "memory"
    fix = "set it to `memory` or a URL like redis://redis.internal:6379/0"
    try:
        url = split_url(raw)
    except BadUrl:
        raise ConfigError(f"{name} does not parse; {fix}") from None
    if url.scheme == "unix" and url.path:
        return raw
    if url.scheme not in ("redis", "rediss") or not url.host:
        raise ConfigError(f"{name} is neither `memory` nor a redis://, rediss:// or unix:// URL; {fix}")
    return raw


def _token_store(raw: object) -> str:
    return parse_token_store(raw if isinstance(raw, str) else None)


Elicitation = Annotated[bool, BeforeValidator(_elicitation)]
ApprovalPage = Annotated[ApprovalPageMode, BeforeValidator(_approval_page)]
ApprovalWait = Annotated[int, BeforeValidator(_approval_wait)]
SealKeys = Annotated[tuple[bytes, ...], BeforeValidator(_seal_keys)]
AuditFile = Annotated[str | None, BeforeValidator(_audit_file)]
TokenStore = Annotated[str, BeforeValidator(_token_store)]


def _four_eyes(raw: object) -> object:
    names = comma_list(raw) if isinstance(raw, str) else raw
    if not isinstance(names, tuple):
        return raw
    guarded = {spec.name for spec in WOODPECKER_TOOLS if spec.guarded}
    unknown = [n for n in names if n not in guarded]
    if unknown:
        raise ValueError(
            "WOODPECKER_MCP_FOUR_EYES lists what is not a guarded tool ("
            + ", ".join(unknown[:5])
            + "); name guarded tools, e.g. chown_repository,update_forge"
        )
    return names


FourEyes = Annotated[tuple[str, ...], BeforeValidator(_four_eyes)]


def _approval_notify(raw: object) -> object:
    # Notification URLs hold tokens and passwords: no message here repeats one.
    urls = comma_list(raw) if isinstance(raw, str) else raw
    if not isinstance(urls, tuple):
        return raw
    for number, url in enumerate(urls, start=1):
        scheme, sep, rest = url.partition("://")
        if not sep or not rest or not scheme.replace("+", "").isalnum():
            raise ValueError(
                f"WOODPECKER_MCP_APPROVAL_NOTIFY entry {number} is not a notification URL (SCHEME://...); "
                "write Apprise URLs, e.g. json://hooks.example.org/approvals or ntfy://ntfy.sh/topic"
            )
    return urls


ApprovalNotify = Annotated[tuple[str, ...], BeforeValidator(_approval_notify)]
