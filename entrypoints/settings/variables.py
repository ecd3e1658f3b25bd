"""Every variable this program reads, with its default and meaning: the single source for `--help`,
for the unknown-variable warning and for the docs test. Adding a setting starts with a row here."""

from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS
from domain.woodpecker.waiting import DEFAULT_WINDOW, LONGEST_CEILING, MAX_WINDOW

PROGRAM = "woodpecker-ci-mcp"
# The name on the package index (pyproject.toml), whose metadata holds the version.
DISTRIBUTION = "mcp-server-woodpecker-ci"

DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8000
DEFAULT_MAX_BODY_BYTES = 1_048_576
DEFAULT_HEADER_TIMEOUT_SECONDS = 30
LONGEST_HEADER_TIMEOUT_SECONDS = 60
DEFAULT_OAUTH_SCOPE = "woodpecker"

VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("WOODPECKER_URL", "none", "Woodpecker server root; a trailing /api and slashes are trimmed"),
    ("WOODPECKER_TOKEN", "none", "personal access token; read once, then removed from the environment"),
    ("WOODPECKER_READ_ONLY", "false", "exactly `true`: register only the 41 read tools"),
    ("WOODPECKER_ALLOW_TOOLS", "none", "comma list: names, prefixes ending in *, or `essential`"),
    ("WOODPECKER_DENY_TOOLS", "none", "comma list of names or prefixes ending in *; subtracted from allow"),
    (
        "WOODPECKER_TOOLSETS",
        "all",
        "comma list of toolsets (" + ", ".join(WOODPECKER_TOOLSETS.names) + "); only their tools",
    ),
    (
        "WOODPECKER_INSECURE_TLS",
        "false",
        "exactly `true`: accept a self-signed certificate (this client only)",
    ),
    ("WOODPECKER_CA_FILE", "none", "PEM file of the private CA that signed Woodpecker's certificate"),
    (
        "WOODPECKER_MCP_CHECK_AT_START",
        "false",
        "exactly `true`: ask Woodpecker's /version once before serving; exit 1 if it does not answer",
    ),
    ("ELICITATION", "true", "`false`: guarded tools use the two-call token instead of a dialog"),
    (
        "WOODPECKER_MCP_APPROVAL_PAGE",
        "auto",
        "stdio: `auto` (a page in the browser where no dialog reaches), `always` or `off`",
    ),
    (
        "WOODPECKER_MCP_APPROVAL_WAIT_SECONDS",
        "45",
        "stdio: how long one call waits for the approval page's answer (1 to 55)",
    ),
    (
        "WOODPECKER_MCP_FOUR_EYES",
        "none",
        "HTTP oauth: comma list of guarded tools whose approver must be someone other than the caller",
    ),
    (
        "WOODPECKER_MCP_APPROVAL_NOTIFY",
        "none",
        "HTTP oauth: comma list of Apprise URLs told when a question waits on the approval page",
    ),
    (
        "WOODPECKER_MCP_TEXT",
        "full",
        "`summary`: result text is the summary line only (for clients that read structuredContent)",
    ),
    (
        "WOODPECKER_MCP_WAIT_SECONDS",
        str(DEFAULT_WINDOW),
        "wait_for_pipeline's window when a call names none (1 to the ceiling)",
    ),
    (
        "WOODPECKER_MCP_WAIT_MAX_SECONDS",
        str(MAX_WINDOW),
        f"the longest window a call may ask for (at most {LONGEST_CEILING}); keep it under clients' timeout",
    ),
    (
        "WOODPECKER_MCP_POLICY",
        "none",
        "TOML file of per-tool rules that only tighten: deny, ask always, a shorter expires_in",
    ),
    ("WOODPECKER_MCP_SEAL_KEYS", "random", "comma list of base64 keys (>= 32 bytes); first seals, all open"),
    ("WOODPECKER_MCP_AUDIT_FILE", "stderr", "append the audit trail (JSON lines) to this file"),
    (
        "WOODPECKER_MCP_TOKEN_STORE",
        "memory",
        "`memory`, or a redis://, rediss:// or unix:// URL for pending tokens",
    ),
    ("WOODPECKER_MCP_HOST", DEFAULT_HTTP_HOST, "HTTP: address to bind (--host wins)"),
    ("WOODPECKER_MCP_PORT", str(DEFAULT_HTTP_PORT), "HTTP: port to bind, 0 for any free one (--port wins)"),
    ("WOODPECKER_MCP_AUTH", "shared", "HTTP: `shared` (clients present the bearer), `per-client` or `oauth`"),
    ("WOODPECKER_MCP_BEARER", "none", "HTTP shared mode: the secret clients send as Bearer (>= 32 chars)"),
    ("WOODPECKER_MCP_ALLOWED_HOSTS", "loopback", "HTTP: comma list of accepted Host headers"),
    ("WOODPECKER_MCP_ALLOWED_ORIGINS", "none", "HTTP: comma list of accepted Origin headers"),
    ("WOODPECKER_MCP_MAX_BODY_BYTES", str(DEFAULT_MAX_BODY_BYTES), "HTTP: largest request body accepted"),
    (
        "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS",
        str(DEFAULT_HEADER_TIMEOUT_SECONDS),
        f"HTTP: seconds a request head may take (1 to {LONGEST_HEADER_TIMEOUT_SECONDS})",
    ),
    (
        "WOODPECKER_MCP_MAX_CONNECTIONS",
        "auto",
        "HTTP: connections held at once, more are refused with 503 (auto: below the open-file limit)",
    ),
    ("WOODPECKER_MCP_RESOURCE_URL", "none", "HTTP oauth: this server's canonical URI, the tokens' audience"),
    (
        "WOODPECKER_MCP_OAUTH_ISSUERS",
        "none",
        "HTTP oauth: comma list of trusted authorization server issuers",
    ),
    (
        "WOODPECKER_MCP_LINK_KEYS",
        "random",
        "HTTP oauth: comma list of base64 AES-256 keys sealing linked tokens",
    ),
    (
        "WOODPECKER_MCP_OAUTH_SCOPE",
        DEFAULT_OAUTH_SCOPE,
        "HTTP oauth: the scope every access token must carry",
    ),
    (
        "WOODPECKER_MCP_APPROVAL_CLIENT_ID",
        "none",
        "HTTP oauth: this server's confidential client at the first issuer: the approval page's sign-in",
    ),
    ("WOODPECKER_MCP_APPROVAL_CLIENT_SECRET", "none", "HTTP oauth: that client's secret"),
    (
        "WOODPECKER_MCP_APPROVERS",
        "the caller",
        "HTTP oauth: comma list of sub:ID, email:ADDRESS or group:NAME who may also answer the page",
    ),
)
KNOWN_VARIABLES = frozenset(name for name, _, _ in VARIABLES)


class StartupError(Exception):
    """The configuration cannot start the server. Each line names a variable and the fix."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


def line(text: str) -> str:
    """One line of the program's own on stderr."""
    return f"{PROGRAM}: {text}"
