"""WOODPECKER_MCP_POLICY: the operator's policy file, read once at start and checked whole (docs/policy.md).

The one setting that is a file (docs/adr/0078): a list of rules per tool does not fit in a
variable. The rules themselves are `domain.guard.policy_file`; this module reads the file and turns
every refusal into one line naming the variable, the file, the line and the fix.
"""

from domain.guard.policy_file import (
    MAX_POLICY_BYTES,
    Policy,
    PolicyError,
    describe,
    parse_policy,
    shown_source,
)
from domain.tools import Catalogue
from entrypoints.settings.variables import PROGRAM, StartupError, line

POLICY_VARIABLE = "WOODPECKER_MCP_POLICY"


def read_policy(path: str, catalogue: Catalogue) -> Policy:
    """The policy in the file at `path`, checked against `catalogue` (every tool this server has).

    Raises:
        StartupError: the file cannot be read, is not UTF-8 text or is too long, or the policy is
            refused (`PolicyError`); one line per problem.
    """
    shown = shown_source(path)
    fix = f"point {POLICY_VARIABLE} at a readable TOML file (docs/policy.md), or unset it"
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_POLICY_BYTES + 1)
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise StartupError([line(f"{POLICY_VARIABLE}: {shown}: cannot be read ({reason}); {fix}")]) from None
    if len(data) > MAX_POLICY_BYTES:
        raise StartupError(
            [
                line(
                    f"{POLICY_VARIABLE}: {shown}: is longer than {MAX_POLICY_BYTES} bytes, which no policy "
                    f"needs (a few lines per tool); {fix}"
                )
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        row = data[: e.start].count(b"\n") + 1
        raise StartupError(
            [line(f"{POLICY_VARIABLE}: {shown}:{row}: is not UTF-8 text; save the policy as UTF-8")]
        ) from None
    try:
        return parse_policy(text, path, catalogue)
    except PolicyError as e:
        raise StartupError([line(f"{POLICY_VARIABLE}: {text}") for text in e.lines]) from None


def policy_lines(
    policy: Policy, catalogue: Catalogue, registered: Catalogue | None = None
) -> tuple[str, ...]:
    """The effective policy as the server prints it at start: one line per rule."""
    return tuple(
        f"{PROGRAM}: policy {shown_source(policy.source)}: {rule}"
        for rule in describe(policy, catalogue, registered)
    )
