"""A successful call's result: Woodpecker's answer redacted, cleaned, bounded by the budget and summarised."""

from collections.abc import Callable, Mapping
from typing import Any

from domain.calls import ToolResult
from domain.tools import ToolSpec
from domain.woodpecker.answers import Done, Listed, One, Value
from domain.woodpecker.results.budget import RESULT_BUDGET, copied, fit_object, fit_prefix, size
from domain.woodpecker.results.configs import decode_configs
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, ShapeError, as_list
from domain.woodpecker.results.glance import at_a_glance, statuses, with_times
from domain.woodpecker.results.kinds import ENTRY_KIND
from domain.woodpecker.results.redaction import redact, scrub, target
from domain.woodpecker.results.render import Summarised, TextMode, fit, render
from domain.woodpecker.results.text import fill
from domain.woodpecker.tool import woodpecker

NEW_AGENT_NOTE = (
    "token is this agent's secret: the agent presents it to the server (WOODPECKER_AGENT_SECRET on the "
    "agent host). It is shown only now; every other tool shows it redacted. Store it like a password and "
    "never paste it into a chat, an issue or a log."
)
_FILTERS = ("name", "branch", "event", "status", "ref", "before", "after")  # parameters that narrow a list


def shape(
    tool: ToolSpec,
    args: Mapping[str, Any],
    data: Any,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    budget: int = RESULT_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    """The result of a successful call: Woodpecker's answer cleaned, summarised and rendered, its
    structured content and text together under `budget` bytes.

    Raises:
        ShapeError: the answer has a shape the tool cannot read.
    """
    return fit(_shaper(tool, args, data, status, headers or {}), budget, text)


def _shaper(
    tool: ToolSpec, args: Mapping[str, Any], data: Any, status: int, headers: Mapping[str, str]
) -> Callable[[int], Summarised]:
    """Shape the result for a given room: the answer is redacted and cleaned once, here; only the
    fitting to the room is done again for each room `fit` tries."""
    name = tool.name
    answer = woodpecker(tool).answer
    data = redact(data, keep_agent_tokens=name == "create_agent")
    out: dict[str, Any] = dict(UNTRUSTED_MARKERS) if tool.untrusted_output else {}
    if isinstance(answer, Listed):
        return _list_shaper(tool, answer, args, data, out)
    if isinstance(answer, One):
        return _object_shaper(name, answer, args, data, out, status, headers)
    if isinstance(answer, Value):
        value = (
            data if answer.field is None else data.get(answer.field) if isinstance(data, Mapping) else None
        )
        if not isinstance(value, str):
            what = "is not text" if answer.field is None else f"has no {answer.field} field"
            raise ShapeError(f"Woodpecker's {answer.key.replace('_', ' ')} answer {what}")
        out[answer.key] = value
        text = fill(answer.summary, {"value": value})
    elif isinstance(answer, Done):
        out["done"] = True
        out["target"] = target(args)
        fields = {**args, "scope_text": _scope_text(args)}
        fields["target"] = (
            "every repository on this instance"
            if args.get("scope") == "instance"
            else f"repository {args.get('repo_id')} (webhook and permissions)"
        )
        text = fill(answer.summary, fields)
    else:
        raise ValueError(f"{name} is not shaped by shape()")  # get_step_logs has its own
    fixed = Summarised(out, text)
    return lambda room: fixed


def _list_shaper(
    tool: ToolSpec, answer: Listed, args: Mapping[str, Any], data: Any, out: dict[str, Any]
) -> Callable[[int], Summarised]:
    key = answer.key
    notes: list[str] = []
    if tool.name == "get_pipeline_config":
        items, notes = decode_configs(data)
    else:
        kind = ENTRY_KIND.get(key, "")
        items = [_clean(kind, e) for e in as_list(data)]
        if answer.glance is not None:
            items = [at_a_glance(e, answer.glance) for e in items]
    if "page" in args:
        out["page"] = args["page"]
        out["per_page"] = args["per_page"]
        if len(items) >= args["per_page"]:
            out["next_page"] = args["page"] + 1
    if notes:
        out["note"] = "; ".join(notes) + "."
    narrow = _narrowing(tool)

    def fitted(room: int) -> Summarised:
        fitting = fit_prefix(out, key, items, room, narrow)
        return Summarised(fitting, _list_text(tool, answer, args, fitting))

    return fitted


def _object_shaper(
    name: str,
    answer: One,
    args: Mapping[str, Any],
    data: Any,
    out: dict[str, Any],
    status: int,
    headers: Mapping[str, str],
) -> Callable[[int], Summarised]:
    key = answer.key
    flagged = any(k.lower() == "pipeline-filtered" and v == "true" for k, v in headers.items())
    if answer.filtered and (status == 204 or data is None or flagged):
        out["created"] = False
        out["note"] = "No pipeline was created: the pipeline config skipped or filtered out every workflow."
        repo = args.get("repo_id")
        none = Summarised(
            out, f"No pipeline was created for repository {repo}: the config filtered everything out."
        )
        return lambda room: none
    if not isinstance(data, Mapping):
        raise ShapeError("Woodpecker answered something other than an object")
    obj = _clean(key, data)
    out[key] = obj
    if answer.filtered:
        out["created"] = True
    if name == "create_agent":
        out["note"] = NEW_AGENT_NOTE

    def fitted(room: int) -> Summarised:
        # fit_object trims in place: a room too small for the cleaned answer gets its own copy of it.
        # Most answers fit whole; they are not copied (nothing downstream mutates a shaped result).
        fitting = out if size(out) <= room else fit_object(copied(out), key, room)
        trimmed = fitting[key] if isinstance(fitting[key], Mapping) else {}
        return Summarised(fitting, fill(answer.summary, args, _object_fields(name, key, trimmed, args)))

    return fitted


def _clean(kind: str, entry: Any) -> Any:
    """An entry without secret material, admin made explicit, a pipeline's steps named as steps."""
    if not isinstance(entry, Mapping):
        return entry
    cleaned = scrub(kind, entry)
    if kind == "user":
        cleaned["admin"] = bool(cleaned.get("admin", False))
    if kind == "pipeline":
        cleaned = with_times(cleaned)  # ISO 8601 UTC beside each time (docs/adr/0070)
        if isinstance(cleaned.get("workflows"), list):
            cleaned["workflows"] = [
                {
                    **with_times({k: v for k, v in w.items() if k != "children"}),
                    "steps": [
                        with_times(s) if isinstance(s, Mapping) else s for s in w.get("children") or []
                    ],
                }
                if isinstance(w, Mapping)
                else w
                for w in cleaned["workflows"]
            ]
    return cleaned


def _object_fields(name: str, key: str, obj: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    fields = dict(obj)
    fields["scope_text"] = _scope_text(args)
    if name == "restart_pipeline":
        fields["old"] = args.get("number")
    if key == "pipeline":
        fields["repo_id"] = args.get("repo_id")
    if name == "get_queue_info":
        raw = obj.get("stats")
        stats: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        fields["pending"] = stats.get("pending_count", len(obj.get("pending") or []))
        fields["running"] = stats.get("running_count", len(obj.get("running") or []))
    for k in ("name", "login", "full_name", "address"):
        if k in args:
            fields[k] = args[k]  # the caller's spelling, not a stored one
    return fields


def _scope_text(args: Mapping[str, Any]) -> str:
    scope = args.get("scope")
    if scope == "repository":
        return f"repository {args.get('repo_id')}"
    if scope == "organization":
        return f"organization {args.get('org_id')}"
    return "global scope"


def _list_text(tool: ToolSpec, answer: Listed, args: Mapping[str, Any], out: Mapping[str, Any]) -> str:
    key = answer.key
    noun = key.replace("_", " ")
    if tool.name == "get_pipeline_config":
        where = f" of pipeline {args.get('number')} of repository {args.get('repo_id')}"
        noun = "config files"
    elif tool.name == "list_agent_tasks":
        where = f" on agent {args.get('agent_id')}"
    elif tool.name == "get_pipeline_feed":
        where, noun = " (latest pipeline per repository)", "feed entries"
    elif tool.name == "list_repositories":
        where = " of this account" if args.get("scope") == "account" else " on this instance"
    elif "scope" in args:
        where = f" at {_scope_text(args)}"
    elif "repo_id" in args:
        where = f" of repository {args['repo_id']}"
    elif "org_id" in args:
        where = f" of organization {args['org_id']}"
    else:
        where = ""
    page = f" (page {out['page']})" if "page" in out else ""
    text = f"{out['count']} {_one(noun) if out['count'] == 1 else noun}{where}{page}."
    glance = answer.glance
    if glance is not None and (worth := statuses(out[key], glance, args.get("repo_id"))):
        text += f" {'Latest pipelines: ' if glance.pipeline else ''}{worth}."
    if "dropped" in out:
        text += f" {out['dropped']} more left out to fit the size budget."
    if "next_page" in out:
        text += f" More may follow: page {out['next_page']}."
    if glance is not None and glance.more:
        text += f" Every field of one: {glance.more}."
    return text


def _one(noun: str) -> str:
    """The noun of a list of one: "repository", "branch", "feed entry", "pipeline"."""
    for many, one in (("ies", "y"), ("ches", "ch")):
        if noun.endswith(many):
            return noun.removesuffix(many) + one
    return noun.removesuffix("s")


def _narrowing(tool: ToolSpec) -> str:
    names = {p.name for p in tool.params}
    ways = []
    if "per_page" in names:
        ways.append("ask for a smaller per_page and walk the pages")
    filters = [n for n in _FILTERS if n in names]
    if filters:
        ways.append("filter with " + ", ".join(filters))
    return ("; ".join(ways) or "no narrower request exists for this tool") + "."


def health_failed(why: object | None) -> str:
    """get_server_info's note when /healthz failed: `why` is the failure, None for a 5xx (the database)."""
    if why is None:
        return "The health check failed: Woodpecker cannot reach its database."
    return f"The health check failed: {why}"


def shape_server_info(
    tool: ToolSpec,
    version: Any,
    healthy: bool,
    health_note: str | None,
    token_configured: bool,
    text: TextMode = "full",
) -> ToolResult:
    """get_server_info: version and health, with whether calls that need a token can be made."""
    if not isinstance(version, Mapping):
        raise ShapeError("/version did not answer an object")
    server = {
        "version": version.get("version"),
        "source": version.get("source"),
        "healthy": healthy,
        "token_configured": token_configured,
    }
    out: dict[str, Any] = {"server": server}
    if health_note:
        out["note"] = health_note
    answer = woodpecker(tool).answer
    summary = fill(answer.summary if isinstance(answer, One) else "Woodpecker {version}.", server)
    if not token_configured:
        summary += " No token is configured: every other tool needs WOODPECKER_TOKEN."
    return ToolResult(out, render(Summarised(out, summary), text))
