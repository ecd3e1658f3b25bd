"""An approval view's ticket record (ADR 0066): what the store keeps reads back as written, anything
else reads as no record, and a view is told open, expired, unknown or what was decided."""

from hypothesis import given
from hypothesis import strategies as st

from domain.calls import ToolResult
from domain.guard import outcomes
from domain.guard.tokens import digest
from domain.guard.view_ticket import (
    DECIDED,
    DecidedTicket,
    OpenTicket,
    TicketRecord,
    decode,
    encode,
    ended,
    record_key,
    view_state,
)

bindings = st.text(alphabet="0123456789abcdef", min_size=1, max_size=64)
records: st.SearchStrategy[TicketRecord] = st.one_of(
    st.builds(OpenTicket, st.floats(allow_nan=False, allow_infinity=False), bindings),
    st.builds(DecidedTicket, st.sampled_from(DECIDED)),
    st.builds(DecidedTicket, st.just("changed"), st.builds(record_key, st.text(min_size=1))),
)


@given(records)
def test_a_record_reads_back_as_it_was_written(record: TicketRecord) -> None:
    assert decode(encode(record)) == record


@given(st.one_of(st.text(), st.none(), st.integers(), st.binary()))
def test_anything_else_reads_as_no_record_or_a_well_formed_one_and_never_raises(value: object) -> None:
    record = decode(value)
    assert record is None or decode(encode(record)) == record


def test_what_is_not_a_record_is_none() -> None:
    for value in (
        "",
        "open",
        "open|x|b",
        "open|1.0|",
        "open|nan|b",
        "open|inf|b",
        "ran|x",
        "declined|k",
        "opened",
    ):
        assert decode(value) is None, value
    assert decode("changed|k") == DecidedTicket("changed", "k")


@given(st.floats(min_value=0, max_value=1e9), st.floats(min_value=-1e6, max_value=1e6))
def test_an_open_ticket_is_open_while_a_whole_second_is_left_then_expired(now: float, left: float) -> None:
    whole = int((now + left) - now)
    expected = ("open", whole) if whole >= 1 else ("expired", None)
    assert view_state(OpenTicket(now + left, "b"), now) == expected


def test_a_decided_ticket_says_what_was_decided_and_no_record_is_unknown() -> None:
    for state in DECIDED:
        assert view_state(DecidedTicket(state), 0.0) == (state, None)
    assert view_state(None, 0.0) == ("unknown", None)


def test_a_record_is_named_by_the_tickets_digest_under_a_label_of_its_own() -> None:
    ticket = "0123456789abcdef" * 2
    assert record_key(ticket) == "app-ticket-record:" + digest(ticket)
    assert ticket not in record_key(ticket)


def test_how_an_approved_call_ended_is_read_from_its_result_never_guessed_in_its_favour() -> None:
    assert ended(ToolResult(structured={"id": 1}, text="done")) == "ran"
    # An error that says nothing was sent (a failed re-read, an unreachable store): not run.
    assert ended(outcomes.read_failed("Woodpecker answered 500.", again=True)) == "not_run"
    assert ended(outcomes.store_unavailable("Redis is down.")) == "not_run"
    # Any other error may have come after the write reached Woodpecker: failed, never "not run".
    assert ended(outcomes.error_result("server_error", "Woodpecker answered 502.")) == "failed"
    assert ended(ToolResult(structured={"done": True}, text="x", is_error=True)) == "failed"


def test_an_approved_call_whose_outcome_is_unknown_is_recorded_as_unsettled_never_failed() -> None:
    # ADR 0080: the write may have reached the forge; the view says so rather than "an error".
    unknown = ToolResult(structured={"outcome": "unknown"}, text="x", is_error=True, unknown="approved")
    assert ended(unknown) == "unsettled"
    assert decode(encode(DecidedTicket("unsettled"))) == DecidedTicket("unsettled")
    assert "outcome is unknown" in outcomes.view_state("unsettled").text
