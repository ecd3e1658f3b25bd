"""How each Woodpecker version we claim answers differently from the one the sandbox copies (3.17.0), as
the differential and the real suite found them. docs/woodpecker-versions.md has one row per entry, checked
by tests/docs/test_woodpecker_versions.py; each names the test that shows it."""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    version: str  # the real version that answers so
    what: str  # as docs/woodpecker-versions.md's row says it
    diff: str  # a regex on the differential's line ("only sandbox $.note ['string']")
    ours: str  # what the server does about it
    test: str  # tests/real/...::name


DIFFERENTIAL = "tests/real/test_real_woodpecker.py::test_the_sandbox_answers_as_the_real_server_does"

DIFFERENCES = (
    Difference(
        "3.11.0",
        "users carry no `forge_remote_id`",
        r"only sandbox \$(\[\])?\.forge_remote_id ",
        "update_user sends it empty; 3.11 finds the account by login, so the PATCH lands as asked",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "repositories carry no `config_extension_*`, `registry_extension_*`, `secret_extension_*`",
        r"only sandbox \$(\[\])?\.(config|registry|secret)_extension_\w+ ",
        "no tool sets them; they are shown when present",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "pipelines carry no `version`, metadata no `repo.org_id`",
        r"only sandbox \$(\[\])?(\.last_pipeline)?\.version |only sandbox \$\.repo\.org_id ",
        "nothing reads them",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "secrets carry no `note`",
        r"only sandbox \$(\[\])?\.note ",
        "a `note` passed to create_secret or update_secret is not kept by 3.11",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "crons carry no `enabled` or `timezone`",
        r"only sandbox \$(\[\])?\.(enabled|timezone) ",
        "3.11 runs every cron; the guard asks for `enabled: true` there (a cron without the field counts as not enabled)",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "`PATCH /api/repos/{id}` with `timeout: 0` answers 200 (3.17: 400)",
        r"^(status real 200 sandbox 400|kind real json sandbox text)$",
        "update_repository refuses a timeout under 1 itself, before anything is sent",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "`PATCH /api/users/{login}` without `login` keeps the login (3.17 blanks it)",
        r"^value real \('alice', ",
        "update_user always sends the whole record, login included",
        DIFFERENTIAL,
    ),
    Difference(
        "3.11.0",
        "a branch with slashes reaches the forge escaped (`refs%2Fpull%2F1%2Fhead`)",
        r"$^",
        "the guard asks for any `refs/...` branch name either way (`branch_unlisted`)",
        "tests/real/test_real_woodpecker.py::test_a_branch_head_lookup_hands_refs_pull_to_the_forge_as_a_branch_name",
    ),
    Difference(
        "3.11.0",
        "a cancelled running pipeline ends as `failure`, not `killed`; the local agent dies on the cancel",
        r"$^",
        "the failure summary reads the steps' exit codes either way; the harness starts a new agent",
        "tests/real/test_real_woodpecker.py::test_the_sandbox_answers_as_the_real_server_does",
    ),
)

PROBES = {"`PATCH /api/repos/{id}` with `timeout: 0` answers 200 (3.17: 400)": "patch repo timeout 0"}


def allowed(version: str, probe: str, line: str) -> bool:
    """Whether `line` of `probe`'s differences is a known, documented difference of `version`."""
    for difference in DIFFERENCES:
        if difference.version != version or not re.search(difference.diff, line):
            continue
        only = PROBES.get(difference.what)
        if only is None or only == probe:
            return True
    return False
