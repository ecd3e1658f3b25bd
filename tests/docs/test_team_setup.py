"""docs/http.md's worked team setup, run as written: the client metadata registered at a real OpenID
provider (npm oidc-provider), the policy file, the keys made with the page's own `openssl` lines and
the server started by the page's own shell block (`sh`, the installed `woodpecker-ci-mcp`) over a real
Redis, in front of the sandbox. Only the example names are replaced by the test's (its URLs, ports and
folders). Then the page's story, with real Chromium: Alice's own answer is refused under four eyes,
Bob approves, the secret is deleted once."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from sandbox.server import Sandbox
from tests.fixtures.chromium import chromium_binary
from tests.fixtures.http import ServerProcess, free_port, serve_asgi, stop_together
from tests.fixtures.oidc_provider import CLIENT_SECRET, openid_provider
from tests.http.test_approval_notify import Receiver
from tests.http.test_approval_page_replicas import forget_what_the_replicas_stored
from tests.http.test_approval_page_signed_in import (
    DELETE,
    SECRET,
    audit_lines,
    call_as,
    deletes,
    use_the_page,
)
from tests.http.test_token_linking import PageFiller

ROOT = Path(__file__).resolve().parents[2]
HTTP_MD = ROOT / "docs" / "http.md"

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]


def blocks() -> dict[str, str]:
    """Each `<!-- team-setup: NAME -->` block of the page, by name."""
    text = HTTP_MD.read_text(encoding="utf-8")
    found = dict(re.findall(r"^<!-- team-setup: (\S+) -->\n```\w+\n(.*?)^```", text, flags=re.M | re.S))
    assert set(found) == {"client.json", "policy.toml", "keys.sh", "serve.sh"}, found.keys()
    return found


class Started(ServerProcess):
    """The page's serve.sh run by `sh`, exactly as written once the example names are replaced."""

    def __init__(self, script: str, workdir: Path, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.stdout = workdir / "server.stdout"
        self.stderr = workdir / "server.stderr"
        path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
        with self.stdout.open("wb") as out, self.stderr.open("wb") as err:
            self.process = subprocess.Popen(
                ["sh", "-c", script],
                env={"PATH": path, "HOME": str(workdir)},
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )


class Forwarding:
    """Alice's client: it links her Woodpecker token, then brings the approval link to her browser, where
    she signs in and is refused; she forwards the same link to Bob, who signs in and approves."""

    def __init__(self, sandbox: Sandbox, tmp_path: Path) -> None:
        self.linker = PageFiller(sandbox.admin_token)
        self.tmp_path = tmp_path
        self.seen: list[dict[str, Any]] = []
        self.url = ""

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams) and "/link/" in params.url:
            return await self.linker(context, params)
        if not isinstance(params, types.ElicitRequestURLParams) or self.seen:
            return types.ElicitResult(action="cancel")
        self.url = params.url
        for login in ("alice", "bob"):
            profile = self.tmp_path / f"profile-{login}"
            seen = await anyio.to_thread.run_sync(
                use_the_page, chromium_binary(), profile, params.url, login, "approve"
            )
            self.seen.append(seen)
        return types.ElicitResult(action="accept")


def test_the_page_shows_each_part_of_the_setup() -> None:
    found = blocks()
    assert json.loads(found["client.json"])["redirect_uris"] == ["https://mcp.example.org/approve/signed-in"]
    assert found["serve.sh"].rstrip().endswith("exec woodpecker-ci-mcp --transport http --port 8000")


async def test_the_worked_team_setup_runs_as_written(
    sandbox: Sandbox, redis_url: str, tmp_path: Path
) -> None:
    found = blocks()
    port = free_port()
    base = f"http://localhost:{port}"
    etc, log = tmp_path / "etc", tmp_path / "log"
    etc.mkdir()
    log.mkdir()

    hooks = ""  # the approvers' webhook receiver, once it listens

    def ours(text: str, issuer: str = "") -> str:
        for example, real in [
            ("https://mcp.example.org", base),
            ("https://sso.example.org/realms/team", issuer),
            ("https://ci.example.org", sandbox.url),
            ("redis://redis.internal:6379/0", redis_url),
            ("json://hooks.example.org", hooks.replace("http://", "json://")),
            ("/etc/woodpecker-ci-mcp/", f"{etc}/"),
            ("/var/log/woodpecker-ci-mcp/", f"{log}/"),
            ("--port 8000", f"--port {port}"),
        ]:
            text = text.replace(example, real)
        return text

    client = json.loads(ours(found["client.json"]))
    # The provider issues the secret; the server reads it from the file the page names.
    client["client_secret"] = CLIENT_SECRET
    (etc / "approval-client-secret").write_text(CLIENT_SECRET)
    (etc / "policy.toml").write_text(found["policy.toml"])
    subprocess.run(["sh", "-c", ours(found["keys.sh"])], check=True, timeout=30)
    receiver = Receiver()
    async with (
        serve_asgi(receiver) as hooks_url,
        openid_provider(client["redirect_uris"][0], f"{base}/mcp", client=client) as idp,
    ):
        hooks = hooks_url
        server = Started(ours(found["serve.sh"], idp.issuer), tmp_path, port)
        try:
            server.wait_until_live()
            person = Forwarding(sandbox, tmp_path)
            result = await call_as(base, idp, "alice", person)
            with anyio.fail_after(30):  # the end is told in the background
                while len(receiver.posts) < 2:
                    await anyio.sleep(0.05)
        finally:
            stop_together(server)
            forget_what_the_replicas_stored(redis_url)
    alice, bob = person.seen
    assert alice["title"] == "Not yours to answer" and "ci-approvers" in alice["text"]
    assert bob["after"] == "approved" and bob["replayed"] == bob["reloaded"] == "approved"
    assert not result.is_error, result
    assert deletes(sandbox) == [DELETE]
    lines = audit_lines(log / "audit.jsonl")
    assert [
        (line["approver"]["sub"], line["four_eyes"]) for line in lines if line["outcome"] == "refused"
    ] == [("alice", False)]
    assert [
        (line["approver"]["sub"], line["four_eyes"], line["path"])
        for line in lines
        if line["outcome"] == "approved"
    ] == [("bob", True, "page")]
    assert SECRET["name"] not in (log / "audit.jsonl").read_text()
    # The approvers' channel: told the question waits, with the link Alice and Bob opened, then that it
    # ended; never the question's text (the secret's name) nor a secret.
    told = [json.dumps(post) for post in receiver.posts]
    assert len(told) == 2 and person.url in json.loads(told[0])["message"]
    assert "was approved" in json.loads(told[1])["message"]
    assert not any(SECRET["name"] in text or CLIENT_SECRET in text for text in told)
