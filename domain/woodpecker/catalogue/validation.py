"""A workflow file checked before it is pushed, as Woodpecker would judge it: sends nothing to Woodpecker."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from domain.tools import Annotations, Param, ToolSpec
from domain.woodpecker.answers import Validated
from domain.woodpecker.catalogue.common import read_tool
from domain.woodpecker.plans import ValidateConfig

# Documented additions beyond the shared catalogue (see the package's docstring).
ADDED: tuple[str, ...] = ("validate_pipeline_config",)

# Characters a call may bring in all (one file or the sum of several), and files at most: Woodpecker's
# own pipelines are a few kilobytes, and every character is parsed and checked on this server's event
# loop (32,000 take about half a second, ruamel.yaml's round-trip reader being pure Python).
MAX_CHARACTERS = 32_000
MAX_FILES = 20
# The name a lone `config` is checked under (the single-file form Woodpecker reads).
CONFIG_FILE = ".woodpecker.yaml"
FILE_NAME = {"minLength": 1, "maxLength": 200, "pattern": r"^[^\x00-\x1f\x7f]+$"}

# Nothing leaves this process: the one read tool whose world is closed.
CLOSED_READ = Annotations(read_only=True, destructive=False, idempotent=True, open_world=False)


def one_of_config_or_files(args: Mapping[str, Any]) -> str | None:
    """The refusal when the call passes neither or both of config and files, or too much text."""
    if "config" in args and "files" in args:
        return (
            "pass config or files, not both; put every file in files (file name to text), "
            "or pass the one file alone as config."
        )
    if "config" not in args and "files" not in args:
        return (
            "nothing to check; pass config (the text of one workflow file) or files (file name to text, "
            "for several, such as {'.woodpecker/build.yaml': '...'})."
        )
    files = args.get("files", {})
    if "files" in args and not files:
        return "files is empty; pass at least one file name with its text, or pass config."
    if len(files) > MAX_FILES:
        return f"files holds {len(files)} files, at most {MAX_FILES} a call; check them in several calls."
    total = len(args.get("config", "")) + sum(len(text) for text in files.values())
    if total > MAX_CHARACTERS:
        what = "config holds" if "config" in args else "the files hold"
        return (
            f"{what} {total} characters, at most {MAX_CHARACTERS} a call; check one file at a time, "
            "or split a longer file where its steps allow."
        )
    return None


TOOLS: tuple[ToolSpec, ...] = (
    replace(
        read_tool(
            "validate_pipeline_config",
            group="pipelines",
            untrusted_output=True,
            description=(
                "Checks workflow files before a push as Woodpecker would: YAML, its schema and linter. Each "
                "finding has line and column; an error would fail the pipeline. Sends nothing to Woodpecker."
            ),
            params=(
                Param(
                    "config",
                    "string",
                    False,
                    "One workflow file's text. Or files, not both.",
                ),
                Param(
                    "files",
                    "object",
                    False,
                    "File name to text, for several files (.woodpecker/*.yaml).",
                    # How many and how long: one_of_config_or_files, whose refusal says what to do instead.
                    constraints={"propertyNames": FILE_NAME, "additionalProperties": {"type": "string"}},
                ),
            ),
            endpoints=(),
            notes=(
                "Sends nothing to Woodpecker and needs no token: the check runs on this server.",
                "Mirrors Woodpecker 3.17's linter (pipeline/frontend/yaml/linter) for a repository with no "
                "trusted settings and no WOODPECKER_PLUGINS_PRIVILEGED, with the JSON schema check-jsonschema "
                "vendors; schema findings are warnings, as in Woodpecker (docs/adr/0083).",
                f"At most {MAX_FILES} files and {MAX_CHARACTERS} characters a call.",
                "Also warns when a workflow's depends_on names one no file passed defines (Woodpecker drops it "
                "silently); not_checked lists what it cannot see (filters, secrets, images, ${VAR}).",
                "Findings come worst first. The summary gives counts, lines and columns only: file names, step "
                "names, keys and values stay in the findings' file, pointer, field and key; the answer is "
                "marked untrusted as the caller's text (source: caller).",
            ),
            answer=Validated(),
            plan=ValidateConfig(),
        ),
        annotations=CLOSED_READ,
        arguments_check=one_of_config_or_files,
    ),
)
