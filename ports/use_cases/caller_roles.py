"""Whether the caller is an instance admin, in Woodpecker's own words, remembered per principal for a short time.

Per-client HTTP lists a non-admin only the tools Woodpecker would let that account use
(docs/adr/0029). The answer is `GET /api/user`'s `admin` field for the caller's own token.
It is remembered under the principal (never under the token) for `ttl_seconds` by the
Clock, in a cache of at most `capacity` principals (the least recently used goes first).
When Woodpecker cannot be asked, or does not accept the token, the caller is not an admin
for this request and nothing is remembered: the narrower list is the safe one, and a call
Woodpecker would refuse anyway is the only thing it hides.
"""

from collections import OrderedDict

from ports.clock import Clock
from ports.woodpecker import Credential, Request, WoodpeckerError, WoodpeckerGateway

ROLE_TTL_SECONDS = 60.0
ROLE_CACHE_SIZE = 4096


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
        self._known: OrderedDict[str, tuple[bool, float]] = OrderedDict()

    async def is_admin(self, principal: str, credential: Credential) -> bool:
        """True only when Woodpecker said, within the last `ttl_seconds`, that this account is an instance admin."""
        now = self._clock.now()
        known = self._known.get(principal)
        if known is not None and now < known[1]:
            self._known.move_to_end(principal)
            return known[0]
        try:
            response = await self._gateway.send(Request("GET", "/api/user"), credential)
        except WoodpeckerError:
            self._known.pop(principal, None)
            return False
        admin = isinstance(response.data, dict) and response.data.get("admin") is True
        self._known[principal] = (admin, now + self._ttl)
        self._known.move_to_end(principal)
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)
        return admin
