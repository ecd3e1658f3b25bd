"""The operator's policy file (a setting names it): rules per tool that only tighten the guard.

A policy is TOML, one `[tools.NAME]` table per tool it names, with four keys (docs/policy.md,
docs/adr/0079):

- `deny = true`: the tool stays listed, its description says the policy denies it, and every
  call is refused before anything is asked or sent;
- `ask = "always"`: every call asks a person, reads included, on every way of asking;
- `expires_in = "2m"`: its questions, seals, tickets and tokens live that long at most, never
  longer than the default (`MAX_EXPIRES_IN`);
- `four_eyes = true`: the approver of a question must be someone other than the caller (team mode's
  signed-in page; the entrypoint refuses it without one, as it does the four-eyes setting).

Anything else is refused, each problem one `Problem` naming its line and the fix: a value of
`ask` other than "always" (which could only remove a question), an unknown key or tool, an
`expires_in` above the default or one that means nothing, a file that does not parse. No rule can
remove a question, so no policy can make a guarded call run unasked.

Pure: it reads text handed to it (the entrypoint reads the file) and the catalogue it checks the
names against; it knows no forge.
"""

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from domain.guard.fingerprint import CONFIRM_TOKEN_ARG
from domain.guard.outcomes import duration_words
from domain.guard.policy import BY_POLICY
from domain.guard.question import flatten
from domain.guard.tokens import TOKEN_PATTERN, TOKEN_TTL_SECONDS
from domain.tools import Catalogue, GuardRule, Param, ToolPolicy, ToolSpec

# The keys a tool's table may hold.
KEYS = ("deny", "ask", "expires_in", "four_eyes")
# The longest life a policy may give: the default of the shortest-lived of them, the two-call token.
MAX_EXPIRES_IN = TOKEN_TTL_SECONDS
# The shortest: a question nobody can read and answer in time only looks like a question.
MIN_EXPIRES_IN = 10
# A policy file is a few lines per tool; anything far longer is not one.
MAX_POLICY_BYTES = 65_536

DENIED_SENTENCE = "DENIED by this server's policy: every call is refused before anything is asked or sent."
ASKS_SENTENCE = "This server's policy asks a person before every call of this tool."
_POLICY_CONDITION = "this server's policy asks before every call"
_DURATION = re.compile(r"(?:(\d{1,4})m)?(?:(\d{1,6})s)?")
_AT = re.compile(r"\s*\((?:at line (\d+), column \d+|at end of document)\)\s*$")


@dataclass(frozen=True, slots=True)
class Rule:
    """One key of one tool's table."""

    tool: str
    key: str

    @property
    def name(self) -> str:
        """The rule as the audit trail names it: `tools.delete_repository.deny`."""
        return f"tools.{self.tool}.{self.key}"


@dataclass(frozen=True, slots=True)
class Policy:
    """A checked policy: each tool's `ToolPolicy`, and its rules in the file's order."""

    source: str
    tools: Mapping[str, ToolPolicy] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()

    @property
    def four_eyes(self) -> tuple[str, ...]:
        """The tools whose questions need a second person, in the file's order."""
        return tuple(r.tool for r in self.rules if r.key == "four_eyes")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    message: str


class PolicyError(ValueError):
    """The policy cannot be used. `problems` are in the file's order; `lines` are what to print."""

    def __init__(self, source: str, problems: Iterable[Problem]) -> None:
        self.source = source
        self.problems = tuple(sorted(problems, key=lambda p: p.line))
        super().__init__("\n".join(self.lines))

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(f"{shown_source(self.source)}:{p.line}: {p.message}" for p in self.problems)


def shown_source(source: str) -> str:
    """The file's name as given, on one line with nothing hidden in it."""
    return flatten(source, 200)


def parse_duration(raw: object) -> int | None:
    """`"90s"`, `"2m"` or `"1m30s"` in seconds; None for anything else."""
    if not isinstance(raw, str) or not raw:
        return None
    match = _DURATION.fullmatch(raw)
    if match is None:
        return None
    minutes, seconds = match.groups()
    return int(minutes or 0) * 60 + int(seconds or 0)


def _shown(value: object) -> str:
    """A value as a refusal may quote it: short plain words and booleans; anything else described."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and len(value) <= 20 and re.fullmatch(r"[A-Za-z0-9_. -]*", value):
        return f'"{value}"'
    if isinstance(value, int) and abs(value) < 10**9:
        return str(value)
    return f"a {type(value).__name__} value" if not isinstance(value, str) else "that text"


class _Lines:
    """Where a key path is set: the first line whose prefix of the file defines it (tomllib gives no
    positions). Used only to name the line of a refusal, in a file that parses whole.

    A prefix that parses and defines the path stays defining it as lines are added (TOML only adds
    keys), so the line is found by bisection, a prefix that does not parse (inside a multi-line
    string or array) standing for the next one that does; a value over several lines is then named by
    the line its key is on. Each refusal costs a few parses.
    """

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self._parsed: dict[int, dict[str, Any] | None] = {}

    def _prefix(self, end: int) -> dict[str, Any] | None:
        if end not in self._parsed:
            import tomllib

            try:
                self._parsed[end] = tomllib.loads("\n".join(self._lines[:end]))
            except tomllib.TOMLDecodeError:
                self._parsed[end] = None
        return self._parsed[end]

    def _parsing(self, end: int) -> tuple[int, dict[str, Any]]:
        """The first prefix from `end` lines on that parses (the whole file always does)."""
        last = len(self._lines)
        while end < last:
            parsed = self._prefix(end)
            if parsed is not None:
                return end, parsed
            end += 1
        whole = self._prefix(last)
        return last, whole if whole is not None else {}

    def _defines(self, end: int, path: tuple[str, ...]) -> bool:
        node: Any = self._parsing(end)[1]
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return node is not None

    def of(self, *path: str) -> int:
        low, high = 1, max(len(self._lines), 1)
        while low < high:
            middle = (low + high) // 2
            if self._defines(middle, path):
                high = middle
            else:
                low = middle + 1
        end = min(self._parsing(low)[0], max(len(self._lines), 1))
        # A value over several lines: its key is on the line after the last prefix that parses.
        start = end - 1
        while start > 0 and self._prefix(start) is None:
            start -= 1
        return start + 1


def _parse_error(source: str, text: str, message: str) -> PolicyError:
    match = _AT.search(message)
    line = int(match.group(1)) if match is not None and match.group(1) else max(len(text.splitlines()), 1)
    what = flatten(_AT.sub("", message), 120)
    return PolicyError(
        source,
        [
            Problem(
                line,
                f"the policy does not parse as TOML ({what}); fix the syntax: each tool is a "
                '[tools.NAME] table of deny = true, ask = "always" or expires_in = "2m" (docs/policy.md)',
            )
        ],
    )


def parse_policy(text: str, source: str, catalogue: Catalogue) -> Policy:
    """The policy `text` (read from `source`, named in every message) sets for `catalogue`'s tools.

    Raises:
        PolicyError: anything that does not parse, would loosen the guard, or means nothing; one
            problem per rule, each naming its line and the fix.
    """
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _parse_error(source, text, str(e)) from None
    where = _Lines(text)
    problems: list[Problem] = []
    for key in data:
        if key != "tools":
            problems.append(
                Problem(
                    where.of(key),
                    f"unknown key {flatten(key, 60)} at the top of the policy; a policy holds only "
                    "[tools.NAME] tables (remove it, or put it under the tool it is for)",
                )
            )
    tables = data.get("tools", {})
    if not isinstance(tables, dict):
        problems.append(
            Problem(where.of("tools"), "tools must be a table of [tools.NAME] tables; write [tools.NAME]")
        )
        tables = {}
    tools: dict[str, ToolPolicy] = {}
    rules: list[Rule] = []
    for name, table in tables.items():
        checked = _tool(name, table, catalogue, where, problems)
        if checked is not None:
            tools[name] = checked[0]
            rules.extend(checked[1])
    if problems:
        raise PolicyError(source, problems)
    return Policy(source, tools, tuple(rules))


def _tool(
    name: str, table: object, catalogue: Catalogue, where: _Lines, problems: list[Problem]
) -> tuple[ToolPolicy, list[Rule]] | None:
    if name not in catalogue:
        meant = [n for n in catalogue.names if n.startswith(name)] or difflib.get_close_matches(
            name, catalogue.names, 1, 0.75
        )
        guess = f"; did you mean {meant[0]}?" if meant else " (docs/tools.md lists the tools)"
        problems.append(
            Problem(
                where.of("tools", name),
                f"no tool is named {flatten(name, 60)}; name a tool of this server{guess}",
            )
        )
        return None
    if not isinstance(table, dict):
        problems.append(
            Problem(
                where.of("tools", name),
                f"tools.{name} must be a table; write [tools.{name}] with deny, ask, expires_in or four_eyes",
            )
        )
        return None
    spec = catalogue.get(name)
    before = len(problems)
    for key in table:
        if key not in KEYS:
            problems.append(
                Problem(
                    where.of("tools", name, key),
                    f"unknown key {flatten(key, 60)} in [tools.{name}]; the keys are deny, ask, "
                    "expires_in and four_eyes (remove it)",
                )
            )
    deny = _deny(name, table, where, problems)
    ask = _ask(spec, table, where, problems)
    expires_in = _expires_in(spec, table, where, problems, asks=ask or spec.guard is not None)
    four_eyes = _four_eyes(name, table, where, problems, asks=ask or spec.guard is not None)
    if deny and len(table) > 1 and all(k in KEYS for k in table):
        problems.append(
            Problem(
                where.of("tools", name, "deny"),
                f"[tools.{name}] denies every call, so its other keys mean nothing; keep deny = true alone",
            )
        )
    if len(problems) > before:
        return None
    # In the file's order (TOML tables keep it).
    rules = [Rule(name, key) for key in table]
    return ToolPolicy(deny=deny, ask_always=ask, expires_in=expires_in, four_eyes=four_eyes), rules


def _four_eyes(
    name: str, table: Mapping[str, object], where: _Lines, problems: list[Problem], *, asks: bool
) -> bool:
    if "four_eyes" not in table:
        return False
    if table["four_eyes"] is not True:
        problems.append(
            Problem(
                where.of("tools", name, "four_eyes"),
                f"four_eyes in [tools.{name}] is {_shown(table['four_eyes'])}; it takes only true "
                "(to let the caller approve, remove the line)",
            )
        )
        return False
    if not asks:
        problems.append(
            Problem(
                where.of("tools", name, "four_eyes"),
                f"four_eyes in [tools.{name}] means nothing: {name} never asks; add "
                'ask = "always", or remove the line',
            )
        )
        return False
    return True


def _deny(name: str, table: Mapping[str, object], where: _Lines, problems: list[Problem]) -> bool:
    if "deny" not in table:
        return False
    if table["deny"] is True:
        return True
    problems.append(
        Problem(
            where.of("tools", name, "deny"),
            f"deny in [tools.{name}] is {_shown(table['deny'])}; it takes only true "
            "(to allow the tool, remove the line)",
        )
    )
    return False


def _ask(spec: ToolSpec, table: Mapping[str, object], where: _Lines, problems: list[Problem]) -> bool:
    if "ask" not in table:
        return False
    value = table["ask"]
    if value == "always":
        return True
    name = spec.name
    if spec.guard is not None:
        message = (
            f"ask = {_shown(value)} in [tools.{name}] would take a question away from a guarded tool, "
            'and no policy can; the only value is "always" (remove the line to keep the guard\'s own rule)'
        )
    else:
        message = (
            f'ask = {_shown(value)} in [tools.{name}]: the only value is "always" '
            "(remove the line and the tool runs without a question, as it does now)"
        )
    problems.append(Problem(where.of("tools", name, "ask"), message))
    return False


def _expires_in(
    spec: ToolSpec, table: Mapping[str, object], where: _Lines, problems: list[Problem], *, asks: bool
) -> int | None:
    if "expires_in" not in table:
        return None
    name, raw = spec.name, table["expires_in"]
    most = duration_words(MAX_EXPIRES_IN)
    seconds = parse_duration(raw)
    if seconds is None:
        problems.append(
            Problem(
                where.of("tools", name, "expires_in"),
                f'expires_in in [tools.{name}] is {_shown(raw)}; write a duration such as "90s", "2m" or '
                f'"1m30s", at most {most}',
            )
        )
    elif seconds > MAX_EXPIRES_IN:
        problems.append(
            Problem(
                where.of("tools", name, "expires_in"),
                f"expires_in in [tools.{name}] is {duration_words(seconds)}, above the default of {most}: "
                f"a policy can shorten a question's life, never lengthen it; use at most {most}",
            )
        )
    elif seconds < MIN_EXPIRES_IN:
        problems.append(
            Problem(
                where.of("tools", name, "expires_in"),
                f"expires_in in [tools.{name}] is {duration_words(seconds)}, too short for a person to read "
                f"and answer; use at least {duration_words(MIN_EXPIRES_IN)} (or deny = true to refuse every call)",
            )
        )
    elif not asks:
        problems.append(
            Problem(
                where.of("tools", name, "expires_in"),
                f"expires_in in [tools.{name}] means nothing: {name} never asks; add "
                'ask = "always", or remove the line',
            )
        )
    else:
        return seconds
    return None


# ------------------------------------------------------------------------------------- applying


def _confirm_token() -> Param:
    return Param(
        CONFIRM_TOKEN_ARG, "string", False, "", constraints={"pattern": TOKEN_PATTERN}, sensitive=True
    )


def applied(tool: ToolSpec, rule: ToolPolicy) -> ToolSpec:
    """The tool as this server lists and runs it under `rule`.

    A denied tool says so first in its description. A tool the policy makes ask says so last, and
    one that had no guard gets one (`when` BY_POLICY) binding every argument, in the order the tool
    declares them, and a `confirm_token` argument for the two-call token: from then on every way
    of asking treats it as the guarded tool it now is.
    """
    changes: dict[str, Any] = {"policy": rule}
    if rule.deny:
        changes["description"] = f"{DENIED_SENTENCE} {tool.description}".strip()
    elif rule.ask_always:
        changes["description"] = f"{tool.description} {ASKS_SENTENCE}".strip()
        if tool.guard is None:
            names = tuple(p.name for p in tool.params if p.name != CONFIRM_TOKEN_ARG)
            changes["guard"] = GuardRule(
                when=BY_POLICY,
                condition=_POLICY_CONDITION,
                targets=names,
                body_bound=False,
                needs_current_state=False,
            )
            if CONFIRM_TOKEN_ARG not in (p.name for p in tool.params):
                changes["params"] = (*tool.params, _confirm_token())
    return replace(tool, **changes)


def apply_policy(catalogue: Catalogue, policy: Policy | None) -> Catalogue:
    """The catalogue with each tool the policy names as `applied` makes it; the others unchanged."""
    if policy is None or not policy.tools:
        return catalogue
    return Catalogue(
        tuple(applied(t, policy.tools[t.name]) if t.name in policy.tools else t for t in catalogue)
    )


def rule_of(tool: ToolSpec, key: str) -> str | None:
    """The audit's name of the rule `key` of this tool's policy, when it has that rule."""
    rule = tool.policy
    if rule is None:
        return None
    has = {
        "deny": rule.deny,
        "ask": rule.ask_always,
        "expires_in": rule.expires_in is not None,
        "four_eyes": rule.four_eyes,
    }
    return f"tools.{tool.name}.{key}" if has.get(key) else None


def describe(policy: Policy, catalogue: Catalogue, registered: Catalogue | None = None) -> tuple[str, ...]:
    """The effective policy, one line per rule, in the file's order; a tool the other settings
    leave out of `registered` is said to be so."""
    lines: list[str] = []
    for rule in policy.rules:
        spec = catalogue.get(rule.tool)
        tool = policy.tools[rule.tool]
        if rule.key == "deny":
            what = "is denied: listed, and every call refused before anything is asked or sent"
        elif rule.key == "ask":
            what = (
                "asks a person on every call (as its guard does already)"
                if spec.guard is not None and spec.guard.always
                else "asks a person on every call"
            )
        elif rule.key == "four_eyes":
            what = "needs a second person: its questions' approver must be someone other than the caller"
        else:
            life = tool.expires_in or MAX_EXPIRES_IN
            what = f"questions, seals, tickets and tokens live at most {duration_words(life)}"
        absent = registered is not None and rule.tool not in registered
        note = " (not registered: the tool settings leave it out)" if absent else ""
        subject = f"{rule.tool}'s" if rule.key == "expires_in" else rule.tool
        lines.append(f"{rule.name}: {subject} {what}{note}")
    if not lines:
        lines.append("no rules: every tool asks as the guard decides")
    return tuple(lines)
