"""WOODPECKER_MCP_CHECK_AT_START: ask Woodpecker's unauthenticated /version once, within a few
seconds, before serving; a server that cannot reach it says why in one line and does not start."""

from entrypoints.settings import PROGRAM, Settings

# Long enough for a slow VPN's handshake, short enough that a client's connect does not time out.
CHECK_SECONDS = 5.0


def unreachable_line(settings: Settings) -> str | None:
    """None when Woodpecker answered /version; else the one stderr line naming the variable, the
    URL tried, the cause and the fix (the words of the first call's error, ADR 0031)."""
    import anyio

    from ports.woodpecker import WoodpeckerError

    try:
        anyio.run(_ask_version, settings)
    except WoodpeckerError as error:
        said = " ".join(str(error).split()).rstrip(".")
        return (
            f"{PROGRAM}: WOODPECKER_MCP_CHECK_AT_START=true, and asking Woodpecker's /version failed: {said}. "
            "The server does not start: fix that, or unset WOODPECKER_MCP_CHECK_AT_START to start without "
            "the check"
        )
    return None


async def _ask_version(settings: Settings) -> None:
    from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
    from ports.woodpecker import Request

    # No token: /version needs none, and none is sent there whatever the gateway holds.
    async with HttpxWoodpeckerGateway(
        settings.woodpecker_url,
        insecure_tls=settings.insecure_tls,
        ca_file=settings.ca_file,
        timeout=CHECK_SECONDS,
        deadline=CHECK_SECONDS,
        retries=0,
    ) as gateway:
        await gateway.send(Request("GET", "/version"), None)
