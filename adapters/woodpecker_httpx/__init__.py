"""The Woodpecker gateway over httpx (see `gateway.py`); the only names other layers need are re-exported here."""

from adapters.woodpecker_httpx.gateway import HttpxWoodpeckerGateway
from adapters.woodpecker_httpx.transport import warm_up

__all__ = ["HttpxWoodpeckerGateway", "warm_up"]
