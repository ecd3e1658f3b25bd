"""Workflow files that validate_pipeline_config is held to a real Woodpecker with (test_real_config.py).

Each case is the `.woodpecker/` folder of one commit: file name to text. Every case runs on a manual
trigger (no `when` filters the manual event out), so Woodpecker either starts it or ends it at once as
an `error` pipeline with its `errors[]`. The names say what a case is; what our tool finds is compared
with what the real server does, never with an expectation written here.
"""

_STEP = """steps:
  - name: build
    image: sh
    commands:
      - echo building
"""
_MANUAL = """when:
  - event: manual
"""


def _file(text: str) -> dict[str, str]:
    return {".woodpecker/build.yaml": "skip_clone: true\n" + text}


CASES: dict[str, dict[str, str]] = {
    # --------------------------------------------------------------------------------- accepted
    "plain": _file(_STEP),
    "event_filter_at_the_root": _file(_MANUAL + _STEP),
    "event_filter_on_the_step": _file(
        "steps:\n  - name: build\n    image: sh\n    commands: echo one\n    when:\n      event: [push, manual]\n"
    ),
    "steps_as_a_map": _file("steps:\n  build:\n    image: sh\n    commands:\n      - echo building\n"),
    # Woodpecker drops b without a word (its builder's filterMissingDependencies) and runs a: ours warns.
    "depends_on_a_missing_workflow": {
        ".woodpecker/a.yaml": "skip_clone: true\n" + _MANUAL + _STEP,
        ".woodpecker/b.yaml": "skip_clone: true\ndepends_on: [nowhere]\n"
        + _MANUAL
        + _STEP.replace("build", "test"),
    },
    "two_files": {
        ".woodpecker/a.yaml": "skip_clone: true\n" + _MANUAL + _STEP,
        ".woodpecker/b.yaml": "skip_clone: true\n" + _MANUAL + _STEP.replace("build", "test"),
    },
    "depends_on_a_step": _file(
        _MANUAL
        + _STEP
        + "  - name: test\n    image: sh\n    commands: [echo testing]\n    depends_on: [build]\n"
    ),
    "network_mode_none": _file(_MANUAL + _STEP + "    network_mode: none\n"),
    "plugin_settings": _file(
        _MANUAL + "steps:\n  - name: notify\n    image: plugins/slack\n    settings:\n      channel: dev\n"
    ),
    "settings_with_environment": _file(
        _MANUAL
        + "steps:\n  - name: notify\n    image: plugins/slack\n    settings:\n      channel: dev\n"
        + "    environment:\n      LEVEL: info\n"
    ),
    "unknown_when_event": _file("when:\n  - event: [manual, pushh]\n" + _STEP),
    "unknown_top_level_key": _file(_MANUAL + "pipline: true\n" + _STEP),
    "misspelt_step_key": _file(_MANUAL + _STEP + "    enviroment:\n      A: b\n"),
    "pull_as_yes": _file(_MANUAL + _STEP + "    pull: yes\n"),
    "clone_image_off_the_trusted_list": {
        ".woodpecker/build.yaml": "clone:\n  git:\n    image: alpine/git\n" + _MANUAL + _STEP
    },
    "a_when_item_without_an_event": _file(_STEP + "    when:\n      - event: manual\n      - branch: main\n"),
    "depends_on_an_optional_missing_step": _file(
        _MANUAL + _STEP + "    depends_on:\n      - name: lint\n        optional: true\n"
    ),
    "runs_on_deprecated": _file(_MANUAL + "runs_on: [success, failure]\n" + _STEP),
    "deprecated_variable": _file(_MANUAL + _STEP + "      - echo $CI_COMMIT_PRERELEASE\n"),
    "step_without_event_filter_among_filtered": _file(
        _STEP
        + "  - name: test\n    image: sh\n    commands: [echo testing]\n    when:\n      event: manual\n"
    ),
    # ---------------------------------------------------------------------------------- blocked
    "yaml_syntax_error": _file("steps:\n  - name: build\n    image: sh\n   commands: [echo]\n"),
    "unclosed_quote": _file('steps:\n  - name: "build\n    image: sh\n'),
    "no_steps": _file(_MANUAL),
    "empty_steps": _file(_MANUAL + "steps: []\n"),
    "missing_image": _file(_MANUAL + "steps:\n  - name: build\n    commands:\n      - echo building\n"),
    "commands_with_settings": _file(
        _MANUAL
        + "steps:\n  - name: publish\n    image: plugins/s3\n    commands: [echo hi]\n"
        + "    settings:\n      bucket: b\n"
    ),
    "entrypoint_with_settings": _file(
        _MANUAL
        + "steps:\n  - name: publish\n    image: plugins/s3\n    entrypoint: [/bin/sh]\n"
        + "    settings:\n      bucket: b\n"
    ),
    "privileged": _file(_MANUAL + _STEP + "    privileged: true\n"),
    "volumes": _file(_MANUAL + _STEP + "    volumes:\n      - /tmp:/tmp\n"),
    "network_mode_host": _file(_MANUAL + _STEP + "    network_mode: host\n"),
    "dns_and_extra_hosts": _file(_MANUAL + _STEP + "    dns: [1.1.1.1]\n    extra_hosts: ['a:1.2.3.4']\n"),
    "devices_and_tmpfs": _file(_MANUAL + _STEP + "    devices: [/dev/null]\n    tmpfs: [/run]\n"),
    "depends_on_a_missing_step": _file(_MANUAL + _STEP + "    depends_on: [compile]\n"),
    "steps_as_a_string": _file(_MANUAL + "steps: build\n"),
    "commands_as_a_map": _file(
        _MANUAL + "steps:\n  - name: build\n    image: sh\n    commands:\n      run: x\n"
    ),
    "privileged_as_a_word": _file(_MANUAL + _STEP + "    privileged: maybe\n"),
    "docker_plugin_unprivileged": _file(
        _MANUAL + "steps:\n  - name: image\n    image: plugins/docker\n    settings:\n      repo: a/b\n"
    ),
    "command_with_a_colon": _file(
        _MANUAL + "steps:\n  - name: build\n    image: sh\n    commands:\n      - echo a: b\n"
    ),
    "duplicate_service_names": _file(
        _MANUAL
        + _STEP
        + "services:\n  - name: db\n    image: sh\n    commands: [echo one]\n"
        + "  - name: db\n    image: sh\n    commands: [echo two]\n"
    ),
    "one_bad_file_of_two": {
        ".woodpecker/a.yaml": "skip_clone: true\n" + _MANUAL + _STEP,
        ".woodpecker/b.yaml": "skip_clone: true\n" + _MANUAL + _STEP + "    privileged: true\n",
    },
}
