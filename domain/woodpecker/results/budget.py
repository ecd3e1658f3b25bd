"""The byte budget of a result: whole list entries are left out first, so the JSON always stays whole."""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from domain.woodpecker.results.text import cut

# Bytes on the wire per result: the structured content and the text that repeats it, together
# (see render.fit and docs/adr/0022). A client that reads one of the two sees about half.
RESULT_BUDGET = 60_000
# get_step_logs, read into a model's context whole: a default window of 200 typical CI lines fits.
LOG_BUDGET = 48_000


def size(value: Any) -> int:
    """Bytes of `value` as compact JSON."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def fit_prefix(
    envelope: Mapping[str, Any], key: str, items: Sequence[Any], budget: int, narrow: str
) -> dict[str, Any]:
    """The envelope with the longest prefix of `items` under `budget` bytes; what was left out is
    counted in `dropped` and explained in `note`. Entries are never cut, so the JSON stays whole."""

    def build(k: int) -> dict[str, Any]:
        out = dict(envelope)
        out[key] = list(items[:k])
        out["count"] = k
        if k < len(items):
            out["dropped"] = len(items) - k
            cut = f"{len(items) - k} of {len(items)} entries left out to stay under {budget} bytes; {narrow}"
            out["note"] = f"{envelope['note']} {cut}" if "note" in envelope else cut
        return out

    # Estimate from each entry's size (an entry costs its JSON plus a comma), measuring only the
    # entries up to the budget: a 4 MiB answer costs a budget's worth of work, however often
    # it is fitted.
    room = budget - size(build(0)) - 24  # slack for the digits of count and dropped
    k = 0
    for entry in items:
        room -= size(entry) + 1
        if room < 0:
            break
        k += 1
    if k == len(items):
        full = build(k)
        if size(full) <= budget:
            return full
    while k > 0 and size(build(k)) > budget:
        k -= 1
    return build(k)


def _lists(value: Any, path: str) -> list[tuple[str, list[Any]]]:
    found: list[tuple[str, list[Any]]] = []
    if isinstance(value, list):
        found.append((path, value))
        for i, item in enumerate(value):
            if isinstance(item, list | dict):  # only these hold lists: no path for the others
                found.extend(_lists(item, f"{path}[{i}]"))
    elif isinstance(value, dict):
        for k, item in value.items():
            if isinstance(item, list | dict):
                found.extend(_lists(item, f"{path}.{k}"))
    return found


def copied(value: Any) -> Any:
    """A JSON value with its own dicts and lists all the way down (what fit_object trims in place);
    strings, numbers and the rest are shared, as they cannot change."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    return value


def _strings(value: Any) -> list[tuple[Any, Any, int]]:
    found: list[tuple[Any, Any, int]] = []
    items: list[tuple[Any, Any]] = (
        list(value.items())
        if isinstance(value, dict)
        else list(enumerate(value))
        if isinstance(value, list)
        else []
    )
    for k, item in items:
        if isinstance(item, str):
            found.append((value, k, len(item)))
        else:
            found.extend(_strings(item))
    return found


def fit_object(envelope: dict[str, Any], key: str, budget: int) -> dict[str, Any]:
    """The envelope under `budget` bytes: the largest inner lists lose entries from their end, then
    the longest strings are shortened; each cut is recorded in `trimmed`."""
    if size(envelope) <= budget:
        return envelope
    records: dict[str, dict[str, Any]] = {}
    envelope["trimmed"] = []
    margin = 200  # room for the trimmed records themselves
    for _ in range(64):
        envelope["trimmed"] = list(records.values())
        excess = size(envelope) - budget
        if excess <= 0:
            return envelope
        lists = [(size(lst), p, lst) for p, lst in _lists(envelope[key], key) if lst]
        if not lists:
            break
        total, path, biggest = max(lists, key=lambda s: s[0])
        # The shortest tail to leave out frees at least excess + margin bytes. A list's JSON is its
        # brackets and each entry's JSON with a comma, so that tail starts after the longest prefix
        # taking at most total - 1 - (excess + margin) of them, which is read from the front:
        # the work is what is kept, not what is left out (the 4 MiB answer, the 60 KB budget).
        room = total - 1 - (excess + margin)
        keep = used = 0
        for entry in biggest:
            used += size(entry) + 1
            if used > room:
                break
            keep += 1
        record = records.setdefault(path, {"path": path, "dropped": 0})
        record["dropped"] += len(biggest) - keep
        del biggest[keep:]
    for _ in range(64):
        envelope["trimmed"] = list(records.values())
        excess = size(envelope) - budget
        if excess <= 0:
            return envelope
        strings = _strings(envelope[key])
        if not strings:
            break
        holder, k, length = max(strings, key=lambda s: s[2])
        if length <= 64:
            break
        keep = max(32, length - excess - margin)
        holder[k] = cut(holder[k], keep)
        path = f"{key} (field {k})"
        record = records.setdefault(path, {"path": path, "cut_characters": 0})
        record["cut_characters"] += length - keep
    envelope["trimmed"] = list(records.values())
    if size(envelope) > budget:
        envelope[key] = {}
        envelope["trimmed"] = [{"path": key, "dropped": 1}]
        envelope["note"] = f"The answer was too large to return (over {budget} bytes) even after trimming."
    return envelope
