"""Before serving, start-up's objects leave the garbage collector's sight and the youngest generation is collected less often (ADR 0039)."""

import json
import os
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


START_UP = """
import gc
import json
import entrypoints.collector as collector
from entrypoints.cli import main

started = []
gc.callbacks.append(lambda phase, info: started.append(info["generation"]) if phase == "start" else None)
at_settle = []
at_pause = []
settle, pause = collector.settle, collector.pause


def paused():
    at_pause.append(len(started))
    return pause()


def settled():
    at_settle.append((len(started), gc.isenabled()))
    settle()
    at_settle.append((len(started), gc.isenabled()))


collector.settle, collector.pause = settled, paused
code = main([])  # stdio; stdin is empty, so the server is built, settles, meets EOF and ends
print(json.dumps({"code": code, "at_pause": at_pause, "at_settle": at_settle, "enabled": gc.isenabled()}))
"""


def test_no_collection_runs_while_the_stdio_server_is_imported_and_built_and_settle_turns_it_back_on() -> (
    None
):
    """ADR 0053: start-up's objects all live as long as the process; collecting while they are made
    only walks them again and again (a tenth of spawn to the first answer)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WOODPECKER", "ELICITATION"))}
    done = subprocess.run(
        [sys.executable, "-c", START_UP],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["code"] == 0
    # main() pauses the collector before it imports the server; not one collection runs from there
    # to settle(), the collector is off until settle() and on after it.
    assert len(seen["at_pause"]) == 1
    paused_at = seen["at_pause"][0]
    assert seen["at_settle"] == [[paused_at, False], [paused_at, True]] and seen["enabled"] is True
