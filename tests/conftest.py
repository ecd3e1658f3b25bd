"""Shared test configuration. Fixtures live in tests/fixtures/, one module per concern."""

import gc
import json
import os
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, settings

# Hypothesis decides what a test means, not how fast a shared 2-core machine runs it: no
# per-example deadline and no "too slow" health check, which fail by chance under load.
# (A test's own @settings keeps whatever it sets and inherits the rest from here.)
settings.register_profile(
    "woodpecker-mcp", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
# CI (CI=true, as .ci/run is started) runs the same examples every time, so a chance find of a
# property never reddens an unrelated change; a local run keeps exploring new examples, and what
# it finds becomes an explicit @example (docs/adr/0042).
settings.register_profile(
    "woodpecker-mcp-ci", parent=settings.get_profile("woodpecker-mcp"), derandomize=True
)
settings.load_profile(
    "woodpecker-mcp-ci" if os.environ.get("CI", "").strip().lower() == "true" else "woodpecker-mcp"
)

# No test opens a browser on the machine it runs on: the approval page (docs/adr/0063) opens one with
# `webbrowser`, which reads these. A test that wants the page gives its server a BROWSER of its own.
for _variable in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
    os.environ.pop(_variable, None)

# The collector's garbage collection, tuned for a test run (docs/adr/0025, test time): the SDK's
# hundreds of pydantic models, the catalogue and the collected items live for the whole session,
# yet every full collection walked them again. Collection ends by freezing what exists then out
# of the collector's sight, and the youngest generation is collected every 10,000 allocations
# rather than 700, so the older generations, and their walks, come less often.
gc.set_threshold(10_000, 10, 10)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


# A JSON Schema checked against its meta-schema once per test process (docs/adr/0025, test
# time). The MCP client checks each tool's outputSchema before it first validates a result, once
# per session: with about a thousand sessions in the suite, that check of the same few dozen
# schemas against the 2020-12 meta-schema (6 ms each) was the costliest step of a call. The
# check is a pure function of the schema and the validator class: a schema that passed is
# remembered by its JSON text, one that fails is checked again, and raises, every time.
_META_SCHEMA_CHECKED: set[tuple[type, str]] = set()


def _check_schema_once(check: Any) -> Any:
    def checked(cls: type, schema: Any, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            return check.__func__(cls, schema, *args, **kwargs)
        try:
            key = (cls, json.dumps(schema, sort_keys=True))
        except (TypeError, ValueError):
            return check.__func__(cls, schema)
        if key not in _META_SCHEMA_CHECKED:
            check.__func__(cls, schema)
            _META_SCHEMA_CHECKED.add(key)
        return None

    return classmethod(checked)


jsonschema.Draft202012Validator.check_schema = _check_schema_once(
    jsonschema.Draft202012Validator.check_schema
)


pytest_plugins = [
    "tests.fixtures.sandbox",
    "tests.fixtures.gateway",
    "tests.fixtures.http",
    "tests.fixtures.mcp",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under WOODPECKER_MCP_STRICT_SKIPS=1 (CI), a Redis, Node or browser test that skips is a failure.

    Locally these tests skip when redis-server, the npm client or chromium is missing; in CI they must
    run, or the checks they stand for would pass by never running.
    """
    outcome = yield
    report = outcome.get_result()
    strict = os.environ.get("WOODPECKER_MCP_STRICT_SKIPS") == "1"
    if (
        strict
        and report.skipped
        and any(any(item.iter_markers(name)) for name in ("redis", "node", "browser"))
    ):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where it must run: {report.longrepr}"
