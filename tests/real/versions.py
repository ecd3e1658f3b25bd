"""How each Woodpecker version we claim answers differently from the one the sandbox copies (3.17.0), as
the differential and the real suite found them. docs/woodpecker-versions.md has one row per entry (its
`what`), kept in step by tests/docs/test_woodpecker_versions.py; each entry names the test that shows it."""

import re
from dataclasses import dataclass

DIFFERENTIAL = "tests/real/test_real_woodpecker.py::test_the_sandbox_answers_as_the_real_server_does"
REAL = "tests/real/test_real_woodpecker.py::"
GUARD = "tests/real/test_real_guard.py::test_a_guarded_tool_on_a_real_woodpecker"


@dataclass(frozen=True)
class Difference:
    version: str  # the real version that answers so
    what: str  # the first cell of its row in docs/woodpecker-versions.md
    ours: str  # what the server does about it: the row's second cell
    test: str  # the test that shows it
    diff: str | None = None  # a regex on the differential's lines it accounts for, if any
    probe: str | None = None  # only on this probe's lines


DIFFERENCES = (
    Difference(
        "3.11.0",
        "users carry no `forge_remote_id`",
        "update_user sends it empty; 3.11 finds the account by login, so the PATCH lands as asked",
        REAL + "test_repair_makes_the_caller_the_owner_of_a_repository_whose_owner_is_gone",
        r"only sandbox \$(\[\])?\.forge_remote_id ",
    ),
    Difference(
        "3.11.0",
        "repositories carry no `config_extension_*`, `registry_extension_*` or `secret_extension_*`",
        "no tool sets them; they are shown where present",
        DIFFERENTIAL,
        r"only sandbox \$(\[\])?\.(config|registry|secret)_extension_\w+ ",
    ),
    Difference(
        "3.11.0",
        "pipelines carry no `version`, metadata no `repo.org_id`",
        "nothing reads them",
        DIFFERENTIAL,
        r"only sandbox \$(\[\])?(\.last_pipeline)?\.version |only sandbox \$\.repo\.org_id ",
    ),
    Difference(
        "3.11.0",
        "secrets carry no `note`",
        "a `note` passed to create_secret or update_secret is not kept",
        DIFFERENTIAL,
        r"only sandbox \$(\[\])?\.note ",
    ),
    Difference(
        "3.11.0",
        "crons carry no `enabled` or `timezone`",
        "3.11 runs every cron; update_cron's `enabled: true` asks there (a cron without the field counts as not enabled)",
        DIFFERENTIAL,
        r"only sandbox \$(\[\])?\.(enabled|timezone) ",
    ),
    Difference(
        "3.11.0",
        "`PATCH /api/repos/{id}` with `timeout: 0` answers 200 (3.17: 400)",
        "update_repository refuses a timeout under 1 itself, before anything is sent",
        DIFFERENTIAL,
        r"^(status real 200 sandbox 400|kind real json sandbox text)$",
        probe="patch repo timeout 0",
    ),
    Difference(
        "3.11.0",
        "`PATCH /api/users/{login}` without `login` keeps the login (3.17 blanks it)",
        "update_user always sends the whole record, login included",
        DIFFERENTIAL,
        r"^value real \('alice', ",
    ),
    Difference(
        "3.11.0",
        "a branch with slashes reaches the forge escaped (`refs%2Fpull%2F1%2Fhead`)",
        "the guard asks for any `refs/...` branch name either way (`branch_unlisted`)",
        REAL + "test_a_branch_head_lookup_hands_refs_pull_to_the_forge_as_a_branch_name",
    ),
    Difference(
        "3.11.0",
        "`POST /api/repos/{id}/move` moves the repository, then answers 500 (3.17: 204)",
        "move_repository says the outcome is unknown and what its read-back found: the move took effect",
        GUARD,
    ),
    Difference(
        "3.11.0",
        "cron pipelines carry no `cron` (the cron's name is their `sender`)",
        "nothing reads them",
        GUARD,
    ),
    Difference(
        "3.11.0",
        "a cancel of a running pipeline crashes the local agent; the pipeline ends `killed`, or `failure` "
        "when the agent's report reaches the server before the crash",
        "nothing reads which; the real suite's seed cancels a held pipeline for its `killed` one, and its "
        "harness starts a new agent after a crash",
        REAL + "test_a_cancel_of_a_running_pipeline_ends_as_each_version_records_it",
    ),
)


def allowed(version: str, probe: str, line: str) -> bool:
    """Whether `line` of `probe`'s differences is a known, documented difference of `version`."""
    return any(
        d.version == version and d.diff is not None and re.search(d.diff, line) and d.probe in (None, probe)
        for d in DIFFERENCES
    )
