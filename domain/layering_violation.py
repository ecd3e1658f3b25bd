"""DELIBERATE VIOLATION, reverted in the next commit: proves CI fails when the domain does I/O."""

import datetime

import httpx


def now_from_the_network() -> datetime.datetime:
    httpx.get("http://127.0.0.1:9")
    return datetime.datetime.now()
