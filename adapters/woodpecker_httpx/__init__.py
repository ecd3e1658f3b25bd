"""The Woodpecker gateway over httpx (see `gateway.py`); the only name other layers need is re-exported here."""

from adapters.woodpecker_httpx.gateway import HttpxWoodpeckerGateway

__all__ = ["HttpxWoodpeckerGateway"]
