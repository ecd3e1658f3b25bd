"""A repository's pipeline history analysed: which steps fail, which are flaky, since when a branch is red."""

from domain.tools import Arg, Endpoint, Fixed, Param, ToolSpec
from domain.woodpecker.answers import Analysed
from domain.woodpecker.catalogue.common import BRANCH_RULES, EVENTS, REPO_ID, read_tool
from domain.woodpecker.plans import PipelineHistory

# Documented additions beyond the shared catalogue (see the package's docstring).
ADDED: tuple[str, ...] = ("analyze_pipeline_history",)

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "analyze_pipeline_history",
        group="pipelines",
        untrusted_output=True,
        description=(
            "Recent pipelines analysed: per step failures, failure rate, median and p90 duration, trend; "
            "flaky steps (failed, then passed on the same commit); since when a branch is red."
        ),
        params=(
            REPO_ID,
            Param("branch", "string", False, "", constraints=BRANCH_RULES),
            Param("event", "enum", False, "", choices=EVENTS),
            Param(
                "limit",
                "integer",
                False,
                "Newest pipelines to read.",
                constraints={"minimum": 1, "maximum": 500, "default": 50},
            ),
        ),
        endpoints=(
            Endpoint(
                "GET",
                "/api/repos/{repo_id}/pipelines",
                query={
                    "branch": Arg("branch"),
                    "event": Arg("event"),
                    "page": Fixed("1"),
                    "perPage": Fixed("50"),
                },
            ),
            Endpoint(
                "GET",
                "/api/repos/{repo_id}/pipelines/{number}",
                step="then each finished pipeline listed, with its steps, 4 at a time",
            ),
        ),
        notes=(
            "The list is read 50 a page (page 1, 2, ...) until limit entries or a short page.",
            "At most 510 requests (10 pages and 500 pipelines), and no request starts after 30 s of the call, "
            "so that it answers before clients give up: the answer's read says how many it read and whether "
            "it stopped early (ports/use_cases/history.py).",
            "A flaky step failed in one pipeline and passed in a later one of the same commit: a restart "
            "(parent) or a new pipeline. A red branch's newest finished push, manual or cron pipeline "
            "(of event, when one is given) failed; since is the first failure after its last success.",
            "The summary names steps by pid and their place in steps, pipelines by number and commits by "
            "SHA: step, workflow and branch names, commit messages and authors stay in the data.",
        ),
        answer=Analysed(),
        plan=PipelineHistory(),
    ),
)
