"""A call's fingerprint: one approval binds exactly one tool, target, body and principal."""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from domain.tools import ToolSpec

# The argument a two-call token travels in; it is never part of what is approved.
CONFIRM_TOKEN_ARG = "confirm_token"  # noqa: S105 - an argument name, not a secret

# Bumped whenever the canonical form changes, so old fingerprints can never collide with new ones.
_VERSION = "woodpecker-ci-mcp/fingerprint/1"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces. `true` and `1` stay distinct, as JSON keeps them.

    Raises:
        TypeError: `value` holds something that is not a JSON value.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def body_of(tool: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any]:
    """Every argument that is neither a target nor the confirmation token."""
    targets = tool.guard.targets if tool.guard is not None else ()
    return {k: v for k, v in args.items() if k not in targets and k != CONFIRM_TOKEN_ARG}


def fingerprint(tool: ToolSpec, args: Mapping[str, Any], principal: str | None) -> str:
    """64 lowercase hex digits naming this exact call.

    Targets are labelled and kept in the order the tool declares them (never sorted), so
    `(repo_id=5, number=12)` and `(repo_id=12, number=5)` differ; a missing optional target is
    bound as absent, which no value equals. Body-bound tools add a digest of the canonical body.
    The principal, when given, is bound too: one caller's approval is never another's.

    It is a plain digest, so a reader could test guesses of a body value against it: it never
    leaves the process as it is. What does (a requestState, a token-store key) is keyed with a
    server secret first (the FingerprintKeys port, docs/adr/0046).

    Raises:
        TypeError: an argument is not a JSON value.
    """
    targets = tool.guard.targets if tool.guard is not None else ()
    body_bound = tool.guard is not None and tool.guard.body_bound
    # [name] for an absent target and [name, value] for a present one: never equal.
    bound_targets = [[name, args[name]] if name in args else [name] for name in targets]
    body_digest = (
        hashlib.sha256(canonical_json(body_of(tool, args)).encode("utf-8")).hexdigest()
        if body_bound
        else None
    )
    material = [_VERSION, tool.name, bound_targets, body_digest, principal]
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


def audit_fingerprint(tool: ToolSpec, args: Mapping[str, Any], principal: str | None) -> str:
    """The fingerprint of this call with every body value masked, for the audit trail.

    It still tells calls apart by tool, targets, which body fields they set, and principal, but
    depends on no body value: the call's own fingerprint digests a new secret value or password,
    so a reader of the audit trail could otherwise test guesses of it offline.

    Raises:
        TypeError: a target is not a JSON value.
    """
    masked = {name: "*" for name in body_of(tool, args)}
    return fingerprint(tool, {**args, **masked}, principal)


def short(fp: str) -> str:
    """The first 12 hex digits: enough to correlate audit lines."""
    return fp[:12]
