"""What a two-call token and an approval view's ticket are bound to: digests of the call's keyed
fingerprint and the reasons its question showed (they share one store, under different labels)."""

import hashlib

from domain.guard.fingerprint import canonical_json


def ticket_binding(fp: str, reasons: frozenset[str]) -> str:
    """What an approval view's ticket is bound to: like a token's, under its own label, so that a
    token is never found as a ticket nor a ticket as a token (they share one store)."""
    return _bound("app-ticket", fp, sorted(reasons))


def _bound(*material: object) -> str:
    return hashlib.sha256(canonical_json(list(material)).encode("utf-8")).hexdigest()


def token_binding(fp: str, reasons: frozenset[str]) -> str:
    """What a two-call token is bound to: the call's fingerprint and the reasons its first call showed.

    If the stored object changes between the two calls so that the call widens differently,
    the token no longer fits and the caller must ask for a new one (fail closed).
    """
    return _bound(fp, sorted(reasons))
