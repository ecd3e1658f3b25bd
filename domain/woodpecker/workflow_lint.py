"""Workflow files checked as Woodpecker 3.17 checks them when a pipeline is created, every problem with its line and column.

Woodpecker turns each file into a workflow in three steps (pipeline/frontend/builder/builder.go): it
parses the YAML, decodes it into its types, then lints it (pipeline/frontend/yaml/linter/linter.go).
A YAML or decoding error, or a linter error that is not a warning, ends the pipeline as `error`; the
JSON schema's findings, the deprecations and the bad habits are warnings (`is_warning`), and the
pipeline runs. The rules here mirror that code, read, not copied; the schema's own findings come in
as `SchemaFault`s from a port (the vendored schema is not ours to copy).

Pure: the text arrives parsed (`Parsed`, each node with where it starts) or as the parser's fault.
Every finding's message is our own words or the schema's; what was pushed (step names, keys, values)
stays in `path` and `field`, data fields, never in a message.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from domain.woodpecker.rules import HELD_EVENTS

Path = tuple[str | int, ...]
Source = Literal["yaml", "decode", "linter", "builder", "schema", "deprecation", "bad_habit"]


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a node starts: line and column, both counted from 1."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Parsed:
    """A YAML document as plain values (dicts with string keys, lists, scalars) and where each node
    starts: `values` by its path, `keys` the key of each mapping entry by the path of its value; and
    the text it was read from."""

    document: Any
    values: Mapping[Path, Mark] = field(default_factory=dict)
    keys: Mapping[Path, Mark] = field(default_factory=dict)
    text: str = ""  # the file as written: Woodpecker looks for deprecated variables in it, comments too

    def mark(self, path: Path, *, key: bool = False) -> Mark:
        """The mark of `path` (its key's when `key` and it has one), else its nearest parent's."""
        for n in range(len(path), -1, -1):
            found = (self.keys.get(path[:n]) if key else None) or self.values.get(path[:n])
            if found is not None:
                return found
        return Mark(1, 1)


@dataclass(frozen=True, slots=True)
class YamlFault:
    """The text is not YAML the parser reads: where, and the parser's own words for the problem (or
    ours, with no value of the file in them); `path`: the node it is about, when known."""

    line: int
    column: int
    problem: str
    rule: str = "yaml_syntax"
    path: Path = ()


@dataclass(frozen=True, slots=True)
class SchemaFault:
    """One finding of Woodpecker's JSON schema: the path of the value, the keyword that failed and its
    words, built from the schema alone (an unknown key is named in `path`, not in `message`)."""

    path: Path
    keyword: str
    message: str
    at_key: bool = False  # the last of `path` is a key the schema does not know, inside the object before it


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem. `blocking`: Woodpecker ends the pipeline as `error` for it (else a warning).
    `field`: the field as Woodpecker's own error names it (`steps.build`), pushed names included;
    `key`: a key the schema does not know, as written (data, never in `message`)."""

    file: str
    line: int
    column: int
    blocking: bool
    source: Source
    rule: str
    message: str
    path: Path
    field: str
    key: str = ""


@dataclass(frozen=True, slots=True)
class Trust:
    """The repository's trusted settings (`trusted.security`, `.network`, `.volumes`); none by default."""

    security: bool = False
    network: bool = False
    volumes: bool = False


# Woodpecker's defaults (shared/constant, WOODPECKER_PLUGINS_TRUSTED_CLONE, WOODPECKER_PLUGINS_PRIVILEGED).
TRUSTED_CLONE_PLUGINS = ("docker.io/woodpeckerci/plugin-git", "quay.io/woodpeckerci/plugin-git")
FORMERLY_PRIVILEGED = ("plugins/docker", "plugins/gcr", "plugins/ecr", "woodpeckerci/plugin-docker-buildx")
AREAS = ("clone", "steps", "services")
# Every event Woodpecker knows: those a pipeline can be held for, then the two it never holds.
EVENTS = (*HELD_EVENTS, "cron", "manual")
DEPRECATED_VARIABLES = (
    ("CI_COMMIT_PRERELEASE", "CI_PIPELINE_RELEASE_PRE"),
    ("CI_COMMIT_AUTHOR_AVATAR", "CI_PIPELINE_AVATAR"),
    ("CI_PREV_COMMIT_AUTHOR_AVATAR", "CI_PREV_PIPELINE_AVATAR"),
)
_DEPRECATED = tuple(
    (old, new, re.compile(r"\$\{" + re.escape(old) + r"\}|\$\$?" + re.escape(old) + r"(?![A-Za-z0-9_])"))
    for old, new in DEPRECATED_VARIABLES
)
# go-yaml decodes these words of YAML 1.1 into a typed bool (decode.go), and nothing else but booleans.
_TRUE_WORDS = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"}
_FALSE_WORDS = {"n", "N", "no", "No", "NO", "off", "Off", "OFF"}

# A container's fields by the Go type Woodpecker decodes them into (pipeline/frontend/yaml/types).
_BOOL = ("pull", "detach", "privileged")
_TEXT = ("name", "image", "directory", "failure", "network_mode")
_TEXT_OR_LIST = ("commands", "entrypoint", "dns", "dns_search")
_LIST = ("ports", "devices", "extra_hosts", "tmpfs")
_MAP = ("settings", "environment", "backend_options")

SchemaCheck = Callable[[Any], Sequence[SchemaFault]]

_UNKNOWN_KEY = (
    "Additional property is not allowed: this key (named in `key`) is not one Woodpecker knows here"
)
# Keys of older Woodpeckers the schema no longer knows, by where they stand: what to write instead.
_UNKNOWN_KEY_HINTS: Mapping[Path, str] = {
    ("pipeline",): "Additional property is not allowed: `pipeline` is what Woodpecker before 1.0 called "
    "`steps`; rename the key to `steps`",
    ("step", "secrets"): "Additional property is not allowed: a step's `secrets` list is gone since "
    "Woodpecker 3.0; give each secret as `environment: NAME: {from_secret: secret_name}`",
}


@dataclass(frozen=True, slots=True)
class _Container:
    area: str
    index: str | int  # the key of a mapping of steps, the place in a list
    name: str
    body: Mapping[str, Any]

    @property
    def path(self) -> Path:
        return (self.area, self.index)

    @property
    def field(self) -> str:
        return f"{self.area}.{self.name}"


def workflow_name(file: str) -> str:
    """The workflow's name as Woodpecker's errors give it: the file's name without folder and extension."""
    base = file.rsplit("/", 1)[-1]
    for ext in (".yaml", ".yml"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def woodpecker_name(file: str) -> str:
    """The name a workflow's `depends_on` finds it by (pipeline/frontend/builder SanitizePath): the
    file's name without folder, `.yml` or `.yaml`, and one leading dot."""
    base = file.rsplit("/", 1)[-1].removesuffix(".yml").removesuffix(".yaml")
    return base.removeprefix(".")


def check_files(
    files: Mapping[str, Parsed | YamlFault],
    schema: SchemaCheck,
    *,
    trust: Trust = Trust(),
    privileged_plugins: tuple[str, ...] = (),
) -> tuple[Finding, ...]:
    """Every finding of every file, in file order, then by line and column within each."""
    found: list[Finding] = []
    dropped = _dropped_workflows(files)
    for file, parsed in files.items():
        own = list(check_file(file, parsed, schema, trust=trust, privileged_plugins=privileged_plugins))
        if file in dropped and isinstance(parsed, Parsed):
            mark = parsed.mark(("depends_on",), key=True)
            own.append(
                Finding(
                    file,
                    mark.line,
                    mark.column,
                    False,
                    "builder",
                    "missing_workflow_dependency",
                    "Woodpecker would drop this workflow without a word: it depends on a workflow no file "
                    "here defines (or one dropped so). A workflow of that name in another file of the "
                    "repository satisfies it, if this call did not pass every file.",
                    ("depends_on",),
                    f"{workflow_name(file)}.depends_on",
                )
            )
            own.sort(key=lambda f: (f.line, f.column))
        found.extend(own)
    return tuple(found)


def _dropped_workflows(files: Mapping[str, Parsed | YamlFault]) -> set[str]:
    """The files whose workflow Woodpecker's builder drops (filterMissingDependencies): one that
    depends, not optionally, on a workflow that is not there, until no more drop."""
    needs: dict[str, list[str]] = {}
    for file, parsed in files.items():
        root = parsed.document if isinstance(parsed, Parsed) else None
        deps = _dependencies(root.get("depends_on")) if isinstance(root, dict) else []
        needs[file] = [name for name, optional in deps if not optional]
    dropped: set[str] = set()
    while True:
        present = {woodpecker_name(f) for f in files if f not in dropped}
        more = {f for f, names in needs.items() if f not in dropped and any(n not in present for n in names)}
        if not more:
            return dropped
        dropped |= more


def check_file(
    file: str,
    parsed: Parsed | YamlFault,
    schema: SchemaCheck,
    *,
    trust: Trust = Trust(),
    privileged_plugins: tuple[str, ...] = (),
) -> tuple[Finding, ...]:
    """One file's findings, by line and column. A YAML or decoding error is the only kind found then:
    Woodpecker stops there too."""
    if isinstance(parsed, YamlFault):
        return (
            Finding(
                file, parsed.line, parsed.column, True, "yaml", parsed.rule, parsed.problem, parsed.path, ""
            ),
        )
    checker = _Checker(file, parsed)
    checker.decode()
    if not checker.found:
        checker.lint(schema, trust, privileged_plugins)
    return tuple(sorted(checker.found, key=lambda f: (f.line, f.column)))


class _Checker:
    def __init__(self, file: str, parsed: Parsed) -> None:
        self.file = file
        self.parsed = parsed
        self.doc = parsed.document
        self.root: dict[str, Any] = parsed.document if isinstance(parsed.document, dict) else {}
        self.found: list[Finding] = []

    def add(
        self,
        path: Path,
        blocking: bool,
        source: Source,
        rule: str,
        message: str,
        field: str,
        *,
        key: bool = True,
        named: str = "",
    ) -> None:
        mark = self.parsed.mark(path, key=key)
        self.found.append(
            Finding(self.file, mark.line, mark.column, blocking, source, rule, message, path, field, named)
        )

    # ------------------------------------------------------------------------------------- decoding

    def _wrong_type(self, path: Path, expected: str) -> None:
        self.add(
            path,
            True,
            "decode",
            "wrong_type",
            f"Woodpecker cannot read this value: it must be {expected}.",
            ".".join(str(p) for p in path),
            key=False,
        )

    def decode(self) -> None:
        """The values Woodpecker's types refuse (a decoding error ends the pipeline as `error`)."""
        doc = self.doc
        if doc is None:
            return
        if not isinstance(doc, dict):
            self._wrong_type((), "a mapping of the workflow's keys")
            return
        if "skip_clone" in doc:
            self._bool(("skip_clone",), doc["skip_clone"])
        for key in ("labels", "workspace"):
            if doc.get(key) is not None and not isinstance(doc[key], dict):
                self._wrong_type((key,), "a mapping")
        if doc.get("runs_on") is not None and not _is_list(doc["runs_on"], _is_scalar):
            self._wrong_type(("runs_on",), "a list of words")
        self._when(("when",), doc.get("when"))
        for area in AREAS:
            containers = doc.get(area)
            if containers is None:
                continue
            if not isinstance(containers, dict | list):
                self._wrong_type((area,), "a list or a mapping of steps")
                continue
            if isinstance(containers, dict):
                for name, body in containers.items():
                    self._container((area, name), body)
            else:
                for i, body in enumerate(containers):
                    self._container((area, i), body)

    def _bool(self, path: Path, value: Any) -> None:
        if value is None or isinstance(value, bool):
            return
        if isinstance(value, str) and value in _TRUE_WORDS | _FALSE_WORDS:
            return
        self._wrong_type(path, "true or false")

    def _when(self, path: Path, when: Any) -> None:
        if when is None:
            return
        items = when if isinstance(when, list) else [when]
        for i, c in enumerate(items):
            at = path + (i,) if isinstance(when, list) else path
            if c is None:
                continue
            if not isinstance(c, dict):
                self._wrong_type(at, "a mapping of conditions")
                continue
            for key in ("event", "status"):
                if c.get(key) is not None and not _text_or_list(c[key]):
                    self._wrong_type(at + (key,), "a word or a list of words")

    def _container(self, path: Path, body: Any) -> None:
        if body is None:
            return
        if not isinstance(body, dict):
            self._wrong_type(path, "a mapping of the step's keys")
            return
        for key in _BOOL:
            if key in body:
                self._bool(path + (key,), body[key])
        for key in _TEXT:
            if isinstance(body.get(key), dict | list):
                self._wrong_type(path + (key,), "a single value")
        for key in _TEXT_OR_LIST:
            if body.get(key) is not None and not _text_or_list(body[key]):
                self._wrong_type(path + (key,), "a string or a list of strings")
        for key in _LIST:
            if body.get(key) is not None and not _is_list(body[key], _is_scalar):
                self._wrong_type(path + (key,), "a list")
        for key in _MAP:
            if body.get(key) is not None and not isinstance(body[key], dict):
                self._wrong_type(path + (key,), "a mapping")
        if body.get("depends_on") is not None and not _depends_on_readable(body["depends_on"]):
            self._wrong_type(path + ("depends_on",), "a step's name or a list of them")
        if body.get("volumes") is not None and not _is_list(body["volumes"], lambda v: isinstance(v, str)):
            self._wrong_type(path + ("volumes",), "a list of volumes")
        self._when(path + ("when",), body.get("when"))

    # -------------------------------------------------------------------------------------- linting

    def containers(self, area: str) -> list[_Container]:
        found = self.root.get(area)
        if isinstance(found, dict):
            return [
                _Container(area, k, _text(b.get("name")) or str(k), b)
                for k, b in ((k, b if isinstance(b, dict) else {}) for k, b in found.items())
            ]
        if isinstance(found, list):
            return [
                _Container(area, i, _text(b.get("name")) or f"step-{i}", b)
                for i, b in enumerate(b if isinstance(b, dict) else {} for b in found)
            ]
        return []

    def lint(self, schema: SchemaCheck, trust: Trust, privileged_plugins: tuple[str, ...]) -> None:
        steps = self.containers("steps")
        if not steps:
            self.add(
                ("steps",), True, "linter", "missing_steps", "Invalid or missing `steps` section", "steps"
            )
        for c in self.containers("clone"):
            if not match_image_dynamic(_text(c.body.get("image")), TRUSTED_CLONE_PLUGINS):
                self.add(
                    c.path + ("image",),
                    False,
                    "linter",
                    "untrusted_clone_image",
                    "Specified clone image does not match allow list, netrc is not injected",
                    f"clone.{c.name}",
                )
        for area in AREAS:
            for c in self.containers(area):
                self._lint_container(c, steps, trust, privileged_plugins)
        for fault in schema(self.doc):
            where = fault.path[:-1] if fault.at_key else fault.path
            rule = f"schema_{fault.keyword}"
            if fault.at_key and fault.path:
                unknown = str(fault.path[-1])
                message = _UNKNOWN_KEY_HINTS.get(_key_place(fault.path), _UNKNOWN_KEY)
                self.add(fault.path, False, "schema", rule, message, _schema_field(where), named=unknown)
            else:
                self.add(fault.path, False, "schema", rule, fault.message, _schema_field(where))
        self._deprecations()
        self._bad_habits(steps)

    def _lint_container(
        self, c: _Container, steps: list[_Container], trust: Trust, privileged_plugins: tuple[str, ...]
    ) -> None:
        body, image = c.body, _text(c.body.get("image"))
        if not image:
            self.add(c.path, True, "linter", "missing_image", "Invalid or missing image", c.field)
        if not trust.security and _true(body.get("privileged")):
            self._untrusted(c, "privileged", "Insufficient trust level to use `privileged` mode", "security")
        if not trust.network:
            for key, words in (
                ("dns", "custom `dns`"),
                ("dns_search", "`dns_search`"),
                ("extra_hosts", "`extra_hosts`"),
            ):
                if _filled(body.get(key)):
                    self._untrusted(c, key, f"Insufficient trust level to use {words}", "network")
            mode = _text(body.get("network_mode"))
            if mode and mode != "none":
                self._untrusted(
                    c, "network_mode", "Insufficient trust level to use `network_mode`", "network"
                )
        if not trust.volumes:
            for key in ("devices", "volumes", "tmpfs"):
                if _filled(body.get(key)):
                    self._untrusted(c, key, f"Insufficient trust level to use `{key}`", "volumes")
        if _filled(body.get("settings")):
            if _filled(body.get("commands")):
                self.add(
                    c.path + ("settings",),
                    True,
                    "linter",
                    "commands_with_settings",
                    "Cannot configure both `commands` and `settings`",
                    c.field,
                )
            elif _filled(body.get("entrypoint")):
                self.add(
                    c.path + ("settings",),
                    True,
                    "linter",
                    "entrypoint_with_settings",
                    "Cannot configure both `entrypoint` and `settings`",
                    c.field,
                )
            elif _filled(body.get("environment")):
                self.add(
                    c.path + ("environment",),
                    False,
                    "linter",
                    "environment_with_settings",
                    "Should not configure both `environment` and `settings`",
                    c.field,
                )
        if match_image(image, FORMERLY_PRIVILEGED) and not _true(body.get("privileged")):
            if not match_image_dynamic(image, privileged_plugins):
                self.add(
                    c.path + ("image",),
                    True,
                    "linter",
                    "formerly_privileged_plugin",
                    "This formerly privileged plugin is no longer privileged by default; "
                    "if required, add it to `WOODPECKER_PLUGINS_PRIVILEGED` (the Woodpecker server's "
                    "setting, its operator's to change), or give the step `privileged: true` in a "
                    "repository trusted for security",
                    c.field,
                )
        if c.area == "steps":
            names = {s.name for s in steps}
            for dep, optional in _dependencies(body.get("depends_on")):
                if dep not in names and not optional:
                    self.add(
                        c.path + ("depends_on",),
                        True,
                        "linter",
                        "missing_dependency",
                        "One or more of the specified dependencies do not exist",
                        f"{c.field}.depends_on",
                    )

    def _untrusted(self, c: _Container, key: str, message: str, trust: str) -> None:
        fix = (
            f"; it needs the repository trusted for {trust} (update_repository's trusted_{trust}, "
            "which a Woodpecker admin sets)"
        )
        self.add(c.path + (key,), True, "linter", f"untrusted_{key}", message + fix, c.field)

    def _deprecations(self) -> None:
        name = workflow_name(self.file)
        if _filled(self.root.get("runs_on")):
            self.add(
                ("runs_on",),
                False,
                "deprecation",
                "runs_on",
                "Usage of `runs_on` is deprecated, use `when.status`",
                f"{name}.runs_on",
            )
        for old, new, pattern in _DEPRECATED:
            used = pattern.search(self.parsed.text)
            if used is not None:
                line = self.parsed.text.count("\n", 0, used.start()) + 1
                column = used.start() - (self.parsed.text.rfind("\n", 0, used.start()) + 1) + 1
                self.found.append(
                    Finding(
                        self.file,
                        line,
                        column,
                        False,
                        "deprecation",
                        "deprecated_variable",
                        f"Usage of `{old}` is deprecated, use `{new}`",
                        (),
                        name,
                    )
                )

    def _bad_habits(self, steps: list[_Container]) -> None:
        root = _constraints(self.root.get("when"))
        if root and all(_filled(c.get("event")) for c in root):
            return
        for s in steps:
            own = _constraints(s.body.get("when"))
            if not own:
                self.add(
                    s.path,
                    False,
                    "bad_habit",
                    "no_event_filter",
                    "Consider adding a `when` block with an `event` filter to this step or the entire workflow",
                    s.field,
                )
                continue
            unfiltered = next((i for i, c in enumerate(own) if not _filled(c.get("event"))), None)
            if unfiltered is not None:
                when = s.body.get("when")
                at = s.path + ("when", unfiltered) if isinstance(when, list) else s.path + ("when",)
                self.add(
                    at,
                    False,
                    "bad_habit",
                    "no_event_filter",
                    "Set an event filter for all steps or the entire workflow on all items of the `when` block",
                    f"{s.field}.when[{unfiltered}]",
                )


# ------------------------------------------------------------------------------------------ values


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _is_list(value: Any, item: Callable[[Any], bool]) -> bool:
    return isinstance(value, list) and all(item(v) for v in value)


def _text_or_list(value: Any) -> bool:
    """go's StringOrSlice: any scalar, or a list whose every item is a string."""
    return _is_scalar(value) or _is_list(value, lambda v: isinstance(v, str))


def _depends_on_readable(value: Any) -> bool:
    if _is_scalar(value):
        return True
    return _is_list(value, lambda v: isinstance(v, str) or (isinstance(v, dict) and "name" in v))


def _dependencies(value: Any) -> list[tuple[str, bool]]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out: list[tuple[str, bool]] = []
    for item in items:
        if isinstance(item, dict):
            out.append((_text(item.get("name")), _true(item.get("optional"))))
        elif _is_scalar(item):
            out.append((_text(item), False))
    return out


def _text(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value in _TRUE_WORDS)


def _filled(value: Any) -> bool:
    """Go's `len(x) != 0` for the value a key decodes into (a scalar is one entry)."""
    if value is None:
        return False
    if isinstance(value, dict | list | str):
        return len(value) > 0
    return True


def _constraints(when: Any) -> list[dict[str, Any]]:
    if isinstance(when, dict):
        return [when]
    if isinstance(when, list):
        return [c if isinstance(c, dict) else {} for c in when]
    return []


def _key_place(path: Path) -> Path:
    """An unknown key by where it stands: at the root, or `step` plus the key inside a container."""
    if len(path) == 1:
        return path
    if len(path) == 3 and path[0] in AREAS:
        return ("step", path[2])
    return ()


def _schema_field(path: Path) -> str:
    """A schema finding's field as Woodpecker's schema errors name it: `steps.0.image`, or `(root)`."""
    return ".".join(str(p) for p in path) or "(root)"


# ------------------------------------------------------------------------------------------ images


def _split_image(image: str) -> tuple[str, str | None]:
    """An image reference as Docker's reference library normalises it: the familiar name (no
    `docker.io/`, no `library/`) and the tag (None when it has none, `latest` is one)."""
    ref = image.split("@", 1)[0]
    tag = None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1 :]
    for prefix in ("docker.io/", "index.docker.io/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
    if ref.startswith("library/") and ref.count("/") == 1:
        ref = ref[len("library/") :]
    return ref, tag


def match_image(image: str, allowed: Sequence[str]) -> bool:
    """Woodpecker's utils.MatchImage: the same name, whatever the tags."""
    name = _split_image(image)[0]
    return any(name == _split_image(a)[0] for a in allowed)


def match_image_dynamic(image: str, allowed: Sequence[str]) -> bool:
    """Woodpecker's utils.MatchImageDynamic: an entry with a tag needs the same tag (none is `latest`)."""
    name, tag = _split_image(image)
    for entry in allowed:
        entry_name, entry_tag = _split_image(entry)
        if ":" in entry:
            if (name, tag or "latest") == (entry_name, entry_tag or "latest"):
                return True
        elif name == entry_name:
            return True
    return False
