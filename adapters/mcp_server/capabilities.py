"""What a client declared it can do: a form dialog, a URL page, MCP Apps views; and which handshake
revisions can carry a pushed question at all."""

from collections.abc import Mapping

import mcp_types as types
from mcp_types.methods import SERVER_REQUESTS

from domain.woodpecker.approval_view import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
)

# The handshake revisions that define a server's `elicitation/create` (2025-06-18 on). 2024-11-05 and
# 2025-03-26 have none: a client of theirs that declares the capability anyway cannot be sent one.
PUSH_ELICITATION_REVISIONS = frozenset(
    version for method, version in SERVER_REQUESTS if method == "elicitation/create"
)


def declares_form_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    """`elicitation: {}` means form mode (backwards compatible); `{url: {}}` alone does not."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    e = capabilities.elicitation
    return e.form is not None or e.url is None


# The one handshake revision whose pushed `elicitation/create` has a URL mode.
URL_ELICITATION_REVISION = "2025-11-25"


def declares_apps(capabilities: types.ClientCapabilities | None) -> bool:
    """The client renders MCP Apps views: `io.modelcontextprotocol/ui` with the HTML profile among its
    MIME types, in `extensions` (SEP-2133) or, for clients of SDKs that predate it, `experimental`."""
    if capabilities is None:
        return False
    for declared in (capabilities.extensions, capabilities.experimental):
        settings = (declared or {}).get(APPS_EXTENSION)
        mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
        if isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types:
            return True
    return False


def declares_url_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    return (
        capabilities is not None
        and capabilities.elicitation is not None
        and capabilities.elicitation.url is not None
    )
