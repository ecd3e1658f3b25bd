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
    # False until a tool answer of the sign-in has named the account (see `TokenLinking.announce`).
    announced: bool = True


@dataclass(frozen=True, slots=True)
class PendingLink:
    """A link not used yet: whose sign-in it is for, and that sign-in's name as its access token gave it."""

    principal: str
    sign_in_name: str


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

    async def open_link(self, link_id: str, principal: str, expires_at: float, sign_in_name: str) -> None: ...

    async def link_owner(self, link_id: str, now: float) -> PendingLink | None:
        """Whose pending link this is, without using it up; None if unknown, used or expired."""
        ...

    async def take_link(self, link_id: str, now: float) -> str | None:
        """Use the link up (once, atomically) and answer whose it was; None if unknown, used or expired."""
        ...

    async def announce(self, principal: str) -> LinkedToken | None:
        """Mark the person's token announced, once fleet-wide: the token when this call did it; None when
        it was announced already, replaced or removed meanwhile, or there is none."""
        ...


class TokenLinking(Protocol):
    """What the MCP adapter needs in OAuth mode: offer a link, tell who is linked, unlink."""

    async def new_link(self, principal: str, sign_in_name: str) -> LinkOffer: ...

    async def linked(self, principal: str) -> LinkedToken | None: ...

    async def unlink(self, principal: str) -> bool: ...

    async def announce(self, principal: str) -> LinkedToken | None:
        """The newly linked token, to name its account in one tool answer (see `LinkedTokens.announce`)."""
        ...
