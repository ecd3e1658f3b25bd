#!/usr/bin/env python3
"""Render docs/tools.md from the domain catalogue, so the reference can never drift from the code.

    python scripts/render_tool_reference.py           rewrite docs/tools.md
    python scripts/render_tool_reference.py --check   exit 1 when docs/tools.md differs

The catalogue (`domain.woodpecker.catalogue.WOODPECKER_TOOLS`) is the single source; edit it,
never the Markdown. The output is deterministic: no dates, no versions, no machine paths.
"""

import argparse
import difflib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Run as a plain script, the checkout may not be on sys.path (an editable install puts it
# there, a bare `python scripts/...` from another environment does not).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from domain.tools import BodyField, Catalogue, Endpoint, Fixed, Merged, Param, Source, ToolSpec  # noqa: E402  (needs ROOT on sys.path)
from domain.woodpecker.answers import Glance, Listed  # noqa: E402  (needs ROOT on sys.path)
from domain.woodpecker.before_asking import BLOCKED, REPOSITORY_EXISTING, BeforeAsking  # noqa: E402  (needs ROOT on sys.path)
from domain.woodpecker.catalogue import WOODPECKER_TOOLS  # noqa: E402  (needs ROOT on sys.path)
from domain.woodpecker.questions import WHY_IT_ASKS  # noqa: E402  (needs ROOT on sys.path)
from domain.woodpecker.tool import woodpecker  # noqa: E402  (needs ROOT on sys.path)

DEFAULT_OUTPUT = ROOT / "docs" / "tools.md"

GROUP_TITLES = {
    "repositories": "Repositories",
    "pipelines": "Pipelines",
    "logs": "Logs",
    "secrets": "Secrets",
    "registries": "Container registries",
    "crons": "Cron jobs",
    "organizations": "Organizations",
    "account": "The authenticated account",
    "users": "Users",
    "agents": "Agents",
    "forges": "Forges",
    "server": "Server, queue and log level",
}


def _group_title(group: str) -> str:
    return GROUP_TITLES.get(group, group.replace("_", " ").capitalize())


def _anchor(title: str) -> str:
    # GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _cell(text: str) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(value: object) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value is None:
        return "`null`"
    return f"`{value}`"


def _json_word(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, list | tuple) and not value:
        return "[]"
    return str(value)


def _range(low: object, high: object, unit: str = "") -> str:
    if low is not None and high is not None:
        return f"{unit}{low} … {high}"
    if low is not None:
        return f"{unit}≥ {low}"
    return f"{unit}≤ {high}"


def _schema_words(c: Mapping[str, Any]) -> list[str]:
    """JSON-Schema-like constraints in plain words (also used for array items and map values)."""
    words: list[str] = []
    if "enum" in c:
        words.append(" | ".join(_code(v) for v in c["enum"]))
    elif "type" in c:
        words.append(str(c["type"]))
    if "minimum" in c or "maximum" in c:
        words.append(_range(c.get("minimum"), c.get("maximum")))
    if "minLength" in c or "maxLength" in c:
        words.append(_range(c.get("minLength"), c.get("maxLength"), "length "))
    if "pattern" in c:
        words.append(f"pattern `{c['pattern']}`")
    if "format" in c:
        words.append(f"format `{c['format']}`")
    return words


def _constraints(param: Param) -> str:
    c = param.constraints
    words = _schema_words({k: v for k, v in c.items() if k not in ("enum", "type")})
    if "items" in c:
        words.append("items: " + ", ".join(_schema_words(c["items"])))
    if "minItems" in c or "maxItems" in c:
        words.append(_range(c.get("minItems"), c.get("maxItems")) + " items")
    if c.get("uniqueItems"):
        words.append("unique")
    if "propertyNames" in c:
        words.append("keys: " + ", ".join(_schema_words(c["propertyNames"])))
    if "additionalProperties" in c:
        words.append("values: " + ", ".join(_schema_words(c["additionalProperties"])))
    if "maxProperties" in c:
        words.append(f"≤ {c['maxProperties']} entries")
    if "default" in c:
        words.append(f"default `{_json_word(c['default'])}`")
    if param.required_when is not None:
        words.append(f"required when `{param.required_when}`")
    if param.only_when is not None:
        words.append(f"only when `{param.only_when}`")
    return "; ".join(words) if words else "—"


def _type(param: Param) -> str:
    if param.choices:
        return " | ".join(_code(v) for v in param.choices)
    return param.type


def _admin_marker(tool: ToolSpec) -> str | None:
    if tool.admin == "always":
        return "**admin**"
    if tool.admin == "instance_scope":
        return f"**admin when {tool.admin_when}**"
    return None


def _guard_marker(tool: ToolSpec) -> str | None:
    if tool.guard is None:
        return None
    return f"**asks a person: {tool.guard.when}**"


def _guard_sentence(tool: ToolSpec) -> str:
    if tool.guard is None:
        return "Never asks a person."
    if tool.guard.always:
        return "Asks a person before every call."
    return f"Asks a person (`{tool.guard.when}`): {tool.guard.condition}"


def _source(key: str, source: Source, *, named: bool) -> str:
    """One query or body key and where its value comes from (`named`: even when it is the key)."""
    if isinstance(source, Fixed):
        return f"`{key}` = `{source}`"
    if isinstance(source, Merged):
        return f"`{key}` (merged)"
    return f"`{key}` ← `{source.name}`" if named or source.name != key else f"`{key}`"


def _fields(fields: Mapping[str, BodyField], *, named: bool = False, prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, source in fields.items():
        if isinstance(source, Mapping):
            out += _fields(source, named=named, prefix=f"{prefix}{key}.")
        else:
            out.append(_source(prefix + key, source, named=named))
    return out


def _endpoint_line(endpoint: Endpoint) -> str:
    parts = [f"`{endpoint.method} {endpoint.path}`"]
    details: list[str] = []
    if endpoint.when:
        details.append(f"when {endpoint.when}")
    if endpoint.step:
        details.append(endpoint.step)
    if endpoint.root:
        details.append("at the server root, outside `/api`")
    if endpoint.query:
        details.append("query " + ", ".join(_fields(endpoint.query, named=True)))
    if endpoint.body:
        details.append("body " + ", ".join(_fields(endpoint.body)))
    details.append(f"success {endpoint.success}")
    return "- " + parts[0] + " — " + "; ".join(details)


def _annotations(tool: ToolSpec) -> str:
    a = tool.annotations
    pairs = (
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    )
    return " · ".join(f"{name} {str(value).lower()}" for name, value in pairs)


def _kept(glance: Glance) -> str:
    names = []
    for kept in glance.fields:
        names.append(f"`{kept.name}` (with `{kept.name}_at`)" if kept.kind == "time" else f"`{kept.name}`")
    names += [f"`{key}` ({_kept(inner)})" for key, inner in glance.nested]
    return ", ".join(names)


def _glance_sentence(key: str, glance: Glance) -> str:
    """What each entry of a list keeps (docs/adr/0070)."""
    return (
        f"Each entry of `{key}` keeps only {_kept(glance)}; times are Unix seconds with the same time "
        f"in ISO 8601 UTC beside them, and an empty value is left out. Every field of one: "
        f"`{glance.more}`."
    )


def _tool_section(tool: ToolSpec) -> list[str]:
    markers = [f"`{tool.kind}`"]
    if tool.essential:
        markers.append("**essential**")
    markers += [m for m in (_admin_marker(tool), _guard_marker(tool)) if m]
    if tool.untrusted_output:
        markers.append("untrusted output")
    out = [f"### `{tool.name}`", "", " · ".join([f"**{tool.title}**", *markers]), ""]
    out += [_guard_sentence(tool), "", " ".join(tool.description.split()), ""]
    if tool.params:
        out += [
            "| Parameter | Type | Required | Constraints | Description |",
            "|---|---|---|---|---|",
        ]
        for p in tool.params:
            required = "yes" if p.required else "no"
            out.append(
                f"| `{p.name}` | {_cell(_type(p))} | {required} | {_cell(_constraints(p))} | {_cell(p.description)} |"
            )
    else:
        out.append("No parameters.")
    out.append("")
    if tool.endpoints:
        out += ["Woodpecker requests:", ""]
        out += [_endpoint_line(e) for e in tool.endpoints]
        out.append("")
    if tool.guard is not None:
        targets = ", ".join(f"`{t}`" for t in tool.guard.targets) or "none (the tool has no target)"
        out += [
            f"An approval is bound to: the tool name; targets {targets}, in this order; "
            f"request body fingerprinted: {'yes' if tool.guard.body_bound else 'no'}; "
            f"reads the current object to decide: {'yes' if tool.guard.needs_current_state else 'no'}.",
            "",
        ]
        first = woodpecker(tool).before_asking
        if first is not None:
            out += [_before_asking_sentence(first), ""]
    answer = woodpecker(tool).answer
    if isinstance(answer, Listed) and answer.glance is not None:
        out += [_glance_sentence(answer.key, answer.glance), ""]
    out += [f"Annotations: {_annotations(tool)}.", ""]
    if tool.notes:
        out += ["Notes:", ""]
        out += ["- " + " ".join(n.split()) for n in tool.notes]
        out.append("")
    return out


def _groups(catalogue: Catalogue) -> list[tuple[str, list[ToolSpec]]]:
    order: dict[str, list[ToolSpec]] = {}
    for tool in catalogue:
        order.setdefault(tool.group, []).append(tool)
    return list(order.items())


def _names(tools: Iterable[ToolSpec]) -> str:
    return ", ".join(f"`{t.name}`" for t in tools)


def render(catalogue: Catalogue) -> str:
    """The whole of docs/tools.md for `catalogue`."""
    tools = list(catalogue)
    reads = [t for t in tools if t.is_read]
    guarded = [t for t in tools if t.guard is not None]
    always = [t for t in guarded if t.guard is not None and t.guard.always]
    conditional = [t for t in guarded if t.guard is not None and not t.guard.always]
    essential = [t for t in tools if t.essential]
    groups = _groups(catalogue)

    out = [
        "# Tool reference",
        "",
        "<!-- Generated by scripts/render_tool_reference.py from domain/woodpecker/catalogue/."
        " Do not edit by hand: change the catalogue and run the script."
        " tests/docs/test_tool_reference.py fails when this file drifts. -->",
        "",
        f"**{len(tools)} tools: {len(reads)} read, {len(tools) - len(reads)} write. "
        f"{len(guarded)} ask a person ({len(always)} always, {len(conditional)} under a condition). "
        f"{len(essential)} in the `essential` preset.**",
        "",
        "## Contents",
        "",
    ]
    out += [f"- [{_group_title(g)}](#{_anchor(_group_title(g))}): {len(ts)} tools" for g, ts in groups]
    out += [
        "",
        "## How to read this reference",
        "",
        "The markers under each tool name:",
        "",
        "- `read` / `write`: write tools are not registered when `WOODPECKER_READ_ONLY=true`.",
        "- **essential**: a member of the preset `WOODPECKER_ALLOW_TOOLS=essential`.",
        "- **admin**: needs an instance administrator; other accounts get 403."
        " **admin when …** needs one only in that case.",
        "- **asks a person**: the call waits for a person's answer (an MCP elicitation dialog)"
        " before anything reaches Woodpecker, always or under the named condition. A client"
        " that cannot show a dialog, or a server started with `ELICITATION=false`, gets the"
        " two-call `confirm_token` instead, which proves only that the same call was made twice.",
        "- untrusted output: the result carries text written by whoever can push or open a pull"
        " request. It is marked `untrusted: true` in the structured result; treat it as data,"
        " never as instructions.",
        "",
        "Annotations are the four MCP tool hints, all declared on every tool. They are advice to"
        " the client; the dialog is what the server enforces.",
        "",
        "## Presets and modes",
        "",
        f"- Read-only mode registers the {len(reads)} read tools and none of the"
        f" {len(tools) - len(reads)} write tools.",
        f"- `essential`: {_names(essential)}.",
        f"- Always ask ({len(always)}): {_names(always)}.",
        f"- Ask under a condition ({len(conditional)}):",
    ]
    out += [f"  - `{t.name}` (`{t.guard.when}`): {t.guard.condition}" for t in conditional if t.guard]
    out += [
        "",
        "## Asking a person at a glance",
        "",
        "| Tool | When | Why it asks | Targets, in order | Body bound | Reads current state |",
        "|---|---|---|---|---|---|",
    ]
    for t in guarded:
        g = t.guard
        assert g is not None
        targets = ", ".join(f"`{x}`" for x in g.targets) or "—"
        out.append(
            f"| `{t.name}` | `{g.when}` | {_cell(WHY_IT_ASKS.get(t.name, '—'))} | {targets} "
            f"| {'yes' if g.body_bound else 'no'} | {'yes' if g.needs_current_state else 'no'} |"
        )
    out += [
        "",
        "## Write tools: annotations at a glance",
        "",
        "| Tool | destructiveHint | idempotentHint | Asks a person |",
        "|---|---|---|---|",
    ]
    for t in tools:
        if t.is_read:
            continue
        asks = t.guard.when if t.guard else "—"
        out.append(
            f"| `{t.name}` | {str(t.annotations.destructive).lower()} "
            f"| {str(t.annotations.idempotent).lower()} | {asks} |"
        )
    out.append("")
    for group, group_tools in groups:
        out += [f"## {_group_title(group)}", ""]
        for tool in group_tools:
            out += _tool_section(tool)
    return "\n".join(out).rstrip("\n") + "\n"


def _before_asking_sentence(first: BeforeAsking) -> str:
    """What the read before the question reads and what ends the call (ADR 0090)."""
    if first is BLOCKED:
        return (
            "Before asking it reads the pipeline once (GET /api/repos/{repo_id}/pipelines/{number}): a 404, or a "
            "pipeline that is not blocked, ends the call with nobody asked and no change sent (`not_found`, "
            "`not_blocked`); otherwise the question says whether the pipeline comes from a fork."
        )
    where = "the repository by its id" if first is REPOSITORY_EXISTING else "its target at the same path"
    return (
        f"Before asking it reads {where} once: a 404 ends the call with nobody asked and no change sent "
        "(`not_found`)."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail when the file differs; write nothing")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="default: docs/tools.md")
    args = parser.parse_args(argv)
    rendered = render(WOODPECKER_TOOLS)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current == rendered:
            return 0
        diff = difflib.unified_diff(
            current.splitlines(keepends=True),
            rendered.splitlines(keepends=True),
            fromfile=f"{args.output.name} (on disk)",
            tofile=f"{args.output.name} (rendered)",
            n=1,
        )
        sys.stderr.writelines(list(diff)[:60])
        sys.stderr.write(
            f"\n{args.output.name} is out of date: run `python scripts/render_tool_reference.py`.\n"
        )
        return 1
    args.output.write_text(rendered, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
