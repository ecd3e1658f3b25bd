"""The workflow linter (domain/woodpecker/workflow_lint.py) and its answer (results/config_check.py),
property-tested over generated workflows: what blocks is what Woodpecker's linter blocks on, every
finding points at the value it is about, the schema never blocks, and no pushed text enters a message
or the summary. The documents are plain values with a mark for every node (no YAML parser here)."""

import json
from collections.abc import Mapping
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import output_schema
from domain.woodpecker.results.config_check import headline, pointer, shape_config_check
from domain.woodpecker.workflow_lint import (
    Finding,
    Mark,
    Parsed,
    Path,
    SchemaFault,
    Trust,
    YamlFault,
    check_file,
    check_files,
    match_image,
    match_image_dynamic,
    workflow_name,
)

MARKER = "Zq9"  # every pushed name carries it; no sentence of ours does
TOOL = WOODPECKER_TOOLS.get("validate_pipeline_config")
SCHEMA = jsonschema.Draft202012Validator(output_schema(TOOL))
TRUST_KEYS = {
    "privileged": True,
    "volumes": ["/tmp:/tmp"],
    "devices": ["/dev/null"],
    "tmpfs": ["/run"],
    "dns": ["1.1.1.1"],
    "dns_search": ["example.org"],
    "extra_hosts": ["a:1.2.3.4"],
    "network_mode": "host",
}


def no_schema(_document: Any) -> tuple[SchemaFault, ...]:
    return ()


def marked(document: Any) -> Parsed:
    """The document with a distinct mark for every node, in document order (line n: the n-th node)."""
    values: dict[Path, Mark] = {}
    keys: dict[Path, Mark] = {}

    def walk(value: Any, path: Path) -> None:
        values[path] = Mark(len(values) + len(keys) + 1, 2 * len(path) + 1)
        if isinstance(value, dict):
            for k, v in value.items():
                keys[path + (k,)] = Mark(len(values) + len(keys) + 1, 2 * len(path) + 1)
                walk(v, path + (k,))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, path + (i,))

    walk(document, ())
    return Parsed(document, values, keys, json.dumps(document))


names = st.text(alphabet="abcdefgh-_", min_size=1, max_size=6).map(lambda s: f"{MARKER}{s}")


@st.composite
def steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Steps that Woodpecker accepts: an image and commands, or a plugin's settings alone, with
    dependencies only on steps before them, and an event filter each."""
    count = draw(st.integers(1, 5))
    chosen = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    out: list[dict[str, Any]] = []
    for i, name in enumerate(chosen):
        step: dict[str, Any] = {"name": name, "image": draw(st.sampled_from(["alpine", "golang:1.22", "sh"]))}
        if draw(st.booleans()):
            step["commands"] = draw(st.lists(names, min_size=1, max_size=3))
        else:
            step["settings"] = {draw(names): draw(names)}
        if i and draw(st.booleans()):
            step["depends_on"] = [chosen[draw(st.integers(0, i - 1))]]
        step["when"] = {"event": draw(st.sampled_from(["push", "manual", ["push", "manual"]]))}
        out.append(step)
    return out


@st.composite
def workflows(draw: st.DrawFn) -> dict[str, Any]:
    return {"skip_clone": True, "steps": draw(steps())}


def blocking(found: tuple[Finding, ...]) -> list[tuple[str, Path]]:
    return sorted((f.rule, f.path) for f in found if f.blocking)


@given(workflows())
def test_a_workflow_woodpecker_accepts_has_no_blocking_finding_and_no_warning(doc: dict[str, Any]) -> None:
    assert check_file("w.yaml", marked(doc), no_schema) == ()


@given(workflows(), st.data())
def test_each_key_that_needs_trust_blocks_at_that_key_and_trust_lifts_it(
    doc: dict[str, Any], data: Any
) -> None:
    index = data.draw(st.integers(0, len(doc["steps"]) - 1))
    key = data.draw(st.sampled_from(sorted(TRUST_KEYS)))
    doc["steps"][index][key] = TRUST_KEYS[key]
    found = check_file("w.yaml", marked(doc), no_schema)
    assert blocking(found) == [(f"untrusted_{key}", ("steps", index, key))]
    [f] = [f for f in found if f.blocking]
    assert (f.line, f.column) == (marked(doc).keys[("steps", index, key)].line, 5)
    assert f.field == f"steps.{doc['steps'][index]['name']}"
    assert check_file("w.yaml", marked(doc), no_schema, trust=Trust(True, True, True)) == ()


@given(workflows(), st.data())
def test_settings_beside_commands_or_entrypoint_block_and_beside_environment_warn(
    doc: dict[str, Any], data: Any
) -> None:
    index = data.draw(st.integers(0, len(doc["steps"]) - 1))
    step = doc["steps"][index]
    step.pop("commands", None)
    step["settings"] = {"a": 1}
    other = data.draw(st.sampled_from(["commands", "entrypoint", "environment"]))
    step[other] = {"A": "b"} if other == "environment" else ["x"]
    found = check_file("w.yaml", marked(doc), no_schema)
    if other == "environment":
        assert blocking(found) == []
        assert [(f.rule, f.path) for f in found] == [("environment_with_settings", ("steps", index, other))]
    else:
        assert blocking(found) == [(f"{other}_with_settings", ("steps", index, "settings"))]


@given(workflows(), st.data())
def test_a_missing_image_or_dependency_blocks(doc: dict[str, Any], data: Any) -> None:
    index = data.draw(st.integers(0, len(doc["steps"]) - 1))
    if data.draw(st.booleans()):
        doc["steps"][index].pop("image")
        assert blocking(check_file("w.yaml", marked(doc), no_schema)) == [("missing_image", ("steps", index))]
    else:
        doc["steps"][index]["depends_on"] = [f"{MARKER}-nowhere"]
        expected = [("missing_dependency", ("steps", index, "depends_on"))]
        assert blocking(check_file("w.yaml", marked(doc), no_schema)) == expected
        doc["steps"][index]["depends_on"] = [{"name": f"{MARKER}-nowhere", "optional": True}]
        assert blocking(check_file("w.yaml", marked(doc), no_schema)) == []


@given(workflows(), st.lists(st.tuples(st.lists(names, max_size=3), st.sampled_from(["enum", "type"]))))
def test_the_schema_only_warns(doc: dict[str, Any], faults: list[tuple[list[str], str]]) -> None:
    given_faults = tuple(SchemaFault(tuple(p), k, "must be one of the following: a") for p, k in faults)
    found = check_file("w.yaml", marked(doc), lambda _: given_faults)
    assert blocking(found) == []
    assert [(f.source, f.blocking) for f in found] == [("schema", False)] * len(faults)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | names,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                names
                | st.sampled_from(
                    ["steps", "image", "when", "commands", "privileged", "settings", "services", "depends_on"]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=25,
    )
)
def test_any_document_gets_findings_that_point_into_it_and_no_pushed_text_in_a_message(doc: Any) -> None:
    parsed = marked(doc)
    found = check_file(f"{MARKER}.yaml", parsed, no_schema)
    assert list(found) == sorted(found, key=lambda f: (f.line, f.column))
    for f in found:
        assert MARKER not in f.message, f
        # The finding sits where its path (or the nearest node above it) starts.
        assert Mark(f.line, f.column) in {*parsed.values.values(), *parsed.keys.values()}
    shaped = shape_config_check([f"{MARKER}.yaml"], found)
    SCHEMA.validate(shaped.structured)
    assert MARKER not in headline([f"{MARKER}.yaml"], found)


@given(st.dictionaries(names.map(lambda n: f".woodpecker/{n}.yaml"), workflows(), min_size=1, max_size=4))
def test_several_files_answer_in_file_order_and_one_bad_file_blocks_the_whole(
    files: Mapping[str, Any],
) -> None:
    parsed = {name: marked(doc) for name, doc in files.items()}
    assert check_files(parsed, no_schema) == ()
    bad = next(iter(files))
    parsed[bad] = YamlFault(3, 7, "did not find expected key")
    found = check_files(parsed, no_schema)
    assert [(f.file, f.line, f.column, f.blocking, f.source) for f in found] == [(bad, 3, 7, True, "yaml")]
    shaped = shape_config_check(list(files), found)
    assert shaped.structured["valid"] is False and shaped.structured["errors"] == 1
    assert [e["errors"] for e in shaped.structured["files"]] == [1] + [0] * (len(files) - 1)


def test_a_decoding_error_is_the_only_finding_as_woodpecker_stops_there() -> None:
    doc = {"steps": [{"name": "a", "image": "sh", "commands": {"run": "x"}, "privileged": "maybe"}]}
    found = check_file("w.yaml", marked(doc), lambda _: (SchemaFault((), "type", "x"),))
    assert [(f.rule, f.path, f.blocking) for f in found] == [
        ("wrong_type", ("steps", 0, "commands"), True),
        ("wrong_type", ("steps", 0, "privileged"), True),
    ]
    assert {f.source for f in found} == {"decode"}


def test_yaml_1_1_words_decode_into_a_flag_as_go_yaml_decodes_them() -> None:
    doc = {
        "steps": [{"name": "a", "image": "sh", "commands": "x", "pull": "yes", "when": {"event": "manual"}}]
    }
    assert check_file("w.yaml", marked(doc), no_schema) == ()


def test_the_bad_habits_and_deprecations_warn_as_woodpecker_words_them() -> None:
    doc = {
        "runs_on": ["success"],
        "steps": [{"name": "a", "image": "sh", "commands": "echo $CI_COMMIT_PRERELEASE"}],
    }
    parsed = marked(doc)
    parsed = Parsed(doc, parsed.values, parsed.keys, "runs_on: [success]\nsteps: # ${CI_COMMIT_PRERELEASE}\n")
    found = check_file(".woodpecker/build.yaml", parsed, no_schema)
    assert sorted((f.source, f.field, f.blocking) for f in found) == [
        ("bad_habit", "steps.a", False),
        ("deprecation", "build", False),
        ("deprecation", "build.runs_on", False),
    ]
    [variable] = [f for f in found if f.rule == "deprecated_variable"]
    assert (variable.line, variable.column) == (2, 10)  # in a comment too, as Woodpecker scans the raw text


def test_steps_missing_or_of_the_wrong_kind_block() -> None:
    assert [f.rule for f in check_file("w.yaml", marked({"when": {"event": "manual"}}), no_schema)] == [
        "missing_steps"
    ]
    assert [f.rule for f in check_file("w.yaml", marked({"steps": []}), no_schema)] == ["missing_steps"]
    assert [f.rule for f in check_file("w.yaml", marked({"steps": "build"}), no_schema)] == ["wrong_type"]
    assert [f.rule for f in check_file("w.yaml", marked(["steps"]), no_schema)] == ["wrong_type"]


def test_the_formerly_privileged_plugins_block_unless_privileged_or_listed() -> None:
    step = {"name": "a", "image": "plugins/docker:20", "settings": {"repo": "a/b"}, "when": {"event": "push"}}
    doc = {"steps": [step]}
    assert blocking(check_file("w.yaml", marked(doc), no_schema)) == [
        ("formerly_privileged_plugin", ("steps", 0, "image"))
    ]
    listed = check_file("w.yaml", marked(doc), no_schema, privileged_plugins=("plugins/docker",))
    assert listed == ()


def test_images_match_as_dockers_reference_names_them() -> None:
    assert match_image("docker.io/plugins/docker:20", ["plugins/docker"])
    assert match_image("library/alpine", ["alpine:3"])
    assert not match_image("plugins/docker-x", ["plugins/docker"])
    assert match_image_dynamic("quay.io/woodpeckerci/plugin-git:2", ["quay.io/woodpeckerci/plugin-git"])
    assert not match_image_dynamic("woodpeckerci/plugin-git:1", ["docker.io/woodpeckerci/plugin-git:2.9.2"])
    assert match_image_dynamic("woodpeckerci/plugin-git", ["woodpeckerci/plugin-git:latest"])


def test_a_workflow_is_named_by_its_file_and_a_path_by_its_json_pointer() -> None:
    assert workflow_name(".woodpecker/build.yaml") == "build" and workflow_name("deploy.yml") == "deploy"
    assert pointer(("steps", 0, "a/b~c")) == "/steps/0/a~1b~0c" and pointer(()) == ""


def test_a_clone_image_off_the_trusted_list_warns_that_netrc_is_not_injected() -> None:
    doc = {
        "when": {"event": "push"},
        "clone": {"git": {"image": "alpine/git"}},
        "steps": [{"name": "a", "image": "sh", "commands": "x"}],
    }
    [found] = check_file("w.yaml", marked(doc), no_schema)
    assert (found.rule, found.blocking, found.field, found.path) == (
        "untrusted_clone_image",
        False,
        "clone.git",
        ("clone", "git", "image"),
    )
    doc["clone"] = {"git": {"image": "quay.io/woodpeckerci/plugin-git:2.6"}}
    assert check_file("w.yaml", marked(doc), no_schema) == ()


def test_an_answer_too_large_for_its_budget_keeps_the_first_findings_and_counts_the_rest() -> None:
    doc = {"steps": [{"name": f"s{i}", "image": "sh", "commands": "x"} for i in range(400)]}
    found = check_file("w.yaml", marked(doc), no_schema)
    assert len(found) == 400
    shaped = shape_config_check(["w.yaml"], found, budget=20_000)
    kept = shaped.structured["findings"]
    assert 0 < len(kept) < 200 and shaped.structured["dropped"] == 400 - len(kept)
    assert shaped.structured["warnings"] == 400  # the counts are the whole answer's
    assert [f["pointer"] for f in kept] == [f"/steps/{i}" for i in range(len(kept))]


def test_a_cut_answer_keeps_the_blocking_errors_first_and_its_headline_points_into_what_it_kept() -> None:
    # 600 warnings before the one blocking error, as a big file's bad habits come before a late mistake.
    doc = {"steps": [{"name": f"s{i}", "image": "sh", "commands": "x"} for i in range(600)]}
    doc["steps"].append({"name": "late", "commands": "x"})
    found = check_file("w.yaml", marked(doc), no_schema)
    assert [f.rule for f in found if f.blocking] == ["missing_image"]
    shaped = shape_config_check(["w.yaml"], found, budget=20_000)
    kept = shaped.structured["findings"]
    assert kept[0]["rule"] == "missing_image" and kept[0]["severity"] == "error"
    summary = shaped.text.splitlines()[1]
    assert f"showing {len(kept)} of {len(found)}" in summary
    assert "findings[0] at line" in summary
    first = int(summary.split("findings[", 1)[1].split("]", 1)[0])
    assert first < len(kept)


def test_a_workflow_depending_on_one_no_file_defines_warns_that_woodpecker_drops_it() -> None:
    step = {"name": "s", "image": "sh", "commands": "x", "when": {"event": "push"}}
    files = {
        ".woodpecker/build.yaml": marked({"steps": [step]}),
        ".woodpecker/deploy.yaml": marked({"depends_on": ["build", "lint"], "steps": [step]}),
        ".woodpecker/notify.yml": marked({"depends_on": ["deploy"], "steps": [step]}),
        ".woodpecker/docs.yaml": marked(
            {"depends_on": [{"name": "lint", "optional": True}], "steps": [step]}
        ),
    }
    found = check_files(files, no_schema)
    dropped = [(f.file, f.blocking) for f in found]
    assert dropped == [(".woodpecker/deploy.yaml", False), (".woodpecker/notify.yml", False)]
    assert {f.rule for f in found} == {"missing_workflow_dependency"}
    assert all(f.path == ("depends_on",) and "another file of the repository" in f.message for f in found)
    shaped = shape_config_check(list(files), found)
    assert "No problem found" not in shaped.text.splitlines()[1]
    assert shaped.structured["valid"] is True  # Woodpecker creates the pipeline, without them
    lone = check_files({".woodpecker.yaml": marked({"depends_on": "build", "steps": [step]})}, no_schema)
    assert [f.rule for f in lone] == ["missing_workflow_dependency"]


def test_a_file_woodpecker_would_not_read_gets_a_note_and_the_answer_says_what_it_did_not_check() -> None:
    doc = {"when": {"event": "push"}, "steps": [{"name": "s", "image": "sh", "commands": "x"}]}
    files = [".woodpecker/a.yaml", ".woodpecker/b.yml", ".woodpecker/c.txt"]
    found = check_files({f: marked(doc) for f in files}, no_schema)
    shaped = shape_config_check(files, found)
    notes = [f.get("note") for f in shaped.structured["files"]]
    assert notes[:2] == [None, None] and ".yaml" in (notes[2] or "")
    assert "1 file Woodpecker would not read" in shaped.text.splitlines()[1]
    not_checked = shaped.structured["not_checked"]
    for what in ("when", "secret", "image", "${VAR}", "WOODPECKER_PLUGINS_PRIVILEGED", "trusted"):
        assert any(what in item for item in not_checked), what
    assert SCHEMA.is_valid(shaped.structured)
    assert shaped.text.count("WOODPECKER_PLUGINS_PRIVILEGED") == 1


def test_a_key_the_schema_does_not_know_is_named_in_data_and_a_v1_key_gets_its_migration() -> None:
    doc = {
        "pipeline": {"old": {"image": "sh"}},
        "steps": [
            {"name": "s", "image": "sh", "commands": "x", "secrets": ["token"], f"{MARKER}k": 1},
            {"name": "late", "commands": "x"},
        ],
    }
    faults = tuple(
        SchemaFault(p, "additionalProperties", "Additional property is not allowed", True)
        for p in [("pipeline",), ("steps", 0, "secrets"), ("steps", 0, f"{MARKER}k")]
    )
    found = check_file("w.yaml", marked(doc), lambda _: faults)
    unknown = {f.path[-1]: f for f in found if f.rule == "schema_additionalProperties"}
    assert {k: f.key for k, f in unknown.items()} == {k: k for k in ("pipeline", "secrets", f"{MARKER}k")}
    assert all(MARKER not in f.message for f in found)
    assert "`steps`" in unknown["pipeline"].message
    assert "from_secret" in unknown["secrets"].message and "environment" in unknown["secrets"].message
    shaped = shape_config_check(["w.yaml"], found)
    kept = shaped.structured["findings"]
    # The worst first: the blocking error (written last), the schema's warnings, then the bad habits.
    assert [(f["severity"], f["source"]) for f in kept] == [
        ("error", "linter"),
        *[("warning", "schema")] * 3,
        *[("warning", "bad_habit")] * 2,
    ]
    assert {f["key"] for f in kept if "key" in f} == {"pipeline", "secrets", f"{MARKER}k"}
    SCHEMA.validate(shaped.structured)
    assert MARKER not in shaped.text.splitlines()[1]


def test_the_trust_and_privileged_plugin_errors_say_what_they_depend_on_and_the_fix() -> None:
    doc = {
        "when": {"event": "push"},
        "steps": [
            {
                "name": "a",
                "image": "sh",
                "commands": "x",
                "privileged": True,
                "volumes": ["/a:/a"],
                "dns": ["1.1.1.1"],
            },
            {"name": "b", "image": "plugins/docker", "settings": {"repo": "r"}},
        ],
    }
    found = {f.rule: f.message for f in check_file("w.yaml", marked(doc), no_schema)}
    for rule, setting in (
        ("untrusted_privileged", "trusted_security"),
        ("untrusted_volumes", "trusted_volumes"),
        ("untrusted_dns", "trusted_network"),
    ):
        assert "Insufficient trust level" in found[rule]  # Woodpecker's words first
        assert setting in found[rule] and "update_repository" in found[rule] and "admin" in found[rule]
    plugin = found["formerly_privileged_plugin"]
    assert "WOODPECKER_PLUGINS_PRIVILEGED" in plugin and "server" in plugin and "privileged: true" in plugin


def test_blocking_errors_keep_file_order_whatever_found_them() -> None:
    files = {
        "a.yaml": marked({"steps": [{"name": "s", "commands": "x", "when": {"event": "push"}}]}),
        "b.yaml": YamlFault(3, 1, "duplicate key at line 3; first defined at line 1", "duplicate_key"),
    }
    shaped = shape_config_check(list(files), check_files(files, no_schema))
    assert [(f["file"], f["rule"]) for f in shaped.structured["findings"]] == [
        ("a.yaml", "missing_image"),
        ("b.yaml", "duplicate_key"),
    ]
