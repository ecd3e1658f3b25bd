"""A view's ticket and a two-call token live in one store: their bindings never meet (ADR 0049)."""

from hypothesis import given
from hypothesis import strategies as st

from ports.use_cases.guarded import ticket_binding, token_binding

FINGERPRINTS = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
REASONS = st.frozensets(st.text(min_size=1, max_size=20), max_size=4)


@given(FINGERPRINTS, REASONS, FINGERPRINTS, REASONS)
def test_no_ticket_binding_is_any_token_binding(
    fp: str, reasons: frozenset[str], other: str, more: frozenset[str]
) -> None:
    assert ticket_binding(fp, reasons) != token_binding(fp, reasons)
    assert ticket_binding(fp, reasons) != token_binding(other, more)
    assert len(ticket_binding(fp, reasons)) == 64


@given(FINGERPRINTS, REASONS, REASONS)
def test_a_ticket_binding_changes_with_the_reasons_shown(
    fp: str, shown: frozenset[str], now: frozenset[str]
) -> None:
    assert (ticket_binding(fp, shown) == ticket_binding(fp, now)) == (shown == now)
