"""Limits on the connection itself, below the ASGI app: how long a request head may take, and how
many connections one process holds at once (docs/http.md, "Limits"; docs/adr/0110).

uvicorn bounds idle keep-alive connections (`timeout_keep_alive`) and our middleware bounds the
body, but nothing bounds a request head: a client that opens a connection and sends one header
line every few seconds holds a file descriptor for as long as it likes, and enough of them (the
common open-file limit is 1,024) make `accept` fail for every real client. So each connection
gets a deadline for its head, armed when it opens and at the first byte of each later head; and past
`max_connections` a new connection is answered 503 and closed at once, before it costs more
than its accept.
"""

import asyncio
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def _response(status: str, error: str, extra: str = "") -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, written below h11 (which may be mid-request)."""
    body = ('{"error":"' + error + '"}').encode()
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\n{extra}"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


TIMED_OUT = _response("408 Request Timeout", "request_timeout")
TOO_MANY = _response("503 Service Unavailable", "too_many_connections", "retry-after: 1\r\n")


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head and a cap on connections.

    Use `bounded_protocol(...)` for a class with the two limits set; this one's are the defaults.
    """

    header_timeout: ClassVar[float] = 30.0
    max_connections: ClassVar[int] = 1024

    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            # The connection has cost its descriptor only; give it back at once. A peer that
            # has not sent its request yet reads the 503; one whose bytes already arrived may
            # see a reset instead. Either way it was refused, and nothing reached the app.
            transport.write(TOO_MANY)
            transport.close()
            return
        self._arm_head_deadline()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            # The head is complete (the body has its own limit: BodyLimitMiddleware), or the
            # connection is done for: the deadline has nothing left to guard.
            self._disarm_head_deadline()
        elif self._head_deadline is None:
            # The first bytes of a later request's head on a kept-alive connection (the silence
            # before them is uvicorn's keep-alive timer's to bound; their first byte cancels it).
            self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_deadline()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        self._disarm_head_deadline()
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:
            # Part of a head arrived: say why the connection ends. A connection that sent
            # nothing is idle and is only closed, as an idle keep-alive connection is.
            self.transport.write(TIMED_OUT)
        self.transport.close()


def bounded_protocol(*, header_timeout: float, max_connections: int) -> type[BoundedH11Protocol]:
    """The protocol class for uvicorn's `http=` setting, with these limits."""
    attributes: dict[str, Any] = {"header_timeout": header_timeout, "max_connections": max_connections}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), attributes)
