"""The WorkflowSyntax adapter: ruamel.yaml's marks turned into lines and columns from 1, the YAML
parser's faults, and Woodpecker's schema as check-jsonschema vendors it, read without importing it."""

import io
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from adapters.ruamel_workflow_syntax import RuamelWorkflowSyntax, vendored_schema
from domain.woodpecker.workflow_lint import Mark, Parsed, SchemaFault, YamlFault, check_file
from ports.workflow_syntax import WorkflowSyntax

SYNTAX: WorkflowSyntax = RuamelWorkflowSyntax()

CONFIG = """when:
  - event: manual
steps:
  - name: build
    image: golang
    commands:
      - go build
    privileged: true
"""


def test_marks_are_lines_and_columns_from_one() -> None:
    parsed = SYNTAX.parse(CONFIG)
    assert isinstance(parsed, Parsed)
    assert parsed.keys[("steps", 0, "privileged")] == Mark(8, 5)
    assert parsed.values[("steps", 0, "privileged")] == Mark(8, 17)
    assert parsed.values[("steps", 0, "commands", 0)] == Mark(7, 9)
    assert parsed.document["steps"][0]["privileged"] is True and parsed.text == CONFIG
    [found] = check_file("build.yaml", parsed, SYNTAX.schema_faults)
    assert (found.rule, found.line, found.column, found.blocking) == ("untrusted_privileged", 8, 5, True)


def test_a_yaml_fault_says_where_the_parser_stopped() -> None:
    fault = SYNTAX.parse("steps:\n  - name: build\n    image: sh\n   commands: [echo]\n")
    assert isinstance(fault, YamlFault) and (fault.line, fault.column) == (4, 4)
    duplicate = SYNTAX.parse("steps: []\nsteps: []\n")
    assert isinstance(duplicate, YamlFault) and duplicate.line == 2


def test_a_duplicate_key_says_both_lines_and_points_at_it_without_a_value() -> None:
    big = "x" * 5000
    text = f"steps:\n  build:\n    image: sh\n    commands: [{big}]\n  build:\n    image: alpine\n"
    fault = SYNTAX.parse(text)
    assert isinstance(fault, YamlFault) and (fault.line, fault.column) == (5, 3)
    assert fault.problem == "duplicate key at line 5; first defined at line 2"
    assert fault.path == ("steps", "build")
    [found] = check_file("w.yaml", fault, SYNTAX.schema_faults)
    assert (found.rule, found.blocking, found.path) == ("duplicate_key", True, ("steps", "build"))
    assert big not in found.message and "build" not in found.message and "alpine" not in found.message


def test_the_schema_names_an_unknown_key_in_the_path_and_keeps_the_message_its_own() -> None:
    parsed = SYNTAX.parse("pipline: true\n" + CONFIG.replace("event: manual", "event: [manual, pushh]"))
    assert isinstance(parsed, Parsed)
    faults = SYNTAX.schema_faults(parsed.document)
    assert (
        SchemaFault(("pipline",), "additionalProperties", "Additional property is not allowed", True)
        in faults
    )
    [enum] = [f for f in faults if f.keyword == "enum"]
    assert enum.path == ("when", 0, "event", 1) and "pushh" not in enum.message and '"manual"' in enum.message


def test_the_schema_is_check_jsonschemas_read_without_importing_its_command_line() -> None:
    assert vendored_schema()["$schema"].startswith("http://json-schema.org/draft-07/")
    code = (
        "import sys; from adapters.ruamel_workflow_syntax import RuamelWorkflowSyntax as R; "
        "r = R(); r.schema_faults({'steps': []}); print('check_jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


words = st.text(alphabet="abcxyz-", min_size=1, max_size=8)


@given(
    st.lists(
        st.tuples(words, st.lists(words, min_size=1, max_size=3)),
        min_size=1,
        max_size=5,
        unique_by=lambda s: s[0],
    )
)
def test_every_step_key_is_found_on_the_line_it_is_written(steps: list[tuple[str, list[str]]]) -> None:
    doc = {"steps": [{"name": n, "image": "sh", "commands": c} for n, c in steps]}
    out = io.StringIO()
    YAML().dump(doc, out)
    text = out.getvalue()
    parsed = SYNTAX.parse(text)
    assert isinstance(parsed, Parsed) and parsed.document == doc
    lines = text.splitlines()
    for i, (_, commands) in enumerate(steps):
        mark = parsed.keys[("steps", i, "name")]
        assert lines[mark.line - 1][mark.column - 1 :].startswith("name:")
        value = parsed.values[("steps", i, "commands", len(commands) - 1)]
        last = commands[-1]  # quoted, the value starts at its quote
        assert lines[value.line - 1][value.column - 1 :].startswith((last, f"'{last}", f'"{last}'))


def test_every_schema_keyword_is_said_in_the_schemas_words_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"const": "yes"},
            "c": {"type": "array", "maxItems": 1},
            "d": {"required": ["image"]},
        },
    }
    syntax = RuamelWorkflowSyntax(schema)
    faults = {f.path: f for f in syntax.schema_faults({"a": 1, "b": "Zq9", "c": ["Zq9", "Zq9"], "d": {}})}
    assert faults[("a",)].message == "Invalid type. Expected: string"
    assert faults[("b",)].message == 'must be "yes"'
    assert faults[("c",)].keyword == "maxItems" and "Zq9" not in faults[("c",)].message
    assert faults[("d",)].message == "image is required"
