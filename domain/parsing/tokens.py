"""Token shapes: a forge token or a bearer as text, and the `Authorization: Bearer` header that carries one."""

import re

# RFC 6750 b64token: what a bearer presented to this server may look like.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def token_shaped(value: str) -> bool:
    """The one rule for a token's shape: printable ASCII without spaces (an HTTP header carries it as is)."""
    return all("!" <= c <= "~" for c in value)


def b64token(value: str) -> bool:
    """Whether `value` is an RFC 6750 b64token (letters, digits, `-._~+/`, then `=` padding only)."""
    return _B64TOKEN.fullmatch(value) is not None


def bearer_of(values: list[str]) -> str | None:
    """The token of the request's Authorization header values: exactly one, scheme `Bearer` (any case),
    then the token with the spaces around it trimmed. None when that is not what was sent."""
    if len(values) != 1:
        return None
    scheme, _, token = values[0].partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
