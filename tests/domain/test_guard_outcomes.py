"""The guard's own words (domain/guard/outcomes.py): the same text in content and in structuredContent,
and every fact a client needs to act on, for any tool name, token and question."""

from hypothesis import given
from hypothesis import strategies as st

from domain.guard import outcomes

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
no_dialogs = st.sampled_from(["client", "server", "connection"])


@given(tool=names, token=st.text(min_size=1, max_size=60), question=st.text(max_size=200), who=no_dialogs)
def test_a_token_answer_says_what_the_second_call_does_and_that_nobody_approved(
    tool: str, token: str, question: str, who: outcomes.NoDialog
) -> None:
    result = outcomes.token_issued(tool, token, no_dialog=who, question=question, ttl_seconds=300)
    assert not result.is_error
    assert result.structured["message"] == result.text
    assert result.structured["confirm_token"] == token and f'confirm_token: "{token}"' in result.text
    assert result.structured["done"] is False and result.structured["outcome"] == "confirmation_required"
    assert result.structured["not_asked_by"] == ("client" if who == "client" else "server")
    assert result.structured["expires_in_seconds"] == 300 and "for 5 minutes" in result.text
    assert f"call {tool} again" in result.text and question in result.text
    assert result.text.startswith("Nothing was done yet.") and "nobody was asked" in result.text
    assert "does not show that a person saw or approved anything" in result.text


@given(tool=names, cancelled=st.booleans())
def test_a_no_is_not_an_error_and_names_the_tool_that_did_not_run(tool: str, cancelled: bool) -> None:
    result = outcomes.declined(tool, cancelled=cancelled)
    assert not result.is_error and result.structured["done"] is False
    assert result.structured["outcome"] == ("cancelled" if cancelled else "declined")
    assert result.structured["message"] == result.text
    assert result.text.endswith(f"so {tool} was not run.")


@given(tool=names)
def test_every_refusal_is_an_error_that_says_nothing_was_done(tool: str) -> None:
    for result in (
        outcomes.token_rejected(tool),
        outcomes.kept_changing(tool),
        outcomes.changed_since_token(tool),
        outcomes.read_failed("Woodpecker answered 500.", again=False),
        outcomes.read_failed("Woodpecker answered 500.", again=True),
    ):
        assert result.is_error and result.text.startswith("Nothing was done: ")
        assert result.structured["error"]["message"] == result.text
    assert "re-reading" in outcomes.read_failed("x", again=True).text
    assert "re-reading" not in outcomes.read_failed("x").text


def test_an_unknown_name_is_shown_flat_and_short() -> None:
    result = outcomes.unknown_tool("evil\nname" + "x" * 200)
    assert result.is_error and result.structured["error"]["kind"] == "unknown_tool"
    assert "\n" not in result.text.split(".")[0] and len(result.text) < 160
