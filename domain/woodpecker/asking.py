"""How a guarded tool's question is declared: what will happen, then what it costs.

Nothing read from Woodpecker reaches a question (no branch, title, message, log line, or a
name somebody else typed): a question only sees the caller's arguments and our own reason
ids. A value the caller chose appears only on a labelled, flattened, shortened line: a
body-bound question lists every field the call sets, each on its own line, with its new value;
only a secret (a sensitive parameter) is named without being shown. Each tool's own question is in its declaration (domain/woodpecker/catalogue/).
"""

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from domain.arguments import check_value
from domain.guard.fingerprint import CONFIRM_TOKEN_ARG, body_of
from domain.guard.policy import POLICY_ASK
from domain.guard.question import DEFAULT_LIMIT, Question, build, labelled, labelled_url
from domain.parsing.urls import BadUrl, split_url
from domain.tools import Param, ToolSpec

Builder = Callable[[ToolSpec, Mapping[str, Any], frozenset[str]], Question]
_Lines = Callable[[Mapping[str, Any]], list[str]]

UNDESCRIBED = "This server cannot describe the change more exactly, so it asks before acting."
ADMIN_COST = (
    "An instance admin controls the whole Woodpecker instance: every repository, secret, agent, "
    "forge and user."
)


def _id(args: Mapping[str, Any], name: str) -> str:
    """A numeric id as digits; anything else is never printed."""
    value = args.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "(unknown)"


def _owned(args: Mapping[str, Any], noun: str) -> str:
    """ "a secret of repository 21", "a secret of organization 3" or "a global secret"."""
    scope = args.get("scope")
    if scope == "repository":
        return f"a {noun} of repository {_id(args, 'repo_id')}"
    if scope == "organization":
        return f"a {noun} of organization {_id(args, 'org_id')}"
    if scope == "global":
        return f"a global {noun}, available to every repository"
    return f"a {noun} of an unrecognised scope"


def _agent_owner(args: Mapping[str, Any]) -> str:
    return f" of organization {_id(args, 'org_id')}" if args.get("org_id") is not None else ""


def _agent_scope(args: Mapping[str, Any]) -> str:
    owner = _agent_owner(args)
    return f" for organization {_id(args, 'org_id')}" if owner else " for the whole instance"


# Placeholders of a question's first sentence that are phrases; every other {name} is the id `name`.
# Either way only digits and fixed words are printed.
_PHRASES: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "secret": lambda args: _owned(args, "secret"),
    "registry": lambda args: _owned(args, "registry"),
    "agent_owner": _agent_owner,
    "agent_scope": _agent_scope,
}


class _Ids(dict[str, str]):
    """The values of a first sentence's placeholders, worked out from the arguments when asked for."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__()
        self.args = args

    def __missing__(self, key: str) -> str:
        phrase = _PHRASES.get(key)
        return phrase(self.args) if phrase else _id(self.args, key)


NOT_SHOWN = "(set, not shown here)"
# Names whoever can push chooses (guard.md §2: never a branch name in a question), even when the call
# passes them: a repository must not be able to name itself into the prompt by way of the model.
_PUSHED_NAMES = frozenset({"branch"})


def _value_text(param: Param | None, value: Any) -> str:
    """A field's new value as a question shows it. Only a secret (a value, a password, a client secret,
    a token: a sensitive parameter) is named without being shown (guard.md §1c), and so is a name a
    pusher chooses (a branch, guard.md §2); every other value is shown: booleans, numbers and strings
    as they are (`_lines` flattens and cuts free text), a list as its items joined by ", "."""
    if param is not None and (param.sensitive or param.name in _PUSHED_NAMES):
        return NOT_SHOWN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        if not value:
            return "(empty)"
        return ", ".join(v if isinstance(v, str) else str(v) for v in value)
    if isinstance(value, str):
        return "(empty)" if value == "" else value
    return NOT_SHOWN


def _lines(label: str, param: Param | None, text: object) -> list[str]:
    """A labelled line. A URL's is cut short only after its host, and when its host reads as another
    one (user info before it, a name outside ASCII) a line under it names the host it goes to. A name
    in a restricted alphabet (a login, a secret name, an address) or a list from a fixed vocabulary (events)
    is never cut: it carries no sentence, and cut short two objects whose names share a line's worth
    would read alike, or the items at a list's end would go unseen."""
    if param is None or not isinstance(text, str):
        return [labelled(label, text)]
    if param.constraints.get("format") == "uri":
        lines = [labelled_url(label, text)]
        host = _host_looked_up(text)
        if host is not None:
            lines.append(labelled(f"{label} host", host, limit=_MAX_HOST))
        return lines
    if _plain_name(param, text) or _from_a_vocabulary(param, text) or _plain_names(param, text):
        return [labelled(label, text, limit=max(DEFAULT_LIMIT, len(text)))]
    return [labelled(label, text)]


def _plain_name(param: Param, text: str) -> bool:
    """Whether `text` is a valid value of a parameter whose pattern restricts it to a name."""
    return (
        "pattern" in param.constraints
        and not any(c.isspace() for c in text)
        and check_value(param, text)[0] is None
    )


def _plain_names(param: Param, text: str) -> bool:
    """Whether `text` lists items each valid under a pattern that admits no space and no comma (images):
    the list reads unambiguously, carries no sentence, and cut short an added image would go unseen."""
    items = param.constraints.get("items", {})
    pattern = items.get("pattern")
    if param.type != "array" or not isinstance(pattern, str):
        return False
    item = Param(param.name, "string", True, "", constraints=items)
    return all(
        not any(c.isspace() or c == "," for c in i) and check_value(item, i)[0] is None
        for i in text.split(", ")
    )


def _from_a_vocabulary(param: Param, text: str) -> bool:
    """Whether `text` lists items of a fixed vocabulary (`push, pull_request`): bounded, never prose,
    and cut short the items at its end (a pull-request event) would go unseen."""
    items = param.constraints.get("items", {})
    return param.type == "array" and "enum" in items and all(i in items["enum"] for i in text.split(", "))


# The longest host name DNS looks up (an IDNA-encoded one is never longer).
_MAX_HOST = 253
_AMBIGUOUS_HOST = "(unclear: programs read this URL's host differently)"


def _host_looked_up(url: str) -> str | None:
    """The host an RFC 3986 parser (Go's net/url, so Woodpecker) takes from `url`, as DNS looks it up,
    when a reader could take another one from the text; None when the authority is a plain host."""
    try:
        parts = split_url(url)
    except BadUrl:
        return None
    if parts.host.isascii() and not parts.userinfo and not any(c in parts.netloc for c in "\\%"):
        return None
    if "\\" in parts.netloc:
        return _AMBIGUOUS_HOST  # a browser reads a slash there, Go's net/url no URL at all
    try:
        # A browser decodes a percent-encoded host before it looks it up (github.com%2eevil.example).
        host = unquote(parts.host, errors="strict")
        looked_up = host.encode("idna").decode("ascii")
        # Python's codec is IDNA 2003; Go and browsers follow UTS 46, which keeps what 2003 maps
        # away (ß, ς, a zero-width joiner, a soft hyphen: git<ZWJ>hub.com is github.com to the
        # codec alone). Only a name both read alike gets a host line; the rest is unclear.
        same = looked_up.encode("ascii").decode("idna") == unicodedata.normalize("NFKC", host).lower()
    except UnicodeError:
        return "(a name that cannot be looked up)"
    return looked_up if same else _AMBIGUOUS_HOST


def field_lines(tool: ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """One labelled line per field the call sets (every argument but the targets), in catalogue order."""
    params = {p.name: p for p in tool.params}
    body = body_of(tool, args)
    return [
        line
        for name in (p.name for p in tool.params)
        if name in body
        for line in _lines(f"New {name}", params.get(name), _value_text(params.get(name), body[name]))
    ]


def argument_lines(tool: ToolSpec, args: Mapping[str, Any]) -> list[str]:
    """One labelled line per argument the call passes, in catalogue order (a tool the operator's
    policy makes ask binds them all); a secret is named, never shown."""
    return [
        line
        for p in tool.params
        if p.name in args and p.name != CONFIRM_TOKEN_ARG
        for line in _lines(p.name, p, _value_text(p, args[p.name]))
    ]


def _unknown(reasons: frozenset[str], known: frozenset[str]) -> list[str]:
    # The policy's own reason is worded by questions.question_for, not here.
    return [UNDESCRIBED] if reasons - known - {"always", POLICY_ASK} else []


@dataclass(frozen=True, slots=True)
class _When:
    """A cost sentence and/or labelled line that only some calls get."""

    holds: Callable[[Mapping[str, Any], frozenset[str]], bool]
    cost: str | None = None
    lines: _Lines | None = None
    reason: str | None = None  # the reason id this describes, when it is one


def because(reason: str, cost: str, lines: _Lines | None = None) -> _When:
    """Said when the decision gives `reason`."""
    return _When(lambda args, reasons: reason in reasons, cost, lines, reason)


def given(
    test: Callable[[Mapping[str, Any]], bool], cost: str | None = None, lines: _Lines | None = None
) -> _When:
    """Said when the arguments pass `test`."""
    return _When(lambda args, reasons: test(args), cost, lines)


@dataclass(frozen=True, slots=True)
class Ask:
    """One tool's question: what will happen, then what it costs.

    `what` holds ids and phrases only (see _PHRASES); `lines` are (label, argument) pairs shown
    on lines of their own. A question that describes reasons (`describes`, or the reasons of its
    `when` clauses) says so when the decision gives one it does not describe. `fields`: list every
    field the call sets on its own line (body-bound tools), see field_lines. `what_when` replaces
    `what` when its test holds (create_user says whether it grants admin).
    """

    what: str
    cost: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()
    when: tuple[_When, ...] = ()
    describes: frozenset[str] = frozenset()
    fields: bool = False
    what_when: tuple[Callable[[Mapping[str, Any]], bool], str] | None = None

    def __call__(self, tool: ToolSpec, args: Mapping[str, Any], reasons: frozenset[str]) -> Question:
        params = {p.name: p for p in tool.params}
        lines = [
            line for label, name in self.lines for line in _lines(label, params.get(name), args.get(name))
        ]
        if self.fields:
            lines += field_lines(tool, args)
        cost = list(self.cost)
        for clause in self.when:
            if clause.holds(args, reasons):
                if clause.cost:
                    cost.append(clause.cost)
                if clause.lines:
                    lines += clause.lines(args)
        known = self.describes | {c.reason for c in self.when if c.reason}
        if known:
            cost += _unknown(reasons, known)
        what = self.what
        if self.what_when is not None and self.what_when[0](args):
            what = self.what_when[1]
        return build(what.format_map(_Ids(args)), cost, lines)
