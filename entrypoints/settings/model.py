"""The two settings records: `Settings` (what stdio and HTTP share) and `HttpSettings` (the HTTP transport).

Each field names its variable (the validation alias) and its type, whose validator lives in the
module of its concern (`woodpecker`, `guard`, `tools`, `http`, `oauth`) and raises `ValueError`
naming the variable and the fix, never the value. `environment.read_settings` fills them.
"""

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domain.guard.approvers import Approvers
from domain.guard.policy_file import Policy
from domain.tools import Catalogue
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from entrypoints.settings.guard import (
    ApprovalNotify,
    ApprovalPage,
    ApprovalWait,
    AuditFile,
    Elicitation,
    FourEyes,
    SealKeys,
    TokenStore,
)
from entrypoints.settings.http import Auth, Bearer, HeaderTimeout, Host, MaxBody, MaxConnections, Port
from entrypoints.settings.oauth import (
    ApproversList,
    ClientId,
    ClientSecret,
    Issuers,
    LinkKeys,
    ResourceUrl,
    Scope,
)
from entrypoints.settings.tools import ReadOnly, TextMode
from entrypoints.settings.values import CommaList
from entrypoints.settings.variables import (
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_OAUTH_SCOPE,
)
from entrypoints.settings.woodpecker import (
    CaFile,
    CheckAtStart,
    InsecureTls,
    WoodpeckerUrl,
    check_one_way_to_trust,
    check_reachable_needs_url,
)
from ports.woodpecker import Credential


class Settings(BaseModel):
    """Everything the stdio and HTTP transports share. Secrets never show in repr."""

    model_config = ConfigDict(
        frozen=True, hide_input_in_errors=True, arbitrary_types_allowed=True, populate_by_name=True
    )

    # In the order their refusals are reported. Each type's module: woodpecker.py (the connection),
    # tools.py (which tools, and their text), guard.py (asking, sealing, remembering).
    woodpecker_url: WoodpeckerUrl = Field(default=None, validation_alias="WOODPECKER_URL")
    token: Credential | None = Field(default=None, validation_alias="WOODPECKER_TOKEN", repr=False)
    # what the allow, deny and toolsets variables leave (tools.select). A factory, not a default:
    # pydantic deep-copies a mutable default on every validation, which is the whole catalogue.
    tools: Catalogue = Field(default_factory=lambda: WOODPECKER_TOOLS, repr=False)
    read_only: ReadOnly = Field(default=False, validation_alias="WOODPECKER_READ_ONLY")
    insecure_tls: InsecureTls = Field(default=False, validation_alias="WOODPECKER_INSECURE_TLS")
    ca_file: CaFile = Field(default=None, validation_alias="WOODPECKER_CA_FILE")
    # Ask Woodpecker once before serving (entrypoints/cli/check.py); off: the first call finds out.
    check_at_start: CheckAtStart = Field(default=False, validation_alias="WOODPECKER_MCP_CHECK_AT_START")
    elicitation: Elicitation = Field(default=True, validation_alias="ELICITATION")
    approval_page: ApprovalPage = Field(default="auto", validation_alias="WOODPECKER_MCP_APPROVAL_PAGE")
    approval_wait_seconds: ApprovalWait = Field(
        default=45, validation_alias="WOODPECKER_MCP_APPROVAL_WAIT_SECONDS"
    )
    # OAuth mode's page only: the tools whose approver must be someone other than the caller.
    four_eyes: FourEyes = Field(default=(), validation_alias="WOODPECKER_MCP_FOUR_EYES")
    # OAuth mode's page only: Apprise URLs the approvers are told through when a question waits (ADR 0087).
    approval_notify: ApprovalNotify = Field(
        default=(), validation_alias="WOODPECKER_MCP_APPROVAL_NOTIFY", repr=False
    )
    text: TextMode = Field(default="full", validation_alias="WOODPECKER_MCP_TEXT")
    seal_keys: SealKeys = Field(default=(), validation_alias="WOODPECKER_MCP_SEAL_KEYS", repr=False)
    audit_file: AuditFile = Field(default=None, validation_alias="WOODPECKER_MCP_AUDIT_FILE")
    token_store: TokenStore = Field(
        default="memory", validation_alias="WOODPECKER_MCP_TOKEN_STORE", repr=False
    )
    # The file WOODPECKER_MCP_POLICY names, read and checked by `environment.read_settings`
    # (policy.py); already applied to `tools`. None: no policy.
    policy: Policy | None = Field(default=None, repr=False)
    warnings: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        return self.woodpecker_url is not None and self.token is not None

    @property
    def four_eyes_tools(self) -> frozenset[str]:
        """The tools whose approver must be someone other than the caller: WOODPECKER_MCP_FOUR_EYES's
        and those the policy marks `four_eyes = true`."""
        return frozenset((*self.four_eyes, *(self.policy.four_eyes if self.policy is not None else ())))

    @model_validator(mode="after")
    def _consistent(self) -> "Settings":
        check_one_way_to_trust(self.ca_file, self.insecure_tls)
        check_reachable_needs_url(self.check_at_start, self.woodpecker_url)
        return self


class HttpSettings(BaseModel):
    """The Streamable HTTP transport's settings (read by `read_http_settings`). The bearer never shows in repr.

    Field order matters: `auth` is validated before the bearer and the OAuth fields that depend on it.
    """

    model_config = ConfigDict(frozen=True, hide_input_in_errors=True, populate_by_name=True)

    # the transport (http.py)
    host: Host = Field(default=DEFAULT_HTTP_HOST, validation_alias="WOODPECKER_MCP_HOST")
    port: Port = Field(default=DEFAULT_HTTP_PORT, validation_alias="WOODPECKER_MCP_PORT")
    auth: Auth = Field(default="shared", validation_alias="WOODPECKER_MCP_AUTH")
    # Validated even when unset: shared mode without a bearer is refused.
    bearer: Bearer = Field(
        default=None, validation_alias="WOODPECKER_MCP_BEARER", repr=False, validate_default=True
    )
    allowed_hosts: CommaList = Field(default=(), validation_alias="WOODPECKER_MCP_ALLOWED_HOSTS")
    allowed_origins: CommaList = Field(default=(), validation_alias="WOODPECKER_MCP_ALLOWED_ORIGINS")
    max_body_bytes: MaxBody = Field(
        default=DEFAULT_MAX_BODY_BYTES, validation_alias="WOODPECKER_MCP_MAX_BODY_BYTES"
    )
    header_timeout_seconds: HeaderTimeout = Field(
        default=DEFAULT_HEADER_TIMEOUT_SECONDS, validation_alias="WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS"
    )
    # "auto" is resolved against the open-file limit when the settings are read.
    max_connections: MaxConnections = Field(
        default="auto", validation_alias="WOODPECKER_MCP_MAX_CONNECTIONS", validate_default=True
    )
    # OAuth mode (oauth.py, docs/oauth.md); validated even when unset, because that mode requires them.
    resource_url: ResourceUrl = Field(
        default=None, validation_alias="WOODPECKER_MCP_RESOURCE_URL", validate_default=True
    )
    oauth_issuers: Issuers = Field(
        default=(), validation_alias="WOODPECKER_MCP_OAUTH_ISSUERS", validate_default=True
    )
    oauth_scope: Scope = Field(default=DEFAULT_OAUTH_SCOPE, validation_alias="WOODPECKER_MCP_OAUTH_SCOPE")
    link_keys: LinkKeys = Field(default=(), validation_alias="WOODPECKER_MCP_LINK_KEYS", repr=False)
    # The approval page behind a sign-in (oauth.py, ADR 0084): this server's confidential client at
    # the first issuer, and who beyond the caller may answer.
    approval_client_id: ClientId = Field(default=None, validation_alias="WOODPECKER_MCP_APPROVAL_CLIENT_ID")
    approval_client_secret: ClientSecret = Field(
        default=None,
        validation_alias="WOODPECKER_MCP_APPROVAL_CLIENT_SECRET",
        repr=False,
        validate_default=True,
    )
    approvers: ApproversList = Field(default=Approvers(), validation_alias="WOODPECKER_MCP_APPROVERS")
    warnings: tuple[str, ...] = ()


def aliases(model: type[BaseModel]) -> tuple[str, ...]:
    """The variables a model's fields are read from."""
    return tuple(str(f.validation_alias) for f in model.model_fields.values() if f.validation_alias)


def four_eyes_problems(settings: Settings, http: HttpSettings | None) -> list[str]:
    """Four eyes needs a second person who can sign in to answer: OAuth mode's approval page, and
    someone beyond the caller allowed to approve. Each problem names both settings."""
    problems = _notify_problems(settings, http)
    named = [
        *(["WOODPECKER_MCP_FOUR_EYES"] if settings.four_eyes else []),
        *(
            ["four_eyes in WOODPECKER_MCP_POLICY"]
            if settings.policy is not None and settings.policy.four_eyes
            else []
        ),
    ]
    if not named:
        return problems
    what = " and ".join(named)
    undo = " or ".join(
        [
            "unset WOODPECKER_MCP_FOUR_EYES"
            if n.startswith("WOODPECKER")
            else "remove the policy's four_eyes lines"
            for n in named
        ]
    )
    if settings.approval_page == "off" or not settings.elicitation:
        # No page at all: every four-eyes call would be refused (a dialog or the token would be the caller's).
        which = "WOODPECKER_MCP_APPROVAL_PAGE=off" if settings.approval_page == "off" else "ELICITATION=false"
        return [
            f"{what} needs the approval page, which {which} turns off: unset {which.split('=')[0]}, or {undo}",
            *problems,
        ]
    if http is None or http.auth != "oauth" or http.approval_client_id is None:
        return [
            f"{what} needs the approval page behind a sign-in: set WOODPECKER_MCP_AUTH=oauth "
            f"(Streamable HTTP) and WOODPECKER_MCP_APPROVAL_CLIENT_ID, or {undo}",
            *problems,
        ]
    if len(http.oauth_issuers) > 1:
        # The approver signs in at the first issuer: a caller whose token another issuer made is a
        # different (issuer, subject) there, so the same person would pass as a second one.
        return [
            f"{what} needs one identity provider, where the caller and the approver are told apart by the "
            f"same subject: WOODPECKER_MCP_OAUTH_ISSUERS names several; name one, or {undo}",
            *problems,
        ]
    if not http.approvers.anyone_but_the_caller:
        return [
            f"{what} names tools nobody but the caller could approve: list the approvers in "
            f"WOODPECKER_MCP_APPROVERS (sub:ID, email:ADDRESS or group:NAME), or {undo}",
            *problems,
        ]
    return problems


def _notify_problems(settings: Settings, http: HttpSettings | None) -> list[str]:
    """The approvers' channel carries the page's link, which acts only behind the sign-in: without
    it the link would be a pre-authenticated URL (ADR 0087)."""
    if not settings.approval_notify:
        return []
    if http is None or http.auth != "oauth" or http.approval_client_id is None:
        return [
            "WOODPECKER_MCP_APPROVAL_NOTIFY needs the approval page behind a sign-in: set "
            "WOODPECKER_MCP_AUTH=oauth (Streamable HTTP) and WOODPECKER_MCP_APPROVAL_CLIENT_ID, or unset "
            "WOODPECKER_MCP_APPROVAL_NOTIFY"
        ]
    return []
