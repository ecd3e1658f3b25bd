"""Where the suite's time goes: `python -m pytest -p tests.timing` (opt-in; docs/adr/0025).

Each test's own CPU (its process's, every thread's) and the CPU of the child processes it
waited for (servers, the console script, node, git, pip) are written per worker, then summed
per file when the run ends. The child figure is what `getrusage(RUSAGE_CHILDREN)` gained
during the test: a child is counted once it has exited and been waited for, which every
test here does before it ends. The run's own CPU (imports, collection, the workers' start)
is the difference between these sums and what `time make test` reports.
"""

import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

_DIR_VARIABLE = "WOODPECKER_MCP_TIMING_DIR"
_rows: list[str] = []
_WHOLE = "<the whole process>"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) picks the place
        folder = Path(config.rootpath) / ".pytest-timing"
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.tsv"):
            old.unlink()
        os.environ[_DIR_VARIABLE] = str(folder)  # the workers inherit it


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall, children = time.process_time(), time.perf_counter(), _children_cpu()
    yield
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    _rows.append(f"{cpu:.4f}\t{_children_cpu() - children:.4f}\t{wall:.4f}\t{item.nodeid}\n")


def pytest_sessionfinish(session: pytest.Session) -> None:
    folder = Path(os.environ.get(_DIR_VARIABLE, Path(session.config.rootpath) / ".pytest-timing"))
    # The process's whole CPU so far (its start, imports and collection included), as a last row.
    whole = f"{time.process_time():.4f}\t{_children_cpu():.4f}\t0\t{_WHOLE}\n"
    (folder / f"{os.getpid()}.tsv").write_text("".join(_rows) + whole)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    folder = Path(os.environ.get(_DIR_VARIABLE, Path(config.rootpath) / ".pytest-timing"))
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    processes, own = 0.0, f"{os.getpid()}.tsv"
    for table in folder.glob("*.tsv"):
        for row in table.read_text().splitlines():
            cpu, children, wall, node = row.split("\t")
            if node == _WHOLE:
                processes += float(cpu) if table.name != own else 0.0
                continue
            sums = per_file[node.split("::")[0]]
            sums[0] += float(cpu)
            sums[1] += float(children)
            sums[2] += float(wall)
            sums[3] += 1
    if not per_file:
        return
    write = terminalreporter.write_line
    total = [sum(s[i] for s in per_file.values()) for i in range(4)]
    write("")
    write(
        f"timing: {int(total[3])} tests, {total[0]:.1f} CPU-s in the tests' processes, "
        f"{total[1]:.1f} CPU-s in child processes, {total[2]:.1f} s of test wall time over all workers"
    )
    if processes:
        write(
            f"  the workers' whole CPU: {processes:.1f} CPU-s ({processes - total[0]:.1f} outside tests: start, "
            f"imports, collection); this process so far: {time.process_time():.1f} CPU-s"
        )
    write(f"  {'tests CPU-s':>11} {'children':>9} {'wall s':>7} {'tests':>6}  file")
    ranked = sorted(per_file.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)
    for name, (cpu, children, wall, count) in ranked[:25]:
        write(f"  {cpu:>11.2f} {children:>9.2f} {wall:>7.2f} {int(count):>6}  {name}")
