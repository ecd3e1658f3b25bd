"""What validate_pipeline_config answers: each workflow file's findings, with their lines and columns.

The summary is ours: counts, the verdict Woodpecker would give, and where the first finding is, by
its place in `findings`, its line, column and rule. The findings come worst first (blocking errors,
then the linter's warnings, the schema's, the deprecations, the bad habits; file order, then line and
column, within each), so a cut to the size budget drops bad habits before errors and `findings[0]` is
the worst. File names, step names, keys and values are
written by whoever writes the config (untrusted, like anything pushed: docs/adr/0045) and stay in the
findings' `file`, `pointer`, `field` and `key`. The answer is marked untrusted with `source: caller`:
nothing in it came from Woodpecker, all of it quotes what the call passed.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from domain.calls import ToolResult
from domain.woodpecker.results.budget import RESULT_BUDGET, size
from domain.woodpecker.results.envelope import CALLER_MARKERS
from domain.woodpecker.results.render import Summarised, TextMode, fit
from domain.woodpecker.workflow_lint import Finding, Path, workflow_name

# Findings listed at most (the rest are counted under `dropped`), then fewer to fit the budget.
FINDINGS_CAP = 200
CHECKED_AGAINST = "Woodpecker 3.17's linter (a repository without trusted settings) and the JSON schema vendored by check-jsonschema"


NO_WORKFLOW_READER = (
    "This server was built without a workflow reader; validate_pipeline_config cannot run here."
)


# Warnings by how much they change what runs: the linter's, then the schema's, then advice.
_WARNING_RANK = {"builder": 0, "linter": 1, "schema": 2, "deprecation": 3, "bad_habit": 4}
# What the check assumes rather than knows: it sees the files alone, not the server or the repository.
NOT_CHECKED = (
    "when filters: which events, branches and paths run each workflow and step",
    "secrets: that each from_secret names a secret the repository or organization has",
    "images: that each image exists and can be pulled",
    "${VAR} substitution, which Woodpecker does with the pipeline's variables before reading a file",
    "WOODPECKER_PLUGINS_PRIVILEGED on the server: assumed unset",
    "the repository's trusted settings (security, network, volumes): assumed off",
)
READ_EXTENSIONS = (".yaml", ".yml")
UNREAD_NOTE = (
    "Woodpecker reads only the .yaml and .yml files of a config folder (its default extensions); it "
    "would skip this one unless it is the repository's own configured config path. Checked all the same."
)


def worst_first(findings: Sequence[Finding]) -> list[Finding]:
    """Blocking errors, then warnings by kind; the order within each kind kept."""
    return sorted(
        findings, key=lambda f: (not f.blocking, 0 if f.blocking else _WARNING_RANK.get(f.source, 0))
    )


def pointer(path: Path) -> str:
    """A path as a JSON Pointer (RFC 6901): `/steps/0/settings`, `` for the whole document."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "file": f.file,
        "line": f.line,
        "column": f.column,
        "severity": "error" if f.blocking else "warning",
        "source": f.source,
        "rule": f.rule,
        "message": f.message,
        "pointer": pointer(f.path),
        "field": f.field,
        **({"key": f.key} if f.key else {}),
    }


def _full(files: Sequence[str], findings: Sequence[Finding]) -> dict[str, Any]:
    blocking = sum(f.blocking for f in findings)
    return {
        **CALLER_MARKERS,
        "valid": blocking == 0,
        "errors": blocking,
        "warnings": len(findings) - blocking,
        "files": [_file(name, findings) for name in files],
        "findings": [_finding(f) for f in findings],
        "checked_against": CHECKED_AGAINST,
        "not_checked": list(NOT_CHECKED),
    }


def _read(name: str) -> bool:
    return name.endswith(READ_EXTENSIONS)


def _file(name: str, findings: Sequence[Finding]) -> dict[str, Any]:
    entry = {
        "file": name,
        "workflow": workflow_name(name),
        "errors": sum(f.blocking for f in findings if f.file == name),
        "warnings": sum(not f.blocking for f in findings if f.file == name),
    }
    return entry if _read(name) else {**entry, "note": UNREAD_NOTE}


def _within(full: dict[str, Any], budget: int) -> dict[str, Any]:
    cap = FINDINGS_CAP
    while True:
        out = dict(full, findings=full["findings"][:cap])
        if len(full["findings"]) > cap:
            out["dropped"] = len(full["findings"]) - cap
        if size(out) <= budget or cap == 0:
            return out
        cap = cap * 3 // 4 if cap > 3 else cap - 1


def headline(files: Sequence[str], findings: Sequence[Finding], shown: int | None = None) -> str:
    """One line a person would say, with no text of the files in it. `findings` worst first;
    `shown`: how many of them the answer keeps (all when None)."""
    blocking = [i for i, f in enumerate(findings) if f.blocking]
    warnings = len(findings) - len(blocking)
    where = f"{len(files)} file" + ("" if len(files) == 1 else "s")
    unread = sum(not _read(name) for name in files)
    if unread:
        several = "s" if unread > 1 else ""
        where += f" ({unread} file{several} Woodpecker would not read for its name: files[].note)"
    if not findings:
        return (
            f"No problem found in {where}: Woodpecker's linter and schema accept it "
            "(what this cannot see: not_checked)"
        )
    f = findings[0]
    at = f"{'findings[0]' if shown != 0 else 'the first'} at line {f.line}, column {f.column} ({f.rule})"
    if shown is not None and shown < len(findings):
        at += f"; showing {shown} of {len(findings)}"
    if blocking:
        return (
            f"{len(blocking)} blocking error(s) and {warnings} warning(s) in {where}: Woodpecker would end "
            f"the pipeline as error; first: {at}"
        )
    return f"No blocking error in {where}, {warnings} warning(s): Woodpecker would run it and list them; first: {at}"


def shape_config_check(
    files: Sequence[str],
    findings: Sequence[Finding],
    *,
    budget: int = RESULT_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    ordered = worst_first(findings)
    full = _full(files, ordered)

    def build(inner: int) -> Summarised:
        kept = _within(full, inner)
        return Summarised(kept, headline(files, ordered, len(kept["findings"])))

    return fit(build, budget, text)


_FINDING_PROPERTIES: Mapping[str, Any] = {
    "file": {"type": "string", "description": "The file's name as passed (config: .woodpecker.yaml)."},
    "line": {"type": "integer", "description": "From 1."},
    "column": {"type": "integer", "description": "From 1."},
    "severity": {"type": "string", "enum": ["error", "warning"]},
    "source": {
        "type": "string",
        "enum": ["yaml", "decode", "linter", "builder", "schema", "deprecation", "bad_habit"],
    },
    "rule": {"type": "string"},
    "message": {"type": "string"},
    "pointer": {"type": "string", "description": "JSON Pointer of the value in the file."},
    "field": {"type": "string", "description": "The field as Woodpecker's own error names it."},
    "key": {"type": "string", "description": "A key the schema does not know, as written in the file."},
}

CONFIG_CHECK_PROPERTIES: Mapping[str, Any] = {
    "valid": {"type": "boolean", "description": "No blocking error: Woodpecker would start the pipeline."},
    "errors": {"type": "integer", "description": "Blocking findings."},
    "warnings": {"type": "integer"},
    "files": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "file": {"type": "string"},
                "workflow": {"type": "string", "description": "The workflow's name in Woodpecker's errors."},
                "errors": {"type": "integer"},
                "warnings": {"type": "integer"},
                "note": {"type": "string", "description": "Present when Woodpecker would not read the file."},
            },
        },
    },
    "findings": {"type": "array", "items": {"type": "object", "properties": dict(_FINDING_PROPERTIES)}},
    "dropped": {"type": "integer", "description": "Findings left out to stay under the size budget."},
    "checked_against": {"type": "string"},
    "not_checked": {
        "type": "array",
        "items": {"type": "string"},
        "description": "What the check assumes: it sees the files, not the server, the repository or the event.",
    },
}
