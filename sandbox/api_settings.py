"""Secrets and registries (repository, organization and global scope) routes, with their validation quirks (crons: api_crons)."""

import re
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.responses import Response

from sandbox.api_common import (
    field_opt_bool,
    field_opt_str,
    field_str,
    field_str_list,
    null_if_empty,
    paginate,
)
from sandbox.http import BadBody, Ctx, Handler, Route, empty, json_response, text
from sandbox.models import EVENTS, Registry, Secret
from sandbox.world import World

_DOCKER_IMAGE = re.compile(
    r"^([\w\-_.]+(:\d+)?/)?([\w\-_.][\w\-_./]*/)?([\w\-_.]+)(:[\w\-_]+)?(@sha256:[a-f\d]{64})?$"
)

# A scope decides which rows a route sees: (org_id, repo_id) of the rows it owns; a repo_id of None
# matches any (the store's organization queries filter on org_id alone).
Scope = tuple[int, int | None]


def _repo_scope(ctx: Ctx) -> Scope:
    return (0, ctx.the_repo.id)


def _org_scope(ctx: Ctx) -> Scope:
    # OrgSecretList / OrgRegistryFind filter on org_id only: for the empty org of a missing id (id 0, see
    # sandbox/app.py) that is every global and every repository row.
    return (ctx.the_org.id, None)


def _in_scope(org_id: int, repo_id: int, scope: Scope) -> bool:
    return org_id == scope[0] and (scope[1] is None or repo_id == scope[1])


def _global_scope(ctx: Ctx) -> Scope:
    return (0, 0)


# The settings rows whose world tables are keyed by their id.
Row = TypeVar("Row", Secret, Registry)


def _found(row: Secret | Registry | None) -> Response:
    return empty(404) if row is None else json_response(row.api())


def _remove(table: dict[int, Row], row: Row | None) -> Response:
    if row is None:
        return empty(404)
    del table[row.id]
    return empty(204)


def _crud_routes(
    base: str,
    param: str,
    access: str,
    list_: Handler,
    create: Handler,
    get: Handler,
    patch: Handler,
    delete: Handler,
) -> list[Route]:
    """The five routes of one scope; `access` is one level, or "read|write" when reads and writes differ."""
    read_access, write_access = access.split("|") if "|" in access else (access, access)
    return [
        Route("GET", base, list_, read_access),
        Route("POST", base, create, write_access),
        Route("GET", f"{base}/:{param}", get, read_access),
        Route("PATCH", f"{base}/:{param}", patch, write_access),
        Route("DELETE", f"{base}/:{param}", delete, write_access),
    ]


# ---------------------------------------------------------------------- secrets


def _validate_secret(secret: Secret) -> str | None:
    for event in secret.events:
        if event not in EVENTS:
            return f"'{event}' is not a valid event type\nsecret event invalid"
    if not secret.events:
        return "secret event invalid: no event specified"
    for image in secret.images:
        if not image:
            return "secret image invalid: empty image in images"
        if not _DOCKER_IMAGE.match(image):
            return f"secret image invalid: image '{image}' do not match regexp"
    if not secret.name:
        return "secret name invalid: empty name"
    if not secret.value:
        return "secret value invalid: empty value"
    return None


def _secrets_in(world: World, scope: Scope) -> list[Secret]:
    rows = [s for s in world.secrets.values() if _in_scope(s.org_id, s.repo_id, scope)]
    return sorted(rows, key=lambda s: s.name)


def _secret(world: World, scope: Scope, name: str) -> Secret | None:
    return next((s for s in _secrets_in(world, scope) if s.name == name), None)


def _new_secret(body: dict[str, Any], scope: Scope) -> Secret:
    """The secret a POST body describes (its id is given when stored). Raises BadBody."""
    org_id, repo_id = scope
    return Secret(
        id=0,
        org_id=org_id,
        repo_id=repo_id or 0,
        name=field_str(body, "name"),
        value=field_str(body, "value"),
        events=field_str_list(body, "events") or [],
        images=field_str_list(body, "images") or [],
        note=field_str(body, "note"),
    )


def _secret_changes(body: dict[str, Any]) -> dict[str, Any]:
    """The fields a PATCH body changes: an empty value keeps the old one, `name` is ignored. Raises BadBody."""
    value = field_opt_str(body, "value")
    given: dict[str, Any] = {
        "events": field_str_list(body, "events"),
        "images": field_str_list(body, "images"),
        "note": field_opt_str(body, "note"),
    }
    changes = {k: v for k, v in given.items() if v is not None}
    return {**changes, "value": value} if value else changes


def _secret_routes(prefix: str, scope: Callable[[Ctx], Scope], access: str, kind: str) -> list[Route]:
    """The five secret routes of one scope. `kind` is repo, org or global (their answers differ)."""

    def list_(ctx: Ctx) -> Response:
        rows = [s.api() for s in paginate(ctx.query, _secrets_in(ctx.world, scope(ctx)))]
        # The repository list comes back null when empty; the org and global lists as [].
        return json_response(null_if_empty(rows) if kind == "repo" else rows)

    def get(ctx: Ctx) -> Response:
        return _found(_secret(ctx.world, scope(ctx), ctx.params["secret"]))

    def create(ctx: Ctx) -> Response:
        try:
            secret = _new_secret(ctx.bind(), scope(ctx))
        except BadBody as exc:
            return text(400, f"Error parsing secret. {exc}")
        problem = _validate_secret(secret)
        if problem:
            # 422 at every level, global included.
            return text(422, f"Error inserting secret. {problem}")
        if _secret(ctx.world, scope(ctx), secret.name) is not None:
            # No 409: the unique constraint surfaces as a 500.
            return text(
                500, f"Error inserting secret {secret.name!r}. UNIQUE constraint failed: secrets.name"
            )
        secret.id = ctx.world.new_id()
        secret.events = sorted(secret.events)
        ctx.world.secrets[secret.id] = secret
        return json_response(secret.api())

    def patch(ctx: Ctx) -> Response:
        try:
            changes = _secret_changes(ctx.bind())
        except BadBody as exc:
            return text(400, f"Error parsing secret. {exc}")
        found = _secret(ctx.world, scope(ctx), ctx.params["secret"])
        if found is None:
            return empty(404)
        # Work on a copy: a failed validation must leave the stored row alone. `name` is ignored.
        updated = Secret(**{**vars(found), **changes})
        problem = _validate_secret(updated)
        if problem:
            # Global secrets answer 400 here where the other levels answer 422.
            return text(400 if kind == "global" else 422, f"Error updating secret. {problem}")
        updated.events = sorted(updated.events)
        ctx.world.secrets[found.id] = updated
        return json_response(updated.api())

    def delete(ctx: Ctx) -> Response:
        return _remove(ctx.world.secrets, _secret(ctx.world, scope(ctx), ctx.params["secret"]))

    return _crud_routes(f"{prefix}/secrets", "secret", access, list_, create, get, patch, delete)


# ---------------------------------------------------------------------- registries


def _validate_registry(reg: Registry) -> str | None:
    if not reg.address:
        return "registry address is invalid"
    if not reg.username:
        return "registry username is invalid"
    if not reg.password:
        return "registry password is invalid"
    return None


def _registries_in(world: World, scope: Scope) -> list[Registry]:
    return sorted(
        (r for r in world.registries.values() if _in_scope(r.org_id, r.repo_id, scope)), key=lambda r: r.id
    )


def _registry(world: World, scope: Scope, address: str) -> Registry | None:
    return next((r for r in _registries_in(world, scope) if r.address == address), None)


def _registry_body(body: dict[str, Any]) -> Registry:
    raw_id = body.get("id")
    return Registry(
        id=raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else 0,
        org_id=0,
        repo_id=0,
        address=field_str(body, "address"),
        username=field_str(body, "username"),
        password=field_str(body, "password"),
        readonly=bool(field_opt_bool(body, "readonly")),
    )


def _registry_routes(prefix: str, scope: Callable[[Ctx], Scope], access: str, kind: str) -> list[Route]:
    def list_(ctx: Ctx) -> Response:
        rows = [r.api() for r in paginate(ctx.query, _registries_in(ctx.world, scope(ctx)))]
        return json_response(null_if_empty(rows) if kind == "repo" else rows)

    def get(ctx: Ctx) -> Response:
        return _found(_registry(ctx.world, scope(ctx), ctx.params["registry"]))

    def create(ctx: Ctx) -> Response:
        try:
            incoming = _registry_body(ctx.bind())
        except BadBody as exc:
            return text(400, f"Error parsing request. {exc}")
        org_id, repo_id = scope(ctx)
        reg = Registry(0, org_id, repo_id or 0, incoming.address, incoming.username, incoming.password)
        problem = _validate_registry(reg)
        if problem:
            # Organization level answers 422; repository and global level 400.
            return text(422 if kind == "org" else 400, f"Error inserting registry. {problem}")
        if _registry(ctx.world, scope(ctx), reg.address) is not None:
            return text(500, f"Error inserting registry {reg.address!r}. UNIQUE constraint failed")
        reg.id = ctx.world.new_id()
        ctx.world.registries[reg.id] = reg
        if kind == "repo":
            # The repository route answers a copy of the request body, not the stored row.
            return json_response(incoming.api())
        return json_response(reg.api())

    def patch(ctx: Ctx) -> Response:
        try:
            incoming = _registry_body(ctx.bind())
        except BadBody as exc:
            return text(400, f"Error parsing request. {exc}")
        found = _registry(ctx.world, scope(ctx), ctx.params["registry"])
        if found is None:
            return empty(404)
        updated = Registry(**vars(found))
        if incoming.address and kind != "repo":
            # Organization and global routes rename the entry; the repository route ignores address.
            updated.address = incoming.address
        if incoming.username:
            updated.username = incoming.username
        if incoming.password:
            updated.password = incoming.password
        problem = _validate_registry(updated)
        if problem:
            return text(400 if kind == "global" else 422, f"Error updating registry. {problem}")
        ctx.world.registries[found.id] = updated
        if kind == "repo":
            return json_response(incoming.api())
        return json_response(updated.api())

    def delete(ctx: Ctx) -> Response:
        return _remove(ctx.world.registries, _registry(ctx.world, scope(ctx), ctx.params["registry"]))

    return _crud_routes(f"{prefix}/registries", "registry", access, list_, create, get, patch, delete)


ROUTES = [
    *_secret_routes("/api/repos/:repo_id", _repo_scope, "push", "repo"),
    *_secret_routes("/api/orgs/:org_id", _org_scope, "org_admin", "org"),
    *_secret_routes("/api", _global_scope, "user|admin", "global"),
    *_registry_routes("/api/repos/:repo_id", _repo_scope, "push", "repo"),
    *_registry_routes("/api/orgs/:org_id", _org_scope, "org_admin", "org"),
    *_registry_routes("/api", _global_scope, "user|admin", "global"),
]
