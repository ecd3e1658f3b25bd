"""The echo session of the stdio transport tests: every message back, an `invalid` notification for
every line the SDK could not parse. Imported by the test process and by the spawned echo server."""

from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage


async def echo(read: Any, write: Any) -> None:
    async with read, write:
        async for item in read:
            if isinstance(item, Exception):
                out = types.JSONRPCNotification(jsonrpc="2.0", method="invalid")
            else:
                out = item.message
            await write.send(SessionMessage(out))
