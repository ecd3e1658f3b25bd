"""The guard knows no Woodpecker: a made-up forge gets policy, fingerprints, tokens, seals and the whole guarded-call use case unchanged."""

import ast
import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.hmac_sealer import HmacFingerprintKeys, HmacSealer
from adapters.memory_token_store import InMemoryTokenStore
from domain.arguments import ArgumentError, validate
from domain.calls import ValidCall
from domain.guard.fingerprint import fingerprint
from domain.guard.policy import ALWAYS, Decision, covers, decide, needs_current
from domain.guard.question import build, labelled
from domain.tools import Annotations, Catalogue, GuardRule, Param, ToolSpec
from ports.asker import Answer
from ports.credential import Credential
from ports.forge import NOTHING_FOUND, Forge, ForgeError, InvalidArguments, Prelude, ToolResult
from ports.use_cases.confirmations import Confirmations, RedeemOutcome
from ports.use_cases.guarded import CallContext, CallOutcome, Complete, GuardedCalls, NeedInput
from ports.use_cases.sealed_questions import SealedQuestions
from tests.fakes.asker import Says
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
CONFIRM = Param("confirm_token", "string", False, "The token a first call returned.", sensitive=True)

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
            CONFIRM,
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
            CONFIRM,
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


# --------------------------------------------------------------------------------------------------
# The whole guarded-call use case (push dialog, sealed answer, two-call token, the re-check, the
# audit) driven end to end for the made-up forge: its catalogue, rules, questions and a fake gateway.


class GardenUnreachable(ForgeError):
    """The made-up forge's own failure: its guarded calls do nothing when a read fails."""


class GardenGateway:
    """A fake gardens API: gardens in memory, every request recorded."""

    def __init__(self) -> None:
        self.gardens: dict[int, dict[str, Any]] = {3: {"sharing": "friends", "beds": {4: "tomatoes"}}}
        self.requests: list[tuple[str, int]] = []
        self.down = False

    def get(self, garden_id: int) -> Mapping[str, Any]:
        self.requests.append(("GET", garden_id))
        if self.down:
            raise GardenUnreachable("the gardens API did not answer; try again later.")
        return dict(self.gardens[garden_id])

    def dig_up(self, garden_id: int, bed: int) -> None:
        self.requests.append(("DELETE", garden_id))
        self.gardens[garden_id]["beds"].pop(bed, None)

    def share(self, garden_id: int, sharing: str) -> None:
        self.requests.append(("PATCH", garden_id))
        self.gardens[garden_id]["sharing"] = sharing

    @property
    def writes(self) -> list[tuple[str, int]]:
        return [r for r in self.requests if r[0] != "GET"]


class GardenCalls:
    """The made-up forge's ForgeCalls: the shared argument validator, its own requests."""

    def __init__(self, gateway: GardenGateway) -> None:
        self.gateway = gateway

    def prepare(self, tool: str, arguments: Mapping[str, Any] | None) -> ValidCall:
        spec = GARDEN_FORGE.get(tool)
        try:
            return ValidCall(spec, validate(spec, arguments))
        except ArgumentError as e:
            raise InvalidArguments(str(e)) from None

    def setup_for(self, credential: Credential | None) -> str | None:
        return None

    async def current(self, call: ValidCall, credential: Credential | None) -> Mapping[str, Any] | None:
        return self.gateway.get(call.args["garden_id"]) if "sharing" in call.args else None

    async def check(self, call: ValidCall, credential: Credential | None) -> ToolResult | None:
        return None

    async def before_asking(self, call: ValidCall, credential: Credential | None) -> Prelude:
        return NOTHING_FOUND

    async def execute(self, call: ValidCall, credential: Credential | None) -> ToolResult:
        args = call.args
        if call.tool == "dig_up_bed":
            self.gateway.dig_up(args["garden_id"], args["bed"])
        elif call.tool == "update_garden" and "sharing" in args:
            self.gateway.share(args["garden_id"], args["sharing"])
        garden = self.gateway.get(args["garden_id"])
        return ToolResult({"beds": sorted(garden["beds"]), "sharing": garden["sharing"]}, "done")


def garden_question(spec: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    if spec.name == "dig_up_bed":
        what = f"This will dig up bed {args['bed']} of garden {args['garden_id']}."
        return build(what, ["What grew there is gone."]).message
    return build(
        f"This will let {args['sharing']} visit garden {args['garden_id']}.", ["Visitors may pick."]
    ).message


class KeptAudit:
    def __init__(self) -> None:
        self.events: list[Mapping[str, object]] = []

    def record(self, event: Mapping[str, object]) -> None:
        self.events.append(dict(event))

    def require(self, event: Mapping[str, object]) -> None:
        self.record(event)

    @property
    def outcomes(self) -> list[object]:
        return [e["outcome"] for e in self.events]


@dataclass
class Garden:
    gateway: GardenGateway
    audit: KeptAudit
    guarded: GuardedCalls

    def call(self, tool: str, args: Mapping[str, Any], ctx: CallContext) -> CallOutcome:
        return asyncio.run(self.guarded.call(tool, args, ctx))


def garden() -> Garden:
    clock, gateway, audit = FakeClock(), GardenGateway(), KeptAudit()
    store = InMemoryTokenStore(now=clock.now)
    forge = Forge(GARDEN_FORGE, GARDEN_RULES, garden_question, GardenCalls(gateway))
    guarded = GuardedCalls(
        forge,
        Confirmations(store, clock, FakeRandomness()),
        SealedQuestions(HmacSealer([b"k" * 32]), clock, FakeRandomness(), store),
        audit,
        clock,
        keys=HmacFingerprintKeys([b"k" * 32]),
        elicitation_enabled=True,
        view_uri="ui://garden/approval",
    )
    return Garden(gateway, audit, guarded)


DIG = {"garden_id": 3, "bed": 4}
DIG_QUESTION = "This will dig up bed 4 of garden 3.\n\nWhat grew there is gone."


def _result(outcome: CallOutcome) -> ToolResult:
    assert isinstance(outcome, Complete), outcome
    return outcome.result


def test_a_yes_in_the_dialog_runs_another_forges_call_and_the_audit_says_so() -> None:
    g, says = garden(), Says(Answer("accept", True))
    result = _result(g.call("dig_up_bed", DIG, CallContext("ann", None, "push", asker=says)))
    assert not result.is_error and result.structured["beds"] == []
    assert says.questions == [DIG_QUESTION]
    assert g.audit.outcomes == ["asked", "approved", "executed"]
    assert {e["tool"] for e in g.audit.events} == {"dig_up_bed"}
    assert g.audit.events[0]["targets"] == DIG


def test_a_no_in_the_dialog_sends_no_write_to_another_forge() -> None:
    g = garden()
    for answer, outcome in ((Answer("decline"), "declined"), (Answer("cancel"), "cancelled")):
        result = _result(g.call("dig_up_bed", DIG, CallContext(None, None, "push", asker=Says(answer))))
        assert result.structured["outcome"] == outcome and result.structured["done"] is False
    assert g.gateway.writes == [] and g.gateway.gardens[3]["beds"] == {4: "tomatoes"}
    assert g.audit.outcomes == ["asked", "declined", "asked", "cancelled"]


def test_another_forges_two_call_token_works_once_for_these_arguments_only() -> None:
    g, ctx = garden(), CallContext(None, None, "token")
    first = _result(g.call("dig_up_bed", DIG, ctx)).structured
    assert first["outcome"] == "confirmation_required" and g.gateway.writes == []
    assert DIG_QUESTION in first["message"]
    token = first["confirm_token"]
    other = _result(g.call("dig_up_bed", {"garden_id": 3, "bed": 5, "confirm_token": token}, ctx))
    assert other.structured["error"]["kind"] == "token_rejected" and g.gateway.writes == []
    assert not _result(g.call("dig_up_bed", {**DIG, "confirm_token": token}, ctx)).is_error
    assert g.gateway.writes == [("DELETE", 3)]
    again = _result(g.call("dig_up_bed", {**DIG, "confirm_token": token}, ctx))
    assert again.structured["error"]["kind"] == "token_rejected" and g.gateway.writes == [("DELETE", 3)]
    assert g.audit.outcomes == ["token_issued", "token_rejected", "approved", "executed", "token_rejected"]


def test_another_forges_sealed_answer_runs_once_and_a_replayed_seal_gets_a_fresh_question() -> None:
    g = garden()
    asked = g.call("dig_up_bed", DIG, CallContext(None, None, "mrtr"))
    assert isinstance(asked, NeedInput) and asked.message == DIG_QUESTION
    yes = CallContext(None, None, "mrtr", answer=Answer("accept", True), request_state=asked.request_state)
    assert not _result(g.call("dig_up_bed", DIG, yes)).is_error
    assert g.gateway.writes == [("DELETE", 3)]

    g.gateway.gardens[3]["beds"][4] = "beans"  # replanted: the old answer must not dig it up again
    replayed = g.call("dig_up_bed", DIG, yes)
    assert isinstance(replayed, NeedInput) and replayed.request_state != asked.request_state
    assert g.gateway.writes == [("DELETE", 3)] and g.gateway.gardens[3]["beds"] == {4: "beans"}
    # A seal for other arguments is no answer for these: asked again, nothing done.
    moved = g.call("dig_up_bed", {"garden_id": 3, "bed": 5}, yes)
    assert isinstance(moved, NeedInput) and g.gateway.writes == [("DELETE", 3)]
    no = CallContext(None, None, "mrtr", answer=Answer("decline"), request_state=replayed.request_state)
    assert _result(g.call("dig_up_bed", DIG, no)).structured["outcome"] == "declined"
    assert g.audit.outcomes == [
        "asked", "approved", "executed", "seal_rejected", "asked", "seal_rejected", "asked", "declined",
    ]  # fmt: skip


def test_another_forges_rule_decides_from_the_stored_object_and_a_failed_read_does_nothing() -> None:
    g, says = garden(), Says(Answer("accept", True))
    ctx = CallContext(None, None, "push", asker=says)
    narrower = _result(g.call("update_garden", {"garden_id": 3, "sharing": "owner"}, ctx))
    assert narrower.structured["sharing"] == "owner" and says.questions == []
    wider = _result(g.call("update_garden", {"garden_id": 3, "sharing": "everyone"}, ctx))
    assert wider.structured["sharing"] == "everyone"
    assert says.questions == ["This will let everyone visit garden 3.\n\nVisitors may pick."]
    # Read before deciding, and read again right before the write.
    assert g.gateway.requests[-4:] == [("GET", 3), ("GET", 3), ("PATCH", 3), ("GET", 3)]

    g.gateway.gardens[3]["sharing"], g.gateway.down = "owner", True
    failed = _result(g.call("update_garden", {"garden_id": 3, "sharing": "friends"}, ctx))
    assert failed.structured["error"]["kind"] == "read_failed"
    assert "the gardens API did not answer" in failed.text
    assert g.gateway.gardens[3]["sharing"] == "owner" and len(says.questions) == 1


def test_another_forges_unknown_tool_and_bad_arguments_are_answered_without_a_request() -> None:
    g = garden()
    ctx = CallContext(None, None, "push", asker=Says(Answer("accept", True)))
    unknown = _result(g.call("plant_tree", {}, ctx))
    assert unknown.structured["error"]["kind"] == "unknown_tool"
    bad = _result(g.call("dig_up_bed", {"garden_id": "three", "bed": 4}, ctx))
    assert bad.structured["error"]["kind"] == "invalid_arguments"
    assert g.gateway.requests == [] and g.audit.events == []
