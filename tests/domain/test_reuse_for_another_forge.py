"""The guard machinery knows no Woodpecker: a made-up forge gets policy, fingerprints, tokens and seals unchanged."""

import ast
import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from adapters.hmac_sealer import HmacSealer
from adapters.memory_token_store import InMemoryTokenStore
from domain.guard.fingerprint import fingerprint
from domain.guard.policy import ALWAYS, Decision, covers, decide, needs_current
from domain.guard.question import build, labelled
from domain.tools import Annotations, Catalogue, GuardRule, Param, ToolSpec
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from ports.use_cases.sealed_questions import SealedQuestions
from tests.fakes.clock import FakeClock
from tests.fakes.randomness import FakeRandomness

GUARD_PACKAGE = Path(__file__).resolve().parents[2] / "domain" / "guard"

_WRITE = Annotations(read_only=False, destructive=True, idempotent=True, open_world=True)
_READ = Annotations(read_only=True, destructive=False, idempotent=True, open_world=True)


def _tool(name: str, kind: str, guard: GuardRule | None, *params: Param) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=name.replace("_", " ").capitalize(),
        group="gardens",
        kind="read" if kind == "read" else "write",
        admin="never",
        admin_when=None,
        essential=False,
        annotations=_READ if kind == "read" else _WRITE,
        guard=guard,
        untrusted_output=False,
        description="",
        params=params,
    )


GARDEN_ID = Param("garden_id", "integer", True, "Garden id.")
BED = Param("bed", "integer", True, "Bed number.")
SHARING = Param("sharing", "enum", False, "Who may visit.", choices=("owner", "friends", "everyone"))

GARDEN_FORGE = Catalogue(
    (
        _tool("list_beds", "read", None, GARDEN_ID),
        _tool(
            "dig_up_bed",
            "write",
            GuardRule(
                when="always",
                condition="",
                targets=("garden_id", "bed"),
                body_bound=False,
                needs_current_state=False,
            ),
            GARDEN_ID,
            BED,
        ),
        _tool(
            "update_garden",
            "write",
            GuardRule(
                when="opens_the_gate",
                condition="",
                targets=("garden_id",),
                body_bound=True,
                needs_current_state=True,
            ),
            GARDEN_ID,
            SHARING,
        ),
    )
)

_OPENNESS = {"owner": 0, "friends": 1, "everyone": 2}


class OpensTheGate:
    """The made-up forge's own widening rule: sharing becomes more open than it is now."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        return "sharing" in args

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        if "sharing" not in args:
            return frozenset()
        now = _OPENNESS.get((current or {}).get("sharing", "owner"), 0)
        return frozenset({"opens_the_gate"}) if _OPENNESS[args["sharing"]] > now else frozenset()


GARDEN_RULES = {"opens_the_gate": OpensTheGate()}


def test_the_guard_package_imports_nothing_of_woodpecker() -> None:
    for source in GUARD_PACKAGE.glob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any("woodpecker" in name for name in names), source.name
        assert "woodpecker" not in source.read_text().lower().replace("woodpecker-ci-mcp", ""), source.name


def test_policy_applies_to_another_forges_tools() -> None:
    list_beds, dig_up_bed, update_garden = GARDEN_FORGE
    assert decide(list_beds, {"garden_id": 1}, None, GARDEN_RULES) == Decision(False, frozenset())
    assert decide(dig_up_bed, {"garden_id": 1, "bed": 2}, None, GARDEN_RULES).reasons == {ALWAYS}
    args = {"garden_id": 1, "sharing": "everyone"}
    assert needs_current(update_garden, args, GARDEN_RULES)
    assert decide(update_garden, args, {"sharing": "friends"}, GARDEN_RULES).reasons == {"opens_the_gate"}
    assert not decide(update_garden, args, {"sharing": "everyone"}, GARDEN_RULES).ask
    assert not decide(
        update_garden, {"garden_id": 1, "sharing": "owner"}, {"sharing": "friends"}, GARDEN_RULES
    ).ask
    assert covers(frozenset({"opens_the_gate"}), decide(update_garden, args, None, GARDEN_RULES).reasons)


def test_fingerprints_bind_another_forges_targets_in_order_and_its_body() -> None:
    dig_up_bed, update_garden = GARDEN_FORGE.get("dig_up_bed"), GARDEN_FORGE.get("update_garden")
    assert fingerprint(dig_up_bed, {"garden_id": 3, "bed": 4}, None) != fingerprint(
        dig_up_bed, {"garden_id": 4, "bed": 3}, None
    )
    assert fingerprint(update_garden, {"garden_id": 3, "sharing": "friends"}, "p") != fingerprint(
        update_garden, {"garden_id": 3, "sharing": "everyone"}, "p"
    )


def test_tokens_and_seals_work_unchanged_for_another_forge() -> None:
    clock = FakeClock()
    dig_up_bed = GARDEN_FORGE.get("dig_up_bed")
    fp = fingerprint(dig_up_bed, {"garden_id": 3, "bed": 4}, None)
    other = fingerprint(dig_up_bed, {"garden_id": 4, "bed": 3}, None)

    confirmations = Confirmations(InMemoryTokenStore(now=clock.now), clock, FakeRandomness())

    async def two_calls() -> tuple[RedeemOutcome, RedeemOutcome, RedeemOutcome]:
        token = await confirmations.issue(fp)
        return (
            await confirmations.redeem(other, token),
            await confirmations.redeem(fp, token),
            await confirmations.redeem(fp, token),
        )

    assert asyncio.run(two_calls()) == (
        RedeemOutcome.REJECTED,
        RedeemOutcome.ACCEPTED,
        RedeemOutcome.REJECTED,
    )

    questions = SealedQuestions(
        HmacSealer([b"k" * 32]), clock, FakeRandomness(), InMemoryTokenStore(now=clock.now)
    )
    state = questions.issue("dig_up_bed", fp, None, frozenset({ALWAYS}))
    opened = questions.open(state, tool="dig_up_bed", fingerprint=fp, principal=None)
    assert opened is not None
    assert questions.open(state, tool="dig_up_bed", fingerprint=other, principal=None) is None

    async def act_twice() -> tuple[bool, bool]:
        return await questions.consume(opened), await questions.consume(opened)

    assert asyncio.run(act_twice()) == (True, False)


def test_another_forge_writes_its_questions_with_the_same_builder() -> None:
    message = build(
        "This will dig up bed 4 of garden 3.", ["What grew there is gone."], [labelled("Note", "a\nb")]
    ).message
    assert message == "This will dig up bed 4 of garden 3.\nNote: a b\n\nWhat grew there is gone."
