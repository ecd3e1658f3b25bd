"""The guard's own words (domain/guard/outcomes.py): the same text in content and in structuredContent,
and every fact a client needs to act on, for any tool name, token and question."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.guard import outcomes

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
no_dialogs = st.sampled_from(["client", "server", "connection"])


@given(token=st.text(min_size=1, max_size=60), question=st.text(max_size=200), who=no_dialogs)
def test_a_token_answer_says_what_the_second_call_does_and_that_nobody_approved(
    token: str, question: str, who: outcomes.NoDialog
) -> None:
    result = outcomes.token_issued(token, no_dialog=who, question=question, ttl_seconds=300)
    assert not result.is_error
    assert result.structured["message"] == result.text
    assert result.structured["confirm_token"] == token and f'confirm_token: "{token}"' in result.text
    assert result.structured["done"] is False and result.structured["outcome"] == "confirmation_required"
    assert result.structured["not_asked_by"] == ("client" if who == "client" else "server")
    assert result.structured["expires_in_seconds"] == 300 and "for 5 minutes" in result.text
    # "this same tool": a gateway may list it under another name than ours.
    assert "call this same tool again" in result.text and question in result.text
    assert result.text.startswith("Nothing was done yet.") and "nobody was asked" in result.text
    assert "does not show that a person saw or approved anything" in result.text


@given(cancelled=st.booleans())
def test_a_no_is_not_an_error_and_says_the_tool_did_not_run(cancelled: bool) -> None:
    result = outcomes.declined(cancelled=cancelled)
    assert not result.is_error and result.structured["done"] is False
    assert result.structured["outcome"] == ("cancelled" if cancelled else "declined")
    assert result.structured["message"] == result.text
    assert result.text.endswith("so this tool was not run.")


def test_a_client_without_the_capability_is_named_with_any_gateway_between_it_and_the_person() -> None:
    text = outcomes.token_issued("t" * 32, no_dialog="client", question="q", ttl_seconds=300).text
    assert (
        "The client connected to this server, or a gateway between it and the person, did not declare "
        "the elicitation capability" in text
    )
    assert "This client did not declare" not in text
    server = outcomes.token_issued("t" * 32, no_dialog="server", question="q", ttl_seconds=300).text
    assert "This server was started with ELICITATION=false" in server and "gateway" not in server


@pytest.mark.parametrize("cause", ["error", "timeout", "malformed"])
def test_no_answer_is_not_the_persons_no(cause: outcomes.NoAnswer) -> None:
    result = outcomes.no_answer(cause)
    assert not result.is_error and result.structured["done"] is False
    assert result.structured["outcome"] == "no_answer" and result.structured["cause"] == cause
    assert result.structured["message"] == result.text
    assert result.text.startswith("No answer came back: ")
    assert "Nobody approved or declined it" in result.text and "this tool was not run" in result.text
    assert "Declined" not in result.text and "did not approve" not in result.text
    assert ("timed out" in result.text) == (cause == "timeout")


def test_a_rejected_token_names_the_shared_store_only_when_tokens_live_in_this_process() -> None:
    shared = outcomes.token_rejected()
    local = outcomes.token_rejected(local_store="SETTING to a redis:// URL")
    assert shared.text.startswith(local.text[: len(shared.text)]) and local.text != shared.text
    assert "process" not in shared.text and "token_store" not in shared.structured
    assert "calls reach other processes, each with its own tokens in memory" in local.text
    assert "retrying cannot help: set SETTING to a redis:// URL." in local.text
    assert local.structured["token_store"] == "process_memory"
    for result in (shared, local):
        assert (
            "confirm_token is wrong, expired, used, or for other arguments; no new one was issued"
            in result.text
        )
        assert "Call this same tool again without confirm_token" in result.text
        assert "was run" not in result.text and "approved" not in result.text


def test_every_refusal_is_an_error_that_says_nothing_was_done() -> None:
    for result in (
        outcomes.token_rejected(),
        outcomes.token_rejected(local_store="X"),
        outcomes.kept_changing(),
        outcomes.changed_since_token(),
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
