"""Per-principal quotas (ADR 0046) against one Woodpecker account that mints itself more principals.

Review finding: in per-client mode a principal is a keyed digest of the bearer (ADR 0012), not of the
Woodpecker user, and any user may mint a new token of their own (`DELETE /api/user/token` rotates
it; the entries the old principal left behind live on until they expire). So one account holds as
many quotas as it rotates tokens, and four rotations of the small store below (a tenth of the
product's per-principal quota each, as in test_token_quotas.py) freeze every other caller's
2026-07-28 approvals, which ADR 0046 says needs ten flooding *accounts*. Quotas are therefore
counted per Woodpecker account (`GET /api/user`'s id), not per bearer: the rotating account fills
only its own.
"""

from pathlib import Path

import anyio
import httpx
import mcp_types as types
import pytest

from adapters.memory_token_store import InMemoryTokenStore
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import Person
from tests.http.test_token_quotas import APPROVE, QUOTA, ask_and_answer, per_client_env

pytestmark = pytest.mark.anyio

ROUNDS = 4


def rotated(sandbox: Sandbox, bearer: str) -> str:
    """The user's new token (the old one stops working), as any signed-in user may ask for."""
    response = httpx.delete(
        f"{sandbox.url}/api/user/token", headers={"Authorization": f"Bearer {bearer}"}, timeout=10
    )
    response.raise_for_status()
    return response.text.strip()


async def test_one_account_rotating_its_token_does_not_freeze_the_admins_approvals(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    store = InMemoryTokenStore(max_entries=ROUNDS * QUOTA, per_principal=QUOTA)
    with anyio.fail_after(120):
        async with team_server(per_client_env(sandbox, tmp_path), token_store=store) as url:
            bearer = sandbox.user_token
            for round_ in range(ROUNDS):
                async with mcp_client(url, bearer, elicitation_callback=Person()) as flooder:
                    for number in range(1000, 1000 + QUOTA):
                        args = {"repo_id": 1, "number": number}
                        acted = await ask_and_answer(flooder, "delete_pipeline_logs", args)
                        # The first bearer fills the account's quota of used nonces; every later
                        # bearer of the same account finds it full and is asked again.
                        kind = types.CallToolResult if round_ == 0 else types.InputRequiredResult
                        assert isinstance(acted, kind), (round_, acted)
                bearer = await anyio.to_thread.run_sync(rotated, sandbox, bearer)
            async with mcp_client(url, sandbox.admin_token, elicitation_callback=Person()) as admin:
                done = await ask_and_answer(admin, "approve_pipeline", APPROVE)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert sandbox.state_changing_requests()[-1].path == "/api/repos/1/pipelines/11/approve"
