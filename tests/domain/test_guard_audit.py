"""The audit record: ids and digests only, never a secret name, token or Woodpecker text."""

import json

from hypothesis import given
from hypothesis import strategies as st

from domain.guard.audit import audit_event

FP = "0123456789abcdef" * 4


def test_an_audit_record_has_utc_time_ids_short_fingerprint_path_outcome_and_principal() -> None:
    event = audit_event(
        now=1_700_000_000.25,
        tool="delete_secret",
        targets={"scope": "repository", "repo_id": 21, "org_id": None, "name": "DEPLOY_KEY"},
        fingerprint=FP,
        path="token",
        outcome="token_issued",
        principal="ab" * 32,
    )
    assert event["time"] == "2023-11-14T22:13:20.250Z"
    assert (
        event["tool"] == "delete_secret" and event["path"] == "token" and event["outcome"] == "token_issued"
    )
    assert event["fingerprint"] == FP[:12] and event["principal"] == "ab" * 6
    targets = event["targets"]
    assert isinstance(targets, dict)
    assert targets["scope"] == "repository" and targets["repo_id"] == 21 and targets["org_id"] is None
    assert str(targets["name"]).startswith("sha256:") and "DEPLOY_KEY" not in json.dumps(event)


def _targets(tool: str, **targets: object) -> dict[str, object]:
    """The targets of a record that asks about `targets` (the rest of the record is fixed)."""
    event = audit_event(
        now=0.0, tool=tool, targets=targets, fingerprint=FP, path="dialog", outcome="asked", principal=None
    )
    json.dumps(event)
    shown = event["targets"]
    assert isinstance(shown, dict)
    return shown


@given(st.text(min_size=1), st.sampled_from(["name", "address", "login", "to"]))
def test_a_string_target_is_kept_only_as_a_short_digest(value: str, key: str) -> None:
    shown = _targets("t", **{key: value})[key]
    assert isinstance(shown, str) and shown.startswith("sha256:") and len(shown) == len("sha256:") + 12


def test_a_scope_is_kept_as_a_word_but_odd_scope_text_is_digested() -> None:
    assert _targets("t", scope="organization")["scope"] == "organization"
    assert str(_targets("t", scope="Approve pipeline 42")["scope"]).startswith("sha256:")


@given(st.text(min_size=1).filter(lambda p: not any(c in p for c in "/?#@")), st.sampled_from(["", "user:"]))
def test_a_url_target_is_digested_without_its_password(password: str, user: str) -> None:
    """create_forge's url may carry `user:password@`: the digest must not let anyone test a guess of it."""

    def digest(url: str) -> object:
        return _targets("create_forge", url=url)["url"]

    with_password = digest(f"https://{user}{password}@git.example/api")
    assert with_password == digest("https://someone:other@git.example/api")
    assert with_password != digest("https://git.example/api") != digest("https://git.other.example/api")
