"""An approval view's tickets (ADR 0049) and what became of each (ADR 0066).

A ticket is issued and redeemed like a two-call token (`Confirmations`, under `ticket_binding`),
and beside it the token store keeps its record (domain/guard/view_ticket.py): open until answered,
then how the answer ended. The record only ever tells (a view shown again says what was decided
instead of offering buttons) or closes (a question replaced by a new one is taken out of the
store); it never lets a call run, so a record lost to the store's bounds costs only the telling.
"""

from domain.calls import ToolResult
from domain.guard import outcomes
from domain.guard.tokens import is_well_formed
from domain.guard.view_ticket import (
    MAX_HOPS,
    RECORD_TTL_SECONDS,
    Decided,
    DecidedTicket,
    OpenTicket,
    TicketRecord,
    ViewState,
    decode,
    encode,
    record_key,
    view_state,
)
from ports.clock import Clock
from ports.token_store import TokenStoreUnavailable
from ports.use_cases.confirmations import Confirmations, RedeemOutcome


class ViewTickets:
    def __init__(self, confirmations: Confirmations, clock: Clock) -> None:
        self._confirmations = confirmations
        self._clock = clock

    async def issue(self, binding: str, owner: str | None, *, ttl: float) -> str:
        """A fresh ticket for `binding`, valid `ttl` seconds (at most a token's), recorded open until then."""
        ticket = await self._confirmations.issue(binding, owner, ttl=ttl)
        opened = OpenTicket(self._clock.now() + self._confirmations.life(ttl), binding)
        await self._confirmations.keep_record(record_key(ticket), encode(opened), RECORD_TTL_SECONDS, owner)
        return ticket

    async def redeem(self, bindings: tuple[str, ...], ticket: object, owner: str | None) -> RedeemOutcome:
        """ACCEPTED once, for the binding it was issued under (any key of the ring), before it expires."""
        return await self._confirmations.redeem(bindings, ticket, owner)

    async def record(self, ticket: object, owner: str | None) -> TicketRecord | None:
        """The ticket's record for this caller; None for a malformed, unknown or forgotten ticket."""
        if not is_well_formed(ticket):
            return None
        return decode(await self._confirmations.read_record(record_key(ticket), owner))

    async def retire(self, ticket: str, record: TicketRecord | None, owner: str | None) -> bool:
        """Take an open ticket out of the store under the binding it was issued for, whatever the call
        now is: True when this answer closed it (no other answer can use it any more)."""
        if not isinstance(record, OpenTicket):
            return False
        return await self._confirmations.redeem(record.binding, ticket, owner) is RedeemOutcome.ACCEPTED

    async def settle(
        self, ticket: str, state: Decided, owner: str | None, *, then: str | None = None
    ) -> None:
        """Record how the ticket's answer ended (`then`: the ticket of the question that replaced it).

        Best effort: a store that cannot be reached now loses only the telling, and never turns a
        call that ran into one said to have done nothing.
        """
        decided = DecidedTicket(state, record_key(then) if then is not None else None)
        try:
            await self._confirmations.keep_record(
                record_key(ticket), encode(decided), RECORD_TTL_SECONDS, owner
            )
        except TokenStoreUnavailable:
            return

    async def state(
        self, ticket: object, owner: str | None
    ) -> tuple[ViewState, int | None, ViewState | None]:
        """What a view is told of its ticket: its state, the seconds left when open, and, for one a new
        question replaced, what the last of its replacements came to."""
        now = self._clock.now()
        record = await self.record(ticket, owner)
        state, left = view_state(record, now)
        then: ViewState | None = None
        for _ in range(MAX_HOPS):
            if not (isinstance(record, DecidedTicket) and record.then is not None):
                break
            record = decode(await self._confirmations.read_record(record.then, owner))
            then, _ = view_state(record, now)
        return state, left, then

    async def told(self, ticket: object, owner: str | None) -> ToolResult:
        """What the approval view is told when it is shown: whether its ticket is open (for how long),
        else what it came to. Another caller's ticket is unknown to this one."""
        try:
            state, left, then = await self.state(ticket, owner)
        except TokenStoreUnavailable as e:
            return outcomes.store_unavailable(e)
        return outcomes.view_state(state, expires_in_seconds=left, then=then)

    async def closed(self, ticket: str, owner: str | None) -> ToolResult:
        """The answer to a closed ticket: it did nothing, and what the ticket came to."""
        state, _, then = await self.state(ticket, owner)
        # Open, yet not this answer's to take: another answer took it a moment ago.
        return outcomes.view_closed("unknown" if state == "open" else state, then)
