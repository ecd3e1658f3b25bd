"""Calls whose approved attempt had an unknown outcome, remembered so that their next question says so
(guard.md §2 and §7: the question is deterministic for a call and the server's record of it)."""

from ports.token_store import TokenStoreUnavailable
from ports.use_cases.confirmations import Confirmations

# How long an unknown outcome is told in the call's next questions (as long as a view's record).
REMEMBERED_SECONDS = 7 * 24 * 3600


def _key(fingerprint: str) -> str:
    # The call's keyed fingerprint (ADR 0046), under a label no token, nonce or ticket record has.
    return "unknown-outcome:" + fingerprint


class EarlierAttempts:
    """Kept beside the tokens (in memory, or Redis for a fleet). Records are for telling, never for
    deciding: one the store cannot keep or give back only leaves the note out of a question."""

    def __init__(self, confirmations: Confirmations) -> None:
        self._confirmations = confirmations

    async def remember(self, fingerprint: str, found: str, owner: str | None) -> None:
        """The approved attempt of the call with `fingerprint` ended unknown; `found`: its read-back."""
        try:
            await self._confirmations.keep_record(_key(fingerprint), found, REMEMBERED_SECONDS, owner)
        except TokenStoreUnavailable:
            return

    async def unknown(self, fingerprints: tuple[str, ...], owner: str | None) -> bool:
        """Whether an approved attempt of this call (under any key of the ring) ended unknown lately."""
        try:
            for fingerprint in fingerprints:
                if await self._confirmations.read_record(_key(fingerprint), owner) is not None:
                    return True
        except TokenStoreUnavailable:
            return False
        return False
