"""What a person pastes, read as Woodpecker ids: a web link of the configured server, `owner/name`, `owner/name#42`.

One parser, written for hostile input (docs/adr/0028-resolve-pasted-links-and-serve-resources.md).
It never fetches the pasted URL: a link only ever yields numbers and names, which the tools then
look up on the configured server. A link must name that server (scheme, host and port, and the
path prefix of WOODPECKER_URL); anything a browser, a proxy or another parser could read as
another place is refused rather than guessed at: user names and passwords, backslashes,
percent-encoded hosts or separators, dot segments, empty segments, ports that are not numbers.

The web routes read are Woodpecker's (web/src/router.ts): `/repos/{id}`, its pages
(`branches`, `pull-requests`, `settings`, `manual`), `/repos/{id}/pipeline/{number}`, its pages
(`changed-files`, `config`, `errors`, `debug`) and `/repos/{id}/pipeline/{number}/{pid}` (a step's
or a workflow's pid, as the web UI puts it there), and the older forms the web UI still redirects:
`/{owner}/{name}/...` and `/repos/{owner}/{name}/...` with the same pages, plus `/{owner}/{name}/{number}`
and `/{owner}/{name}/build/{number}/{pid}` of Woodpecker before 2.0.
"""

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from domain.parsing.urls import DEFAULT_PORTS, BadUrl, host_name

MAX_ID = 9007199254740991  # 2**53 - 1, as the catalogue's ids
MAX_REFERENCE = 2000

# Pages of a repository and of a pipeline in the web UI that name nothing more than it.
REPO_PAGES = frozenset({"branches", "pull-requests", "settings", "manual"})
PIPELINE_PAGES = frozenset({"changed-files", "config", "errors", "debug"})
# First segments of the web UI's own routes: never an owner in the older /{owner}/{name} form.
_NOT_OWNERS = frozenset(
    {
        "repos",
        "orgs",
        "org",
        "admin",
        "user",
        "login",
        "logout",
        "cli",
        "api",
        "authorize",
        "assets",
        "favicons",
        "swagger",
        "metrics",
        "version",
        "healthz",
        "web-config.js",
        "favicon.svg",
    }
)

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_ID = re.compile(r"^[0-9]{1,16}$")  # ASCII digits only: int() would take '١' and '1_0'
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_FULL_NAME = re.compile(r"^(?P<name>[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+)(?:#(?P<number>[0-9]{1,16}))?$")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")

Via = Literal["url", "name"]


class NotAReference(ValueError):
    """Not something `resolve` reads. `str(e)` says what was wrong and what to paste instead."""


class ForeignLink(NotAReference):
    """A link to another server (or another path) than the configured Woodpecker."""


def step_without_pipeline() -> NotAReference:
    """`resolve` was given a step name but a reference that names no pipeline."""
    return NotAReference(
        "A step is named within a pipeline: pass a pipeline's link or owner/name#NUMBER as reference."
    )


@dataclass(frozen=True, slots=True)
class WebRoot:
    """The configured Woodpecker's web root: its origin and the path prefix its routes live under."""

    scheme: str
    host: str  # lower case, ASCII (IDNA); an IPv6 address without brackets
    port: int | None  # None: the scheme's default
    prefix: tuple[str, ...] = ()

    @classmethod
    def parse(cls, root: str) -> "WebRoot":
        """The root of WOODPECKER_URL as settings trimmed it (scheme://host[:port][/prefix]).

        Raises:
            NotAReference: the configured value is not such a root (a setup mistake, not the caller's).
        """
        try:
            server, prefix = _split(root.strip().rstrip("/"))
        except NotAReference:
            raise NotAReference("WOODPECKER_URL is not an http(s) server root.") from None
        return cls(server.scheme, server.host, server.port, tuple(prefix))

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port is None else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def base(self) -> str:
        """The origin and path prefix: what every link of this server starts with."""
        return self.origin + "".join(f"/{s}" for s in self.prefix)

    def same_server(self, other: "WebRoot") -> bool:
        """The same origin: scheme, host and port (a default port spelled out or not)."""
        return (self.scheme, self.host, self._port) == (other.scheme, other.host, other._port)

    def holds(self, other: "WebRoot") -> bool:
        """Whether `other` lies under this root: the same origin, and this root's path prefix."""
        return self.same_server(other) and other.prefix[: len(self.prefix)] == self.prefix

    @property
    def _port(self) -> int:
        return self.port if self.port is not None else DEFAULT_PORTS[self.scheme]


@dataclass(frozen=True, slots=True)
class Reference:
    """The ids a pasted text names. A repository by id (links) or by full name (text), maybe a
    pipeline number, maybe a step or workflow pid (a link's last segment)."""

    via: Via
    repo_id: int | None = None
    full_name: str | None = None
    number: int | None = None
    pid: int | None = None


def web_url(root: WebRoot, repo_id: int, number: int | None = None, pid: int | None = None) -> str:
    """The web UI's link to a repository, a pipeline or a step (by its pid), as Woodpecker writes it."""
    url = f"{root.base}/repos/{repo_id}"
    if number is not None:
        url += f"/pipeline/{number}"
        if pid is not None:
            url += f"/{pid}"
    return url


def parse_reference(text: str, root: WebRoot | None) -> Reference:
    """Read `text` as a link of the server at `root` (None: no server configured, links are refused),
    `owner/name` or `owner/name#number`.

    Raises:
        ForeignLink: a link to another server or path; the message names the server this one talks to.
        NotAReference: anything else that is not a reference, with what to paste instead.
    """
    text = text.strip()
    if not text:
        raise NotAReference("The reference is empty; paste a Woodpecker link, owner/name or owner/name#42.")
    if len(text) > MAX_REFERENCE:
        raise NotAReference(f"The reference is longer than {MAX_REFERENCE} characters; paste one link.")
    if any(c.isspace() or _control(c) for c in text):
        raise NotAReference(
            "The reference holds spaces or control characters; paste one link, owner/name or owner/name#42 alone."
        )
    if "\\" in text:
        raise NotAReference(
            "The reference holds a backslash, which browsers read as a slash and others do not; paste the link "
            "as the address bar shows it."
        )
    if _SCHEME.match(text) is None and root is not None and _starts_with_host(text, root):
        text = f"{root.scheme}://{text}"  # pasted without its scheme: the configured server's host
    if _SCHEME.match(text) is not None:
        return _parse_link(text, root)
    if ":" in text or text.startswith("/"):
        raise NotAReference(
            "The reference is neither an http(s) link nor owner/name; paste the whole link (https://...) "
            "or owner/name#42."
        )
    return _parse_name(text)


# ----------------------------------------------------------------------------------- internals


def _control(c: str) -> bool:
    return ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029\ufeff\u200b\u200e\u200f"


def _starts_with_host(text: str, root: WebRoot) -> bool:
    authority = root.origin.split("://", 1)[1].lower()
    lowered = text.lower()
    return lowered == authority or lowered.startswith(authority + "/")


def _parse_name(text: str) -> Reference:
    found = _FULL_NAME.match(text)
    if found is None or len(found["name"]) > 200:
        raise NotAReference(
            "The reference is not owner/name or owner/name#42 (letters, digits, '.', '_' and '-' between "
            "slashes), nor a link; paste a Woodpecker link or the repository's full name."
        )
    name = found["name"]
    if any(part in (".", "..") for part in name.split("/")):
        raise NotAReference("A repository's full name has no '.' or '..' part.")
    return Reference("name", full_name=name, number=_number(found["number"], "pipeline number"))


def _number(raw: str | None, what: str) -> int | None:
    if raw is None:
        return None
    value = int(raw)
    if not 1 <= value <= MAX_ID:
        raise NotAReference(f"The {what} {raw} is out of range (1 to {MAX_ID}).")
    return value


def _parse_link(text: str, root: WebRoot | None) -> Reference:
    pasted, segments = _split(text)
    if root is None:
        raise NotAReference(
            "No Woodpecker server is configured, so no link can be read; set WOODPECKER_URL, or pass "
            "owner/name#42."
        )
    if not root.holds(WebRoot(pasted.scheme, pasted.host, pasted.port, tuple(segments))):
        raise ForeignLink(
            f"This link is not on the Woodpecker server this MCP server talks to ({root.base}); ids on another "
            f"server name other repositories. Paste a link that starts with {root.base}/, or owner/name#42; "
            "to use another server, its operator sets WOODPECKER_URL."
        )
    return _route(segments[len(root.prefix) :])


def _split(text: str) -> tuple[WebRoot, list[str]]:
    """The link's server and its decoded path segments (query and fragment dropped)."""
    found = _SCHEME.match(text)
    if found is None:
        raise NotAReference("A link starts with http:// or https://.")
    scheme = found[1].lower()
    if scheme not in DEFAULT_PORTS:
        raise NotAReference(f"Only http and https links are read, not {scheme[:10]}: links.")
    rest = text[found.end() :]
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, rest = rest[:cut], rest[cut:]
    path = re.split(r"[?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        raise NotAReference(
            "The link carries a user name or password before its host ('user@host'); a Woodpecker link has "
            "none. Paste the link as the address bar shows it."
        )
    host, port = _authority(authority)
    return WebRoot(scheme, host, None if port == DEFAULT_PORTS[scheme] else port), _segments(path)


def _authority(authority: str) -> tuple[str, int | None]:
    bad = NotAReference("The link's host is not a host name, an IP address or host:port.")
    if "%" in authority:
        raise NotAReference("The link's host is percent-encoded; paste the link as the address bar shows it.")
    if authority.startswith("["):
        found = re.match(r"^\[([0-9A-Fa-f:.]+)\](?::([0-9]*))?$", authority)
        if found is None:
            raise bad
        try:
            host = ipaddress.IPv6Address(found[1]).compressed
        except ValueError:
            raise bad from None
        raw_port = found[2]
    else:
        found = re.match(r"^([^:]+)(?::([0-9]*))?$", authority)
        if found is None:
            raise bad
        host, raw_port = _host_name(found[1]), found[2]
    port = None
    if raw_port:
        if len(raw_port) > 5 or int(raw_port) > 65535:
            raise bad
        port = int(raw_port)
    return host, port


def _host_name(raw: str) -> str:
    """A host name in ASCII lower case: an internationalised name in its IDNA (xn--) form."""
    try:
        return host_name(raw)
    except BadUrl as e:
        if e.problem == "idna":
            raise NotAReference("The link's host is not a valid internationalised host name.") from None
        raise NotAReference("The link's host is not a host name or an IP address.") from None


def _segments(path: str) -> list[str]:
    """The path's segments, each percent-decoded once; refused when any could move the path elsewhere."""
    if path in ("", "/"):
        return []
    if not path.startswith("/"):
        raise NotAReference("The link's path does not start with '/'.")
    parts = path[1:].split("/")
    if parts[-1] == "":
        parts.pop()  # one trailing slash names the same page
    out = []
    for raw in parts:
        if "%" in _PERCENT.sub("", raw):
            raise NotAReference("The link holds a '%' that is not a percent-escape.")
        try:
            decoded = _PERCENT.sub(lambda m: chr(int(m[1], 16)), raw).encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            raise NotAReference("The link's path is not valid UTF-8 once decoded.") from None
        if (
            decoded in ("", ".", "..")
            or any(c in decoded for c in "/\\%")
            or any(_control(c) for c in decoded)
        ):
            raise NotAReference(
                "The link's path holds an empty, '.' or '..' segment, or an encoded slash, backslash or '%'; "
                "a browser or proxy could read it as another page. Paste the link as the address bar shows it."
            )
        out.append(decoded)
    return out


def _unknown(segments: list[str]) -> NotAReference:
    shown = "/".join(segments)[:80]
    return NotAReference(
        f"The link's page /{shown} is not a repository, pipeline or step page of Woodpecker; paste the link of "
        "a repository (/repos/ID), a pipeline (/repos/ID/pipeline/NUMBER) or a step (.../pipeline/NUMBER/PID)."
    )


def _route(segments: list[str]) -> Reference:
    if not segments:
        raise NotAReference(
            "This is the server's home page; paste the link of a repository, a pipeline or a step."
        )
    head = segments[0]
    if head in ("orgs", "org"):
        raise NotAReference(
            "This is an organization's page; resolve reads repository, pipeline and step links "
            "(lookup_organization finds an organization by name)."
        )
    if head == "repos" and len(segments) >= 2 and _ID.match(segments[1]):
        repo_id = _number(segments[1], "repository id")
        return _repo_page(Reference("url", repo_id=repo_id), segments[2:], segments, legacy=False)
    if head == "repos" and len(segments) >= 3 and _is_name(segments[1]) and _is_name(segments[2]):
        named = Reference("url", full_name=f"{segments[1]}/{segments[2]}")
        return _repo_page(named, segments[3:], segments, legacy=True)
    if head not in _NOT_OWNERS and len(segments) >= 2 and _is_name(head) and _is_name(segments[1]):
        named = Reference("url", full_name=f"{head}/{segments[1]}")
        return _repo_page(named, segments[2:], segments, legacy=True)
    raise _unknown(segments)


def _is_name(segment: str) -> bool:
    return _NAME.match(segment) is not None and segment not in (".", "..")


def _repo_page(repo: Reference, rest: list[str], segments: list[str], *, legacy: bool) -> Reference:
    if not rest or rest[0] in REPO_PAGES:
        return repo
    kind, *tail = rest
    if legacy and _ID.match(kind) and not tail:
        kind, tail = "pipeline", rest  # /{owner}/{name}/{number}, before Woodpecker 2.0
    if kind in ("pipeline", "build") and (kind == "pipeline" or legacy) and tail and _ID.match(tail[0]):
        number = _number(tail[0], "pipeline number")
        after = tail[1:]
        if not after or (len(after) == 1 and after[0] in PIPELINE_PAGES):
            return Reference(repo.via, repo.repo_id, repo.full_name, number)
        if len(after) == 1 and _ID.match(after[0]):
            return Reference(repo.via, repo.repo_id, repo.full_name, number, _number(after[0], "step pid"))
    raise _unknown(segments)


# ------------------------------------------------------------------------------ a step of a pipeline


class StepNotFound(ValueError):
    """The pipeline has no step by that name or pid, or several by that name.

    `str(e)` names the steps by pid only: their names, which whoever can push chose, are in
    `steps` (the data of the error result), never in the sentence (docs/adr/0045)."""

    def __init__(self, message: str, steps: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.steps = steps


def _steps(pipeline: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    out = []
    for workflow in pipeline.get("workflows") or []:
        if isinstance(workflow, Mapping):
            out += [(workflow, s) for s in workflow.get("children") or [] if isinstance(s, Mapping)]
    return out


_LISTED = 30  # steps an error lists


def _listed(found: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The steps as an error's data: ids, pids and names (a name only ever as data)."""
    return [
        {
            "step_id": s.get("id"),
            "pid": s.get("pid"),
            "name": s.get("name"),
            "workflow": w.get("name"),
            "workflow_pid": w.get("pid"),
        }
        for w, s in found[:_LISTED]
    ]


def _pids(found: list[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> str:
    """The steps' pids, which Woodpecker numbers: the only part of a step the sentence names."""
    pids = [str(s.get("pid")) if _is_pid(s.get("pid")) else "?" for _, s in found[:_LISTED]]
    return ", ".join(pids) + (", …" if len(found) > _LISTED else "")


def _is_pid(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _not_found(pipeline: Mapping[str, Any], what: str) -> StepNotFound:
    steps = _steps(pipeline)
    number = pipeline.get("number")
    number = number if _is_pid(number) else "?"
    if not steps:
        return StepNotFound(f"Pipeline {number} has {what}; it has no steps yet.", [])
    return StepNotFound(
        f"Pipeline {number} has {what}; its steps have the pids {_pids(steps)} "
        "(their names and workflows are in the error's steps, below)",
        _listed(steps),
    )


def step_by_pid(pipeline: Mapping[str, Any], pid: int) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """(workflow, step) for a pid in a link: a workflow's pid stands for its first step, as in the web UI.

    Raises:
        StepNotFound: no workflow or step has that pid.
    """
    for workflow in pipeline.get("workflows") or []:
        if isinstance(workflow, Mapping) and workflow.get("pid") == pid:
            children = [s for s in workflow.get("children") or [] if isinstance(s, Mapping)]
            if children:
                return workflow, children[0]
    for workflow, step in _steps(pipeline):
        if step.get("pid") == pid:
            return workflow, step
    raise _not_found(pipeline, f"no step with pid {pid}")


def step_by_name(pipeline: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """(workflow, step) for a step's name, `workflow/name`, or its pid.

    Raises:
        StepNotFound: no step is so named, or several are (then `workflow/name` tells them apart).
    """
    steps = _steps(pipeline)
    found = [(w, s) for w, s in steps if s.get("name") == name]
    if not found and "/" in name:
        workflow_name, step_name = name.split("/", 1)
        found = [(w, s) for w, s in steps if w.get("name") == workflow_name and s.get("name") == step_name]
    if not found and _ID.match(name):
        return step_by_pid(pipeline, int(name))
    if not found:
        lowered = name.casefold()
        found = [(w, s) for w, s in steps if str(s.get("name", "")).casefold() == lowered]
    if len(found) == 1:
        return found[0]
    if not found:
        raise _not_found(pipeline, "no step named as the step argument says")
    number = pipeline.get("number")
    number = number if _is_pid(number) else "?"
    raise StepNotFound(
        f"Pipeline {number} has {len(found)} steps named as the step argument says, with the pids "
        f"{_pids(found)}; pass step as one of their pids, or as workflow/name (their names and "
        "workflows are in the error's steps, below)",
        _listed(found),
    )
