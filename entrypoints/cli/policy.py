"""`woodpecker-ci-mcp policy check FILE`: the policy file checked as a start would check it, and its
effective rules printed one a line (docs/policy.md). Exit 0 when it would be used, 1 when it would
stop the server, with the same lines the server would print."""

import sys


def check(path: str) -> int:
    from domain.woodpecker.catalogue import WOODPECKER_TOOLS
    from entrypoints.settings.policy import policy_lines, read_policy
    from entrypoints.settings.variables import StartupError

    try:
        policy = read_policy(path, WOODPECKER_TOOLS)
    except StartupError as e:
        for text in e.lines:
            print(text, file=sys.stderr)
        return 1
    for text in policy_lines(policy, WOODPECKER_TOOLS):
        print(text)
    return 0
