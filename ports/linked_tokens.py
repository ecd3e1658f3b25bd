"""Each signed-in person's own Woodpecker token (OAuth mode), linked once through a single-use page."""

from dataclasses import dataclass
from typing import Protocol

from ports.woodpecker import Credential


@dataclass(frozen=True, slots=True)
class LinkedToken:
    """A person's Woodpecker token and who Woodpecker said it belongs to when it was linked."""

    credential: Credential
    login: str
    linked_at: float


@dataclass(frozen=True, slots=True)
class LinkOffer:
    """A single-use page where `principal` pastes a token. `url` is a secret of that person's."""

    url: str
    elicitation_id: str
    expires_at: float


class LinkedTokens(Protocol):
    """The vault: tokens stored sealed (AEAD, bound to the principal), and the pending links.

    Implementations never store a token or a link id in the clear: tokens as ciphertext,
    link ids as digests. `take_link` is atomic: a link is used at most once, fleet-wide.
    """

    async def token(self, principal: str) -> LinkedToken | None:
        """The person's linked token, or None (never linked, unlinked, or unreadable with the current keys)."""
        ...

    async def store(self, principal: str, token: LinkedToken) -> None: ...

    async def remove(self, principal: str) -> bool:
        """Forget the person's token; True if there was one."""
        ...

    async def open_link(self, link_id: str, principal: str, expires_at: float) -> None: ...

    async def link_owner(self, link_id: str, now: float) -> str | None:
        """Whose pending link this is, without using it up; None if unknown, used or expired."""
        ...

    async def take_link(self, link_id: str, now: float) -> str | None:
        """Use the link up (once, atomically) and answer whose it was; None if unknown, used or expired."""
        ...


class TokenLinking(Protocol):
    """What the MCP adapter needs in OAuth mode: offer a link, tell who is linked, unlink."""

    async def new_link(self, principal: str) -> LinkOffer: ...

    async def linked(self, principal: str) -> LinkedToken | None: ...

    async def unlink(self, principal: str) -> bool: ...
