"""Before serving, start-up's objects leave the garbage collector's sight and the youngest generation is collected less often (ADR 0039)."""

import subprocess
import sys

PROBE = """
import gc
from entrypoints.collector import YOUNG_COLLECTION_THRESHOLD, settle
young, older, oldest = gc.get_threshold()
settle()
print(gc.get_freeze_count() > 0, gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, older, oldest))
"""


def test_settle_freezes_what_start_up_made_and_raises_only_the_young_threshold() -> None:
    # In a child process: freezing the test process's own objects would change every later test.
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.split() == ["True", "True"]
