"""A WoodpeckerGateway fake: stored objects by path for reads, every write recorded, nothing sent anywhere."""

from collections.abc import Mapping
from typing import Any

from ports.woodpecker import ApiResponse, Credential, LogWindow, LogWindowRequest, NotFound, Request


class FakeWoodpecker:
    def __init__(self, objects: Mapping[str, Any] | None = None) -> None:
        self.objects: dict[str, Any] = dict(objects or {})
        self.calls: list[Request] = []
        self.credentials: list[Credential | None] = []

    @property
    def writes(self) -> list[Request]:
        return [c for c in self.calls if c.method != "GET"]

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        self.calls.append(call)
        self.credentials.append(credential)
        if call.method == "GET":
            if call.path not in self.objects:
                raise NotFound(f"{call.path} not found", status=404)
            return ApiResponse(200, self.objects[call.path])
        if call.method == "DELETE":
            return ApiResponse(204, None)
        stored = self.objects.get(call.path)
        body = call.body if isinstance(call.body, Mapping) else {}
        merged = {**stored, **body} if isinstance(stored, Mapping) else {"id": 1, **body}
        return ApiResponse(200, merged)

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        return LogWindow(lines=(), total_lines=0)


# Repository 5 and its pipeline 12, waiting for approval, for tests that delete the one or approve the
# other: the guard reads the target before asking, and answers one it cannot find (or a pipeline not
# blocked) without a question.
HELD_PIPELINE: Mapping[str, Any] = {
    "/api/repos/5": {"id": 5, "full_name": "acme/five"},
    "/api/repos/5/pipelines/12": {"id": 512, "number": 12, "status": "blocked"},
}
