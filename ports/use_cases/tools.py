"""Running one tool against Woodpecker (validate, plan, send, shape): failures become error results with a next step, and no credential ever reaches a result (an answer that echoes one is refused whole, docs/adr/0047)."""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Literal

from domain.arguments import ArgumentError, show
from domain.arguments import validate as validate_arguments
from domain.calls import ValidCall
from domain.guard.policy import runs_unasked
from domain.tools import Catalogue, ToolSpec
from domain.woodpecker import echoes, references, requests, resources, results, waiting, workflow_lint
from domain.woodpecker.catalogue.validation import CONFIG_FILE
from domain.woodpecker.faults import Echoed, NoSuchStep, Unexpected, Unsettled, may_have_reached
from domain.woodpecker.plans import (
    Calls,
    FailureSummary,
    FindInPages,
    PipelineHistory,
    Resolve,
    ServerInfo,
    StepLog,
    StepLogSearch,
    ValidateConfig,
    WaitForPipeline,
)
from domain.woodpecker.reads import ABSENT, Probe
from domain.woodpecker.requests import Request
from domain.woodpecker.tool import woodpecker
from ports.clock import Clock
from ports.concurrency import Concurrency
from ports.forge import NOTHING_FOUND, Prelude
from ports.forge import InvalidArguments as InvalidArguments
from ports.forge import ToolResult as ToolResult
from ports.progress import Progress
from ports.use_cases.history import HistoryReader
from ports.use_cases.read_back import read_back
from ports.woodpecker import (
    ApiResponse,
    BadResponse,
    Conflict,
    Credential,
    Forbidden,
    InvalidPattern,
    LogLine,
    LogMatch,
    LogSearchRequest,
    LogWindowRequest,
    NotConfigured,
    NotFound,
    OutcomeUnknown,
    RedirectRefused,
    Rejected,
    RequestNotAsPlanned,
    ResponseTooLarge,
    ServerError,
    ServesWebUi,
    TokenEchoed,
    Unauthorized,
    Unavailable,
    WoodpeckerError,
    WoodpeckerGateway,
    failed,
)
from ports.workflow_syntax import WorkflowSyntax

# What a probe that could not tell answers (its key is then left out of the guard's object).
_UNREAD = object()

_KINDS: tuple[tuple[type[WoodpeckerError], str], ...] = (
    (NotConfigured, "not_configured"),
    (Unauthorized, "unauthorized"),
    (Forbidden, "forbidden"),
    (NotFound, "not_found"),
    (Conflict, "conflict"),
    (Rejected, "rejected"),
    (ServerError, "server_error"),
    (Unavailable, "unavailable"),
    (RedirectRefused, "redirect"),
    (RequestNotAsPlanned, "request_not_as_planned"),
    (ServesWebUi, "web_ui"),
    (ResponseTooLarge, "too_large"),
    (BadResponse, "bad_response"),
    (TokenEchoed, "token_echoed"),
)


class StepNotFoundIn(NotFound):
    """The pipeline was read and has no step by the name or pid asked for; `steps` lists those it has."""

    def __init__(self, message: str, *, status: int, steps: list[dict[str, Any]]) -> None:
        super().__init__(message, status=status)
        self.steps = steps


def _failed(spec: ToolSpec, args: Mapping[str, Any], e: WoodpeckerError) -> ToolResult:
    """The error result of a call that Woodpecker failed (or that failed on its way there)."""
    return results.failure(
        spec,
        args,
        kind=_kind(e),
        message=str(e),
        status=e.status,
        detail=e.detail,
        fault=e.fault,
        data={"steps": e.steps} if isinstance(e, StepNotFoundIn) else None,
    )


def _kind(error: WoodpeckerError) -> str:
    for cls, kind in _KINDS:
        if isinstance(error, cls):
            return kind
    return "failed"


class ToolRunner:
    def __init__(
        self,
        catalogue: Catalogue,
        gateway: WoodpeckerGateway,
        *,
        configured: bool = True,
        token_configured: bool | None = None,
        default_credential: Credential | None = None,
        result_budget: int = results.RESULT_BUDGET,
        log_budget: int = results.LOG_BUDGET,
        text: results.TextMode = "full",
        web_root: str | None = None,
        clock: Clock | None = None,
        concurrency: Concurrency | None = None,
        workflow_syntax: WorkflowSyntax | None = None,
    ) -> None:
        """`configured`: a WOODPECKER_URL is set. `default_credential`: the server's own token, used
        when a call brings none (never set it in per-client mode). `token_configured`: whether a call
        without a credential can still authenticate; by default, whether `default_credential` is set
        (pass True for a gateway that holds its own token). Without a URL, or without any credential,
        every tool but get_server_info answers with setup instructions and nothing is sent. `text`: `full`
        (the text content carries all the data) or `summary` (only the warning and summary line, for
        clients that read structuredContent). `web_root`: WOODPECKER_URL as settings trimmed it, the only
        server whose web links `resolve` reads. `clock`: what wait_for_pipeline reads the time from and
        sleeps on (required for that tool). `concurrency`: how analyze_pipeline_history reads a few
        pipelines at once (one at a time without it). `workflow_syntax`: how validate_pipeline_config
        reads YAML and Woodpecker's schema (required for that tool)."""
        self.catalogue = catalogue
        self.gateway = gateway
        self.configured = configured
        self.token_configured = (
            default_credential is not None if token_configured is None else token_configured
        )
        self.default_credential = default_credential
        self.result_budget = result_budget
        self.log_budget = log_budget
        self.text = text
        self.web_root = _web_root(web_root)
        self.clock = clock
        self.concurrency = concurrency
        self.workflow_syntax = workflow_syntax

    def _tool(self, tool: str) -> ToolSpec:
        try:
            return self.catalogue.get(tool)
        except KeyError:
            raise InvalidArguments(f"Unknown tool {show(tool)}.") from None

    def prepare(self, tool: str, arguments: Mapping[str, Any] | None) -> ValidCall:
        """The call with its normalised arguments (defaults applied), or raise InvalidArguments.

        The one place a call is validated; never touches Woodpecker.
        """
        spec = self._tool(tool)
        try:
            if isinstance(arguments, Mapping):
                # First of all: a value that would move the request to another route is no name.
                requests.check_path_values(spec, arguments)
            args = validate_arguments(spec, arguments)
            requests.check(spec, args)
        except ArgumentError as e:
            raise InvalidArguments(str(e)) from None
        return ValidCall(spec, args)

    def validate(self, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """`prepare`'s arguments only."""
        return dict(self.prepare(tool, arguments).args)

    async def read_current(
        self, tool: str, arguments: Mapping[str, Any], credential: Credential | None
    ) -> Mapping[str, Any] | None:
        """`current` for a call not prepared yet."""
        return await self.current(self.prepare(tool, arguments), credential)

    async def current(self, call: ValidCall, credential: Credential | None) -> Mapping[str, Any] | None:
        """The stored object a conditional guard compares against, or None when no comparing
        field is present (then nothing is read). Raises the gateway's WoodpeckerError on failure."""
        planned = requests.current_for_guard(call.spec, call.args)
        if planned is None:
            return None
        cred = self._credential(credential)
        setup = self.setup_for(cred)
        if setup is not None:
            raise NotConfigured(setup)
        try:
            return await self._current(call, planned, cred)
        except WoodpeckerError as e:
            # The guard ends the call with this error's words, outside `execute`: they get its checks here.
            # Woodpecker's error text may carry the token encoded (the transport scrubs it as sent only).
            if echoes.carries(str(e), self._tokens(cred)):
                raise failed(Echoed()) from None
            e.args = (results.one_line(str(e)),)  # one line, nothing invisible (docs/adr/0045)
            raise

    async def _current(
        self,
        call: ValidCall,
        planned: Request | Mapping[str, Request | Probe | FindInPages],
        cred: Credential | None,
    ) -> Mapping[str, Any]:
        # Read through `_send`, which refuses an echo of the token: the object words the question.
        if isinstance(planned, Request):
            return await self._object(planned, cred, "current object")
        answers: dict[str, Any] = {}
        for key, read in planned.items():
            if isinstance(read, Probe):
                found = await self._probe(read, call.args, answers, cred)
                if found is not _UNREAD:
                    answers[key] = found
            elif isinstance(read, FindInPages):
                answers[key] = await self._find(read, dict(call.args), cred)
            else:
                answers[key] = (await self._send(read, cred)).data
        return answers

    async def _probe(
        self, probe: Probe, args: Mapping[str, Any], answers: Mapping[str, Any], cred: Credential | None
    ) -> Any:
        """A probe's answer: the data, ABSENT on a clear 404, _UNREAD on any other failure or when
        there is nothing to read (the rule then counts the object as there: fail closed)."""
        planned = probe.planned(args, answers)
        if planned is None:
            return _UNREAD
        try:
            return (await self._send(planned, cred)).data
        except NotFound:
            return ABSENT
        except TokenEchoed:
            raise  # an answer that echoes the token refuses the whole call (ADR 0047), never "unread"
        except WoodpeckerError:
            return _UNREAD

    async def run(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        credential: Credential | None,
        progress: Progress | None = None,
    ) -> ToolResult:
        """Validate, then `execute`. Invalid arguments come back as an error result."""
        setup = self._setup_for_tool(self._tool(tool), credential)
        if setup is not None:
            return setup
        try:
            call = self.prepare(tool, arguments)
        except InvalidArguments as e:
            message = results.one_line(str(e))  # every error text is one line (docs/adr/0045)
            return ToolResult(
                {"error": {"kind": "invalid_arguments", "message": message}}, message, is_error=True
            )
        return await self.execute(call, credential, progress)

    async def execute(
        self, call: ValidCall, credential: Credential | None, progress: Progress | None = None
    ) -> ToolResult:
        """Execute the tool (no guard here: the caller has already decided). Woodpecker
        failures come back as an error ToolResult with a hint, never as an exception. `progress`
        hears how a long call (wait_for_pipeline) is going, when the client asked.

        Every result, success or error, passes one check before it leaves: if it carries the token
        the call went with or this server's own (as sent or encoded, `domain.woodpecker.echoes`),
        it is replaced whole by an error result saying so (docs/adr/0047)."""
        spec, args = call.spec, dict(call.args)
        setup = self._setup_for_tool(spec, credential)
        if setup is not None:
            return setup
        cred = self._credential(credential)
        result = await self.check(call, credential) or await self._answer(spec, args, cred, progress)
        if _carries(result, self._tokens(cred)):
            return _echoed(spec, args)
        return result

    async def _answer(
        self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None, progress: Progress | None
    ) -> ToolResult:
        try:
            shaped = await self._execute(spec, args, cred, progress)
        except OutcomeUnknown as e:
            # The write may have reached Woodpecker: say so, with what one read tells (guard.md §7).
            return await read_back(spec, args, e, lambda planned: self._send(planned, cred))
        except WoodpeckerError as e:
            return _failed(spec, args, e)
        except InvalidPattern as e:
            return results.failure(spec, args, kind="invalid_arguments", message=str(e))
        except references.NotAReference as e:
            kind = "foreign_link" if isinstance(e, references.ForeignLink) else "not_a_reference"
            return results.failure(spec, args, kind=kind, message=str(e))
        except ValueError as e:  # ShapeError, or a stored record that is not an object
            return results.unreadable(spec, args, e)
        links = resources.links_for(woodpecker(spec).answer, args, shaped.structured)
        # A resource cannot ask: no link to one whose tool the operator's policy denies or makes ask.
        served = {
            t.tool
            for t in resources.TEMPLATES
            if t.tool in self.catalogue and runs_unasked(self.catalogue.get(t.tool))
        }
        return replace(shaped, links=tuple(x for x in links if x.tool in served))

    async def check(self, call: ValidCall, credential: Credential | None) -> ToolResult | None:
        """Why the call cannot be what it names, before anything is asked or the call is sent; None
        when it may go ahead. A call on an organization's routes goes ahead only once Woodpecker
        answers that organization: for an id it does not hold it answers an empty one, whose routes
        reach every repository's and the instance's secrets and registries
        (`requests.organization_addressed`). A failed read refuses the call too."""
        org_id = requests.organization_addressed(call.spec, call.args)
        if org_id is None:
            return None
        spec, args = call.spec, dict(call.args)
        try:
            answer = (await self._send(requests.organization(org_id), self._credential(credential))).data
        except WoodpeckerError as e:
            return _failed(spec, args, e)
        if requests.is_organization(answer, org_id):
            return None
        return results.no_such_organization(spec, args, org_id)

    async def before_asking(self, call: ValidCall, credential: Credential | None) -> Prelude:
        """The read a tool declares for before its question (`before_asking`), made once: a target
        that is not there, or (approve) a pipeline that is not blocked, is answered without a question
        and without the write; otherwise the facts the question says. A read that fails says what it
        could not find out (`unread`) and leaves the call to ask."""
        spec, args = call.spec, dict(call.args)
        first = woodpecker(spec).before_asking
        if first is None:
            return NOTHING_FOUND
        read = first.request(args, requests.plan(spec, args).path)
        try:
            response = await self._send(read, self._credential(credential))
            status, data = response.status, response.data
        except NotFound:
            status, data = 404, None
        except TokenEchoed:
            # An answer that echoes the token refuses the whole call (ADR 0047), never "unread".
            return Prelude(refusal=_echoed(spec, args))
        except WoodpeckerError:
            return Prelude(facts=first.unread)
        found = first.judge(args, read.path, status, data)
        if found.settled is None:
            return Prelude(facts=found.facts)
        settled = found.settled
        answer = results.failure(spec, args, kind=settled.kind, message=settled.words, status=settled.status)
        if _carries(answer, self._tokens(self._credential(credential))):
            # Its words name the path, so what the caller typed: the one check every result passes.
            return Prelude(refusal=_echoed(spec, args))
        return Prelude(answer=answer)

    def _setup_for_tool(self, spec: ToolSpec, credential: Credential | None) -> ToolResult | None:
        if isinstance(woodpecker(spec).plan, ValidateConfig):
            return None  # it sends nothing: no server, no token needed
        # The server's version and health need no credential: that call works before any setup,
        # but not without a server to ask (then it says the setup once, like every other tool).
        if isinstance(woodpecker(spec).plan, ServerInfo) and self.configured:
            return None
        setup = self.setup_for(self._credential(credential))
        if setup is None:
            return None
        return ToolResult({"error": {"kind": "not_configured", "message": setup}}, setup, is_error=True)

    def setup_for(self, credential: Credential | None) -> str | None:
        """Setup instructions when a call with `credential` cannot reach Woodpecker, else None."""
        if not self.configured:
            return results.SETUP
        if credential is None and not self.token_configured:
            return results.SETUP_WITHOUT_LOGIN
        return None

    # --------------------------------------------------------------------------------- internals

    def _credential(self, credential: Credential | None) -> Credential | None:
        return credential if credential is not None else self.default_credential

    def _tokens(self, cred: Credential | None) -> tuple[str, ...]:
        """The tokens no result may carry: the one this call goes with, and this server's own."""
        return tuple({c.reveal() for c in (cred, self.default_credential) if c is not None})

    async def _send(self, planned: Request, credential: Credential | None) -> ApiResponse:
        """Every request of every tool goes here (logs: `_log`): an answer carrying the token is
        refused whole, before any of it is read, cut or shaped (a cut could leave part of it). A write
        that may have reached Woodpecker and got no answer saying how it went raises OutcomeUnknown."""
        try:
            response = await self.gateway.send(planned, None if planned.root else credential)
        except WoodpeckerError as e:
            if e.fault is not None and not planned.idempotent_read and may_have_reached(e.fault):
                raise failed(Unsettled(e.fault, planned.path)) from None
            raise
        self._refuse_echo((response.data, dict(response.headers)), credential)
        return response

    def _refuse_echo(self, answer: Any, cred: Credential | None) -> None:
        if echoes.value_carries(answer, self._tokens(cred)):
            raise failed(Echoed())

    def _refuse_echoed_lines(self, lines: Iterable[LogLine], cred: Credential | None) -> None:
        self._refuse_echo([line.text for line in lines], cred)

    async def _execute(
        self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None, progress: Progress | None = None
    ) -> ToolResult:
        """Run the tool's declared plan; a tool without one sends its main request."""
        match woodpecker(spec).plan:
            case Calls() as calls:
                return self._shape(spec, args, await self._calls(spec, calls, args, cred))
            case ServerInfo():
                return await self._server_info(spec, cred)
            case StepLog():
                return await self._step_logs(spec, args, cred)
            case StepLogSearch():
                return await self._search_step_logs(spec, args, cred)
            case FailureSummary():
                return await self._failure_summary(spec, args, cred)
            case Resolve():
                return await self._resolve(spec, args, cred)
            case WaitForPipeline():
                return await self._wait_for_pipeline(args, cred, progress)
            case PipelineHistory():
                return await self._history(args, cred)
            case ValidateConfig():
                return self._validate_config(spec, args)
        return self._shape(spec, args, await self._send(requests.plan(spec, args), cred))

    async def _calls(
        self, spec: ToolSpec, plan: Calls, args: dict[str, Any], cred: Credential | None
    ) -> ApiResponse:
        """Send a plan's requests in order; the answer of the last one sent is the result."""
        answers: dict[str, Any] = {}
        last: ApiResponse | None = None
        for step in plan.steps:
            if step.only_if is not None and not step.only_if(args):
                continue
            if isinstance(step, FindInPages):
                answers[step.name] = await self._find(step, args, cred)
                continue
            try:
                planned = requests.plan(spec, args) if step.request is None else step.request(args, answers)
                last = await self._send(planned, cred)
                problem = step.check(args, answers, last.data, last.status) if step.check else None
                if problem is not None:
                    raise BadResponse(problem)
            except WoodpeckerError as e:
                if step.failed is None:
                    raise
                failed = step.failed(args, answers, str(e))  # quotes the message, so its facts still hold
                raise type(e)(failed, status=e.status, detail=e.detail, fault=e.fault) from None
            answers[step.name] = last.data
        if last is None:
            raise RuntimeError(f"{spec.name}: its plan sent nothing")  # a catalogue bug
        return last

    async def _find(
        self, step: FindInPages, args: dict[str, Any], cred: Credential | None
    ) -> Mapping[str, Any]:
        for page in range(1, step.max_pages + 1):
            data = (await self._send(step.page(args, page), cred)).data or []
            if not isinstance(data, list):
                raise BadResponse(step.not_a_list)
            for entry in data:
                if isinstance(entry, Mapping) and step.matches(args, entry):
                    return entry
            if len(data) < step.page_size:
                break
        raise NotFound(step.not_found(args), status=404)

    def _shape(self, spec: ToolSpec, args: Mapping[str, Any], response: ApiResponse) -> ToolResult:
        return results.shape(
            spec,
            args,
            response.data,
            status=response.status,
            headers=response.headers,
            budget=self.result_budget,
            text=self.text,
        )

    async def _server_info(self, spec: ToolSpec, cred: Credential | None) -> ToolResult:
        # Root routes go without a credential (`_send`); `cred` only says which token to look for.
        version = await self._send(Request("GET", "/version"), cred)
        healthy, note = True, None
        try:
            await self._send(Request("GET", "/healthz"), cred)
        except ServerError:
            healthy, note = False, results.health_failed(None)
        except WoodpeckerError as e:
            healthy, note = False, results.health_failed(e)
        return results.shape_server_info(
            spec, version.data, healthy, note, cred is not None or self.token_configured, self.text
        )

    async def _step(self, args: Mapping[str, Any], cred: Credential | None) -> Mapping[str, Any]:
        pipeline = (await self._send(requests.pipeline(args), cred)).data
        step = _find_step(pipeline, args["step_id"])
        if step is None:
            raise failed(NoSuchStep(args["step_id"], args["number"], args["repo_id"]))
        return step

    async def _step_logs(self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None) -> ToolResult:
        step = await self._step(args, cred)
        first, last = args.get("from_line"), args.get("to_line")
        # A range reads forward from from_line; to_line alone reads back from it.
        end: Literal["head", "tail"] = (
            "head" if first is not None else "tail" if last is not None else args["from"]
        )
        args = {**args, "from": end}
        window = LogWindowRequest(args["limit"], end, first, last)
        log = await self.gateway.step_log(requests.step_log_path(args), window, cred)
        self._refuse_echoed_lines(log.lines, cred)
        return results.shape_logs(
            spec, args, log.lines, log.total_lines, step, budget=self.log_budget, text=self.text
        )

    async def _search_step_logs(
        self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None
    ) -> ToolResult:
        step = await self._step(args, cred)
        search = LogSearchRequest(args["pattern"], args["ignore_case"], args["context"], args["max_matches"])
        found = await self.gateway.search_step_log(requests.step_log_path(args), search, cred)
        self._refuse_echoed_lines(_matched_lines(found.matches), cred)
        return results.shape_search(
            spec,
            args,
            found.matches,
            found.total_matches,
            found.total_lines,
            step,
            budget=self.log_budget,
            text=self.text,
        )

    async def _failure_summary(
        self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None
    ) -> ToolResult:
        clock = self.clock
        start = clock.now() if clock is not None else 0.0
        pipeline = await self._pipeline(args, cred)
        window = LogWindowRequest(results.TAIL_LINES)
        search = LogSearchRequest(
            results.ERROR_PATTERN, context=results.AFTER_LINES, max_matches=results.ERROR_LINES
        )
        failures = []
        for workflow, step in results.failed_steps(pipeline):
            if clock is not None and clock.now() - start >= results.READ_SECONDS:
                failures.append(
                    results.StepFailure(workflow, step, unreadable=results.not_read_in_time(step.get("id")))
                )
                continue
            path = requests.step_log_path({**args, "step_id": step.get("id")})
            try:
                last, found = await self.gateway.read_step_log(path, window, search, cred)
                self._refuse_echoed_lines((*last.lines, *_matched_lines(found.matches)), cred)
            except WoodpeckerError as e:
                # One unreadable log (deleted, too large) must not hide the other failures.
                failures.append(results.StepFailure(workflow, step, unreadable=str(e)))
                continue
            failures.append(
                results.StepFailure(
                    workflow,
                    step,
                    errors=[m.line for m in found.matches],
                    error_count=found.total_matches,
                    following=[m.after for m in found.matches],
                    last=last.lines,
                    total_lines=last.total_lines,
                )
            )
        return results.shape_failure_summary(
            spec, args, pipeline, failures, budget=self.log_budget, text=self.text
        )

    async def _history(self, args: dict[str, Any], cred: Credential | None) -> ToolResult:
        reader = HistoryReader(lambda r: self._send(r, cred), concurrency=self.concurrency, clock=self.clock)
        analysed, reading = await reader.read(args)
        return results.shape_history(args, analysed, reading, budget=self.result_budget, text=self.text)

    def _validate_config(self, spec: ToolSpec, args: dict[str, Any]) -> ToolResult:
        syntax = self.workflow_syntax
        if syntax is None:
            return results.failure(spec, args, kind="not_configured", message=results.NO_WORKFLOW_READER)
        files = {CONFIG_FILE: args["config"]} if "config" in args else dict(args["files"])
        parsed = {name: syntax.parse(text) for name, text in files.items()}
        findings = workflow_lint.check_files(parsed, syntax.schema_faults)
        return results.shape_config_check(list(files), findings, budget=self.result_budget, text=self.text)

    async def _object(self, planned: Request, cred: Credential | None, what: str) -> Mapping[str, Any]:
        data = (await self._send(planned, cred)).data
        if not isinstance(data, Mapping):
            raise failed(Unexpected(what))
        return data

    async def _resolve(self, spec: ToolSpec, args: dict[str, Any], cred: Credential | None) -> ToolResult:
        ref = references.parse_reference(args["reference"], self.web_root)
        step_name = args.get("step")
        if ref.number is None and step_name is not None:
            raise references.step_without_pipeline()
        if ref.repo_id is not None:
            repo = await self._object(requests.repository(ref.repo_id), cred, "repository")
        else:
            repo = await self._object(requests.lookup_repository(str(ref.full_name)), cred, "repository")
        repo_id = repo.get("id")
        if not isinstance(repo_id, int) or isinstance(repo_id, bool) or repo_id < 1:
            raise failed(Unexpected("repository", missing="id"))
        if ref.number is None:
            return results.shape_resolved(
                results.Resolved(repo, web_url=self._web_url(repo_id)),
                budget=self.result_budget,
                text=self.text,
            )
        where = {"repo_id": repo_id, "number": ref.number}
        pipeline = await self._object(requests.pipeline(where), cred, "pipeline")
        workflow = step = None
        try:
            if step_name is not None:
                workflow, step = references.step_by_name(pipeline, step_name)
            elif ref.pid is not None:
                workflow, step = references.step_by_pid(pipeline, ref.pid)
        except references.StepNotFound as e:
            # The steps' names go to the error's data, never its sentence (docs/adr/0045).
            raise StepNotFoundIn(str(e), status=404, steps=e.steps) from None
        pid = step.get("pid") if step is not None else None
        found = results.Resolved(
            repo,
            pipeline,
            workflow,
            step,
            self._web_url(
                repo_id, ref.number, pid if isinstance(pid, int) and not isinstance(pid, bool) else None
            ),
        )
        return results.shape_resolved(found, budget=self.result_budget, text=self.text)

    def _web_url(self, repo_id: int, number: int | None = None, pid: int | None = None) -> str | None:
        return None if self.web_root is None else references.web_url(self.web_root, repo_id, number, pid)

    async def _pipeline(self, args: Mapping[str, Any], cred: Credential | None) -> Mapping[str, Any]:
        return await self._object(requests.pipeline(args), cred, "pipeline")

    async def _wait_for_pipeline(
        self, args: dict[str, Any], cred: Credential | None, progress: Progress | None
    ) -> ToolResult:
        """Look at the pipeline until it finishes or the window passes, pausing on the clock (ADR 0027)."""
        clock = self.clock
        if clock is None:
            raise RuntimeError("wait_for_pipeline needs a Clock; pass one to ToolRunner")
        window = float(args["timeout_seconds"])
        start = clock.now()
        pipeline = await self._pipeline(args, cred)
        # The longest look so far: the next one may take as long, and must end within the window
        # too, or a slow Woodpecker pushes the answer past the client's patience.
        slowest = max(clock.now() - start, 0.0)
        polls, reported, slept = 1, -1.0, 0.0
        while not waiting.stops_waiting(pipeline.get("status")):
            # The pauses alone bound the wait, should the wall clock step back while it lasts.
            waited = max(clock.now() - start, slept)
            pause = waiting.next_pause(polls - 1, waited, window - slowest)
            if pause is None:
                break
            if progress is not None:
                reported = max(round(waited, 3), reported + 0.001)  # progress grows with every report
                status = results.one_line(str(pipeline.get("status")))[:40]
                message = waiting.progress_message(args["repo_id"], args["number"], status, waited, window)
                await progress.report(reported, window, message)
            await clock.sleep(pause)
            slept += pause
            looked = clock.now()
            pipeline = await self._pipeline(args, cred)
            slowest = max(slowest, clock.now() - looked)
            polls += 1
        return results.shape_wait(
            args,
            pipeline,
            waited=max(clock.now() - start, slept),
            polls=polls,
            budget=self.result_budget,
            text=self.text,
        )


def _echoed(spec: ToolSpec, args: Mapping[str, Any]) -> ToolResult:
    """The answer that replaces a result carrying the token (docs/adr/0047)."""
    fault = Echoed()
    return results.failure(spec, args, kind="token_echoed", message=fault.words(), fault=fault)


def _carries(result: ToolResult, tokens: tuple[str, ...]) -> bool:
    """Whether any part of `result` a client receives carries one of `tokens`."""
    if not tokens:
        return False
    parts = (result.structured, result.text, result.meta, [repr(link) for link in result.links])
    return echoes.value_carries(parts, tokens)


def _matched_lines(matches: Iterable[LogMatch]) -> Iterator[LogLine]:
    for match in matches:
        yield from match.before
        yield match.line
        yield from match.after


def _web_root(root: str | None) -> references.WebRoot | None:
    if root is None:
        return None
    try:
        return references.WebRoot.parse(root)
    except references.NotAReference:
        return None  # settings validate WOODPECKER_URL; a root that is no URL reads no link


def _find_step(pipeline: Any, step_id: int) -> Mapping[str, Any] | None:
    if not isinstance(pipeline, Mapping):
        raise failed(Unexpected("pipeline"))
    for workflow in pipeline.get("workflows") or []:
        if not isinstance(workflow, Mapping):
            continue
        for step in workflow.get("children") or []:
            if isinstance(step, Mapping) and step.get("id") == step_id:
                return step
    return None
