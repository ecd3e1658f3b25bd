"""Who the caller is in Woodpecker's own words (instance admin or not, which account), remembered per principal for a short time.

Per-client HTTP lists a non-admin only the tools Woodpecker would let that account use
(docs/adr/0029), and counts a caller's pending tokens and used nonces against its Woodpecker
account, not against its bearer (docs/adr/0046): one account that rotates its token is one owner.
Both answers are `GET /api/user`'s (`admin`, `id`) for the caller's own token.
They are remembered under the principal (never under the token) for `ttl_seconds` by the
Clock, in a cache of at most `capacity` principals (the least recently used goes first).
When Woodpecker cannot be asked, or does not accept the token, the caller is not an admin
and has no known account for this request, and nothing is remembered: the narrower list is the
safe one, and `quota_owner` then names the one shared owner of every unidentified caller.
"""

from collections import OrderedDict

from ports.clock import Clock
from ports.woodpecker import Credential, Request, WoodpeckerError, WoodpeckerGateway

ROLE_TTL_SECONDS = 60.0
ROLE_CACHE_SIZE = 4096

# The token store's owner for every caller Woodpecker did not identify: they share one quota, so
# bearers Woodpecker does not accept (or an outage) never mint fresh quotas. No account's owner
# (`account:<id>`) nor a principal (a hex digest) can be spelled like it.
UNIDENTIFIED_OWNER = "unidentified"


class CallerRoles:
    def __init__(
        self,
        gateway: WoodpeckerGateway,
        clock: Clock,
        *,
        ttl_seconds: float = ROLE_TTL_SECONDS,
        capacity: int = ROLE_CACHE_SIZE,
    ) -> None:
        if ttl_seconds <= 0 or capacity < 1:
            raise ValueError("the role cache needs a positive lifetime and room for one principal")
        self._gateway = gateway
        self._clock = clock
        self._ttl = ttl_seconds
        self._capacity = capacity
        self._known: OrderedDict[str, tuple[bool, str | None, float]] = OrderedDict()

    async def _who(self, principal: str, credential: Credential) -> tuple[bool, str | None] | None:
        """(admin, account id) as Woodpecker said within the last `ttl_seconds`; None: it did not say."""
        now = self._clock.now()
        known = self._known.get(principal)
        if known is not None and now < known[2]:
            self._known.move_to_end(principal)
            return known[0], known[1]
        try:
            response = await self._gateway.send(Request("GET", "/api/user"), credential)
        except WoodpeckerError:
            self._known.pop(principal, None)
            return None
        data = response.data if isinstance(response.data, dict) else {}
        admin = data.get("admin") is True
        raw_id = data.get("id")
        account = str(raw_id) if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        self._known[principal] = (admin, account, now + self._ttl)
        self._known.move_to_end(principal)
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)
        return admin, account

    async def is_admin(self, principal: str, credential: Credential) -> bool:
        """True only when Woodpecker said, within the last `ttl_seconds`, that this account is an instance admin."""
        who = await self._who(principal, credential)
        return who is not None and who[0]

    async def quota_owner(self, principal: str, credential: Credential) -> str:
        """Whom this caller's token-store entries count against: `account:<id>` of the Woodpecker
        account the token belongs to, or UNIDENTIFIED_OWNER when Woodpecker did not say which."""
        who = await self._who(principal, credential)
        if who is None or who[1] is None:
            return UNIDENTIFIED_OWNER
        return "account:" + who[1]
