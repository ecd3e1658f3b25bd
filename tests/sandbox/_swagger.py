"""Woodpecker's swagger 3.17 document turned into JSON Schemas, with the documented deviations as explicit exceptions."""

import copy
import json
import re
from functools import cache
from typing import Any

import jsonschema

from tests.contract_data import SWAGGER_3_17

_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

# Where the server and the document disagree (API-NOTES, "Swagger document vs. reality"):
# the document is wrong, the server is what clients meet, so the sandbox follows the server.
RESPONSE_OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    # A single Org / OrgPerm object, although the document declares arrays.
    ("GET", "/orgs/{}"): {"$ref": "#/definitions/Org"},
    ("GET", "/orgs/{}/permissions"): {"$ref": "#/definitions/OrgPerm"},
}
# Operations the document says answer 200 but that answer 204 No Content.
STATUS_OVERRIDES: dict[tuple[str, str], int] = {
    ("POST", "/repos/{}/pipelines/{}/cancel"): 204,
    ("DELETE", "/agents/{}"): 204,
    ("DELETE", "/forges/{}"): 204,
}


def normalise(template: str) -> str:
    """'/api/repos/{repo_id}/secrets/{name}' -> '/repos/{}/secrets/{}' (the document's basePath is /api)."""
    path = template[len("/api") :] if template.startswith("/api/") else template
    return re.sub(r"\{[^}]+\}", "{}", path)


def _nullable(node: Any) -> Any:
    """Go marshals nil slices and maps as null; swagger 2.0 cannot say so, so every array/object may be null."""
    if isinstance(node, dict):
        out = {k: _nullable(v) for k, v in node.items()}
        if out.get("type") in ("array", "object"):
            out["type"] = [out["type"], "null"]
        return out
    if isinstance(node, list):
        return [_nullable(v) for v in node]
    return node


@cache
def document() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SWAGGER_3_17.read_text(encoding="utf-8"))
    return doc


@cache
def definitions() -> dict[str, Any]:
    defs: dict[str, Any] = copy.deepcopy(document()["definitions"])
    # []byte fields marshal as base64 strings, not the integer arrays the document claims.
    defs["LogEntry"]["properties"]["data"] = {"type": "string", "pattern": _BASE64}
    defs["Config"]["properties"]["data"] = {"type": "string", "pattern": _BASE64}
    # Never-activated forge repositories (GET /user/repos?all=true) carry Go's zero value here.
    defs["model.ApprovalMode"]["enum"] = [*defs["model.ApprovalMode"]["enum"], ""]
    # ... and so here: the gitea driver sets no visibility until activation (a real 3.17.0, docs/adr/0057).
    defs["RepoVisibility"]["enum"] = [*defs["RepoVisibility"]["enum"], ""]
    for schema in defs.values():
        for name, prop in schema.get("properties", {}).items():
            schema["properties"][name] = _nullable(prop)
        # Stricter than the document: every field we send must be one it names (catches typos).
        if "properties" in schema:
            schema["additionalProperties"] = False
    return defs


@cache
def operations() -> dict[tuple[str, str], dict[str, Any]]:
    ops: dict[tuple[str, str], dict[str, Any]] = {}
    for path, methods in document()["paths"].items():
        for method, op in methods.items():
            ops[(method.upper(), normalise(path))] = op
    return ops


def expected_status(method: str, template: str) -> int:
    key = (method, normalise(template))
    if key in STATUS_OVERRIDES:
        return STATUS_OVERRIDES[key]
    responses = operations()[key]["responses"]
    return min(int(code) for code in responses if code.startswith("2"))


def produces(method: str, template: str) -> list[str]:
    """The media types the operation answers with (the document's default: JSON)."""
    op = operations()[(method, normalise(template))]
    return list(op.get("produces") or document().get("produces") or ["application/json"])


def response_schema(method: str, template: str) -> dict[str, Any] | None:
    key = (method, normalise(template))
    if key in RESPONSE_OVERRIDES:
        schema: Any = RESPONSE_OVERRIDES[key]
    else:
        op = operations().get(key)
        assert op is not None, f"{method} {template} is not in the swagger document"
        schema = op["responses"].get("200", {}).get("schema")
        if schema is None:
            return None
    schema = copy.deepcopy(schema)
    if schema.get("type") == "array":
        # Some lists come back as null when empty (xorm's Find into a nil slice).
        schema["type"] = ["array", "null"]
    return {"definitions": definitions(), **schema}


@cache
def _check_definitions() -> None:
    jsonschema.Draft7Validator.check_schema({"definitions": definitions()})


@cache
def _validator(method: str, template: str) -> jsonschema.Draft7Validator | None:
    schema = response_schema(method, template)
    if schema is None:
        return None
    # Checking the meta-schema is the slow part, and nearly all of it is the definitions every
    # operation shares: they are checked once. The Draft 7 meta-schema checks each member of
    # "definitions" on its own and the rest of a schema apart from them, so the two checks below
    # accept exactly the schemas that checking each whole schema accepted.
    assert schema["definitions"] is definitions()
    _check_definitions()
    jsonschema.Draft7Validator.check_schema({k: v for k, v in schema.items() if k != "definitions"})
    return jsonschema.Draft7Validator(schema)


def validate(method: str, template: str, body: Any) -> None:
    validator = _validator(method, template)
    if validator is not None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(body))
        if error is not None:
            raise error
