"""The TypeScript SDK's client, declaring no elicitation (as the desktop hosts that embed it do),
gets its guarded call approved on the approval page (ADR 0063). The "browser" here is a program
that does what a person does there: loads the page, then presses Approve."""

import sys
from pathlib import Path

from sandbox.server import Sandbox
from tests.mcp.guarded_calls import WIDENING
from tests.mcp.test_node_client import pytestmark as node_marks
from tests.mcp.test_node_client import run_node

pytestmark = node_marks

PERSON = """
import re, sys, urllib.request
url = sys.argv[1]
page = urllib.request.urlopen(url, timeout=10)
cookie = page.headers["set-cookie"].split(";")[0]
fields = dict(re.findall(r'<input type="hidden" name="(\\w+)" value="([^"]*)">', page.read().decode()))
fields["decision"] = "approve"
body = "&".join(f"{k}={v}" for k, v in fields.items()).encode()
posted = urllib.request.Request(url, data=body, headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
urllib.request.urlopen(posted, timeout=10).read()
open(sys.argv[0] + ".done", "w").write(url)
"""


def approving_browser(tmp_path: Path) -> Path:
    script = tmp_path / "person.py"
    script.write_text(PERSON, encoding="utf-8")
    program = tmp_path / "browser"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$1"\n', encoding="utf-8")
    program.chmod(0o755)
    return program


def test_the_typescript_client_without_a_dialog_gets_its_call_approved_on_the_page(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    browser = approving_browser(tmp_path)
    plan = {
        "era": "legacy",
        "elicitation": False,
        "calls": [{"name": "delete_secret", "arguments": WIDENING["delete_secret"]}],
    }
    report = run_node(sandbox, plan, BROWSER=str(browser))
    (call,) = report["calls"]
    assert call["questions"] == []
    assert not call["result"].get("isError"), call["result"]
    assert (tmp_path / "person.py.done").exists()
    assert [(r.method, r.path) for r in sandbox.state_changing_requests()] == [
        ("DELETE", "/api/repos/1/secrets/deploy_token")
    ]
    assert "/approve/" not in str(report)
