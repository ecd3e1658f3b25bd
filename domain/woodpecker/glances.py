"""What the lists a person starts from keep of each entry: the fields a person acts on (docs/adr/0070).

Ids for the next call, names, status, branch and times; every other field is one `get_*` call away,
which the result's summary names.
"""

from domain.woodpecker.answers import Glance, Kept

_TIMES = (
    Kept("created", "time"),
    Kept("started", "time", description="Absent until the pipeline starts."),
    Kept("finished", "time", description="Absent until the pipeline finishes."),
)
_STATE = (
    Kept("number", "id", description="The pipeline's number, what the pipeline tools take."),
    Kept("status", "string"),
    Kept("event", "string"),
    Kept("branch", "string"),
)
_PIPELINE_FIELDS = (
    *_STATE,
    Kept("ref", "ref", description="Absent when it is the branch's own (refs/heads/<branch>)."),
    Kept("commit", "string"),
    Kept("author", "string"),
    Kept(
        "subject",
        "subject",
        sources=("title", "message"),
        description="The pull request's title or the commit message's first line, cut at 72 characters.",
    ),
    Kept("from_fork", "flag", description="Present (true) when the pipeline comes from a fork."),
    *_TIMES,
)

PIPELINE = Glance(_PIPELINE_FIELDS, more="get_pipeline(repo_id, number)")
FEED = Glance(
    (Kept("repo_id", "id"), Kept("full_name", "string"), *_PIPELINE_FIELDS),
    more="get_pipeline(repo_id, number)",
    repo="repo_id",
)
REPOSITORY = Glance(
    (
        Kept("id", "id", description="The repository's id, what the tools take as repo_id."),
        Kept("full_name", "string"),
        Kept("forge_remote_id", "string", description="What activate_repository takes."),
        Kept("org_id", "id"),
        Kept("default_branch", "string"),
        Kept("active", "boolean"),
        Kept("has_forge_name_conflict", "flag"),
        Kept("has_no_forge_repo", "flag"),
    ),
    more="get_repository(repo_id)",
    nested=(("last_pipeline", Glance((*_STATE, *_TIMES), more="")),),
    pipeline="last_pipeline",
    repo="id",
)
