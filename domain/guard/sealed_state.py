"""The state that ties an answer to its question (2026-07-28), as canonical bytes; decoding never raises."""

import json
import math
from dataclasses import dataclass
from typing import Any

# 2: the state names the realm of the store that records its answer as used (guard.md §7).
VERSION = 2
# Replicas' clocks drift; a state "issued" slightly in the future is still ours.
CLOCK_SKEW_SECONDS = 30.0
_MAX_PAYLOAD_BYTES = 8192
_FIELDS = frozenset({"v", "tool", "fp", "principal", "iat", "exp", "nonce", "reasons", "realm"})


@dataclass(frozen=True, slots=True)
class SealedState:
    tool: str
    fingerprint: str
    principal: str | None
    issued_at: float
    expires_at: float
    nonce: str
    reasons: frozenset[str]
    # Where the answer to this question is recorded as used (`TokenStore.realm`): the state opens
    # only where that record is seen, so that no process acts on an answer another one used.
    realm: str
    version: int = VERSION


def encode(state: SealedState) -> bytes:
    """Canonical JSON bytes (sorted keys, no spaces, reasons sorted)."""
    payload = {
        "v": state.version,
        "tool": state.tool,
        "fp": state.fingerprint,
        "principal": state.principal,
        "iat": state.issued_at,
        "exp": state.expires_at,
        "nonce": state.nonce,
        "reasons": sorted(state.reasons),
        "realm": state.realm,
    }
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def decode(
    payload: bytes | None,
    *,
    tool: str,
    fingerprint: str | tuple[str, ...],
    principal: str | None,
    now: float,
    realm: str,
) -> SealedState | None:
    """The state, if `payload` is a current state of ours for exactly this call; otherwise None.

    `fingerprint` is this call's keyed fingerprint, or a tuple of them (one per key of the ring,
    so a state issued before a rotation still opens): the state's must be one of them.
    `realm` is the realm of the store that would record this answer as used: a state issued for
    another realm (another process's memory, a store this process does not share) opens onto
    nothing, as its use there could never be seen here.
    None for bad JSON, another version, another tool, fingerprint, principal or realm, an expired
    state, or one issued in the future beyond the clock skew. Never raises.
    """
    try:
        return _decode(payload, tool=tool, fingerprint=fingerprint, principal=principal, now=now, realm=realm)
    except Exception:  # a malformed payload is "no answer", whatever went wrong inside
        return None


def _decode(
    payload: bytes | None,
    *,
    tool: str,
    fingerprint: str | tuple[str, ...],
    principal: str | None,
    now: float,
    realm: str,
) -> SealedState | None:
    accepted = (fingerprint,) if isinstance(fingerprint, str) else fingerprint
    if not isinstance(payload, bytes) or len(payload) > _MAX_PAYLOAD_BYTES:
        return None
    data = json.loads(payload.decode("utf-8"))
    if not isinstance(data, dict) or set(data) != _FIELDS:
        return None
    if type(data["v"]) is not int or data["v"] != VERSION:
        return None
    if data["tool"] != tool or data["principal"] != principal:
        return None
    if not isinstance(data["realm"], str) or data["realm"] != realm:
        return None
    fp = data["fp"]
    if not isinstance(fp, str) or fp not in accepted:
        return None
    issued_at, expires_at = _number(data["iat"]), _number(data["exp"])
    if issued_at is None or expires_at is None or expires_at < issued_at:
        return None
    if now >= expires_at or issued_at > now + CLOCK_SKEW_SECONDS:
        return None
    nonce, reasons = data["nonce"], data["reasons"]
    if not isinstance(nonce, str) or not isinstance(reasons, list):
        return None
    if not all(isinstance(r, str) for r in reasons):
        return None
    return SealedState(
        tool=tool,
        fingerprint=fp,
        principal=principal,
        issued_at=issued_at,
        expires_at=expires_at,
        nonce=nonce,
        reasons=frozenset(reasons),
        realm=realm,
    )
