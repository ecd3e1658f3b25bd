"""The server itself: version and health, queue, log level."""

from domain.tools import Arg, Endpoint, GuardRule, Param, ToolSpec
from domain.woodpecker import rules as r
from domain.woodpecker.answers import Done, One, Value
from domain.woodpecker.asking import Ask
from domain.woodpecker.catalogue.common import (
    CONFIRM_TOKEN,
    WRITE_IDEMPOTENT,
    asks_always,
    read_tool,
    write_tool,
)
from domain.woodpecker.plans import ServerInfo
from domain.woodpecker.read_back import PAUSED

# Documented additions to the shared catalogue (read-only, never guarded): see catalogue/__init__.py.
ADDED: tuple[str, ...] = ("get_signature_public_key",)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "get_server_info",
        group="server",
        description=(
            "Server version and health, asked without a token: tells connection trouble from token trouble."
        ),
        endpoints=(
            Endpoint("GET", "/version", root=True),
            Endpoint("GET", "/healthz", root=True, success=204),
        ),
        notes=(
            (
                "Both live at the server root, not under /api (/api/version answers the web UI with "
                "200 text/html). Sent without Authorization."
            ),
            "healthz: 204 when healthy, 500 when the database ping fails.",
            "version is 'dev' or 'next-<sha>' on development builds.",
        ),
        answer=One("server", "Woodpecker {version}; healthy: {healthy}."),
        plan=ServerInfo(),
    ),
    read_tool(
        "get_queue_info",
        group="server",
        admin="always",
        untrusted_output=True,
        description=("Scheduler state: tasks, workers, paused. Instance admin only."),
        endpoints=(Endpoint("GET", "/api/queue/info"),),
        notes=("Task names and labels come from pipeline configs.",),
        answer=One(
            "queue",
            "Queue: {pending} pending, {running} running, paused: {paused}.",
        ),
    ),
    read_tool(
        "get_log_level",
        group="server",
        admin="always",
        description="The server's log level. Instance admin only.",
        endpoints=(Endpoint("GET", "/api/log-level"),),
        notes=('Answers {"log-level": "info"}.',),
        answer=Value("log_level", "The server logs at level {value}.", field="log-level"),
    ),
    write_tool(
        "pause_queue",
        settled=PAUSED,
        group="server",
        annotations=WRITE_IDEMPOTENT,
        admin="always",
        guard=asks_always(),
        description=(
            "Stops giving work to agents instance-wide until resume_queue. Instance "
            "admin only. Always asks a person."
        ),
        params=(CONFIRM_TOKEN,),
        endpoints=(Endpoint("POST", "/api/queue/pause", success=204),),
        answer=Done("Paused the queue: nothing is dispatched to agents until resume_queue."),
        question=Ask(
            "This will pause the pipeline queue of the whole Woodpecker instance.",
            (
                "It is instance-wide and silent: nothing starts until resume_queue is called, and nothing "
                "tells the people whose builds are queuing why. Pipelines already running complete.",
            ),
        ),
        why="Instance-wide and silent: nothing starts until someone resumes it.",
    ),
    write_tool(
        "resume_queue",
        group="server",
        annotations=WRITE_IDEMPOTENT,
        admin="always",
        description=("Gives out work again after pause_queue. Instance admin only."),
        endpoints=(Endpoint("POST", "/api/queue/resume", success=204),),
        answer=Done("Resumed the queue; the backlog is being dispatched."),
    ),
    write_tool(
        "set_log_level",
        group="server",
        annotations=WRITE_IDEMPOTENT,
        admin="always",
        guard=GuardRule(
            when="silences_server",
            condition="Asks when level is fatal, panic or disabled, whatever the current level.",
            targets=(),
            body_bound=True,
            needs_current_state=False,
        ),
        description=(
            "Sets the server's log level. Instance admin only. Asks a person for fatal, panic or disabled."
        ),
        params=(
            Param(
                "level",
                "enum",
                True,
                "",
                choices=("trace", "debug", "info", "warn", "error", "fatal", "panic", "disabled"),
            ),
            CONFIRM_TOKEN,
        ),
        endpoints=(Endpoint("POST", "/api/log-level", body={"log-level": Arg("level")}),),
        notes=(
            (
                'Body is {"log-level": level}; the answer echoes it. An unknown level answers 400 with '
                "an empty body."
            ),
        ),
        answer=Value("log_level", "Log level set to {value}.", field="log-level"),
        question=Ask(
            "This will set the Woodpecker server's log level so that it records almost nothing.",
            ("Failures and misuse go unrecorded until the level is raised again.",),
            describes=frozenset({r.SILENCES_SERVER}),
            fields=True,
        ),
        why="Failures and misuse go unrecorded until the level is raised again.",
    ),
    read_tool(
        "get_signature_public_key",
        group="server",
        description=(
            "The public key Woodpecker signs its requests to extensions with (config and secret "
            "extensions verify them with it), as PEM."
        ),
        untrusted_output=True,
        endpoints=(Endpoint("GET", "/api/signature/public-key"),),
        notes=("Answers text/plain: an Ed25519 public key in PEM. Needs no session since 3.17.",),
        answer=Value(
            "public_key", "Woodpecker signs its extension requests with this key:\n{value}", field=None
        ),
    ),
)
