"""The calling account: who it is and its pipeline feed."""

from domain.tools import Endpoint, Fixed, ToolSpec
from domain.woodpecker.answers import Listed, One
from domain.woodpecker.catalogue.common import (
    read_tool,
)
from domain.woodpecker.glances import FEED

TOOLS: tuple[ToolSpec, ...] = (
    read_tool(
        "get_current_user",
        group="account",
        description=(
            "The token's account and whether it is an instance admin: check this first on a 401 or 403."
        ),
        endpoints=(Endpoint("GET", "/api/user"),),
        notes=("admin is omitted from the JSON when false; report it as false.",),
        answer=One("user", "Signed in as {login} (admin: {admin})."),
    ),
    read_tool(
        "get_pipeline_feed",
        group="account",
        untrusted_output=True,
        description=("The latest pipeline of every active repository this account can push to."),
        endpoints=(Endpoint("GET", "/api/user/feed", query={"latest": Fixed("true")}),),
        notes=(
            (
                "latest=true gives one entry per active repository with push or admin access, ordered "
                "by full_name; a repository without pipelines appears with empty pipeline fields."
            ),
            (
                "Without latest Woodpecker returns the 50 newest pipelines instead, and null when "
                "there are none."
            ),
        ),
        answer=Listed("feed", FEED),
    ),
)
