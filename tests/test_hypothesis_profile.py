"""CI's property runs are the same every time; a local run keeps exploring (docs/adr/0042)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Each case starts a Python process (marked slow, as every subprocess test is).
pytestmark = pytest.mark.slow
PROBE = "import tests.conftest; from hypothesis import settings; print(settings.default.derandomize)"


@pytest.mark.parametrize(
    ("ci", "derandomized"), [("true", "True"), (" TRUE ", "True"), ("", "False"), (None, "False")]
)
def test_ci_loads_the_derandomised_profile_and_a_local_run_explores(
    ci: str | None, derandomized: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == derandomized
