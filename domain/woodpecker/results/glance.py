"""A list at a glance: each entry keeps the fields a person acts on, and the summary counts the
pipelines that need a look, by id (docs/adr/0070)."""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from domain.woodpecker.answers import Glance, Kept

SUBJECT = 72  # characters of a pipeline's subject
_YEAR_10000 = 253_402_300_800  # Unix seconds past what datetime can write
NAMED = 5  # pipelines named per status in a summary
# The statuses a summary counts, in its order, with the words it says them in; other statuses
# (success, skipped, canceled, declined, created) are in the data only.
_WORTH_A_LOOK: tuple[tuple[str, frozenset[str]], ...] = (
    ("failed", frozenset({"failure", "error"})),
    ("killed", frozenset({"killed"})),  # stopped by a cancel: not the build's failure
    ("blocked (awaiting approval)", frozenset({"blocked"})),
    ("running or pending", frozenset({"running", "pending"})),
)


def iso(seconds: int) -> str:
    """Unix seconds as ISO 8601 UTC, to the second: 2025-10-10T16:16:40Z."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


PIPELINE_TIMES = ("created", "updated", "started", "finished")  # of a pipeline, its workflows and steps


def with_times(obj: Mapping[str, Any], keys: tuple[str, ...] = PIPELINE_TIMES) -> dict[str, Any]:
    """A copy of `obj` with `<key>_at` (ISO 8601 UTC) after each of its `keys` that holds Unix seconds."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        out[key] = value
        if key in keys and _is_id(value) and value < _YEAR_10000:
            out[f"{key}_at"] = iso(value)
    return out


def at_a_glance(entry: Any, glance: Glance) -> Any:
    """The entry with only the glance's fields (a value Woodpecker left empty is left out)."""
    if not isinstance(entry, Mapping):
        return entry
    out: dict[str, Any] = {}
    for kept in glance.fields:
        _keep(out, kept, entry)
    for key, inner in glance.nested:
        value = entry.get(key)
        if isinstance(value, Mapping) and (shown := at_a_glance(value, inner)):
            out[key] = shown
    return out


def _keep(out: dict[str, Any], kept: Kept, entry: Mapping[str, Any]) -> None:
    values = [entry.get(source) for source in kept.sources or (kept.name,)]
    value = values[0]
    if kept.kind in ("id", "time"):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[kept.name] = value
            if kept.kind == "time" and value < _YEAR_10000:
                out[f"{kept.name}_at"] = iso(value)
    elif kept.kind == "boolean":
        if isinstance(value, bool):
            out[kept.name] = value
    elif kept.kind == "flag":
        if value is True:
            out[kept.name] = True
    elif kept.kind == "ref":
        branch = entry.get("branch")
        if isinstance(value, str) and value and value not in (branch, f"refs/heads/{branch}"):
            out[kept.name] = value  # a pull request's or a tag's: a branch's own ref says nothing more
    elif kept.kind == "subject":
        text = next((v for v in values if isinstance(v, str) and v.strip()), None)
        if text is not None:
            line = text.strip().splitlines()[0].strip()
            out[kept.name] = line if len(line) <= SUBJECT else line[: SUBJECT - 1] + "…"
    elif isinstance(value, str) and value:
        out[kept.name] = value


def statuses(entries: Sequence[Any], glance: Glance, repo_id: Any) -> str:
    """The pipelines worth a look among `entries`, by status, each as `pipeline N of repository R`
    (ids only: nothing pushed), e.g. "1 failed: pipeline 4 of repository 3" ("2 failed: pipelines 2, 1"
    for one repository's list); "" when there are none."""
    groups: dict[str, list[str]] = {words: [] for words, _ in _WORTH_A_LOOK}
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        pipeline = entry if glance.pipeline is None else entry.get(glance.pipeline)
        if not isinstance(pipeline, Mapping):
            continue
        repo = repo_id if glance.repo is None else entry.get(glance.repo)
        number, status = pipeline.get("number"), pipeline.get("status")
        if not (_is_id(number) and _is_id(repo)):
            continue
        for words, members in _WORTH_A_LOOK:
            if status in members:
                groups[words].append(
                    str(number) if glance.repo is None else f"pipeline {number} of repository {repo}"
                )
    said = []
    for words, named in groups.items():
        if named:
            more = f" and {len(named) - NAMED} more" if len(named) > NAMED else ""
            listed = ", ".join(named[:NAMED])
            if glance.repo is None:  # one repository's pipelines, which the summary names before
                listed = f"{'pipeline' if len(named) == 1 else 'pipelines'} {listed}"
            said.append(f"{len(named)} {words}: {listed}{more}")
    return "; ".join(said)


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
