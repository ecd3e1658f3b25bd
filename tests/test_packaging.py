"""The MCP Registry entry and the Claude Desktop bundle manifest: derived from the code, valid against the published schemas.

`make bundle-check` (run by CI) validates and packs the bundle with the npm `mcpb` CLI and
starts the packed bundle's entry point; these tests keep the files it packs in step with
the code and check server.json against the registry's schema, vendored in packaging/.
"""

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, FormatChecker

from entrypoints.settings import DISTRIBUTION, VARIABLES

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
SECRETS = {
    "WOODPECKER_TOKEN",
    "WOODPECKER_MCP_SEAL_KEYS",
    "WOODPECKER_MCP_TOKEN_STORE",
    "WOODPECKER_MCP_APPROVAL_NOTIFY",
}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def server_json() -> dict[str, Any]:
    found: dict[str, Any] = load(PACKAGING / "server.json")
    return found


def manifest() -> dict[str, Any]:
    found: dict[str, Any] = load(PACKAGING / "mcpb" / "manifest.json")
    return found


def test_the_packaging_files_are_the_rendered_ones() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_packaging.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_server_json_is_valid_against_the_vendored_registry_schema() -> None:
    schema = load(PACKAGING / "server.schema.json")
    document = server_json()
    assert document["$schema"] == schema["$id"], "server.json names the schema it is checked against"
    Draft7Validator.check_schema(schema)
    errors = sorted(
        Draft7Validator(schema, format_checker=FormatChecker()).iter_errors(document), key=lambda e: e.path
    )
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_the_vendored_schema_rejects_what_the_registry_rejects() -> None:
    # The validation above proves something only if the schema can say no.
    schema = load(PACKAGING / "server.schema.json")
    bad = {**server_json(), "name": "no-slash"}
    assert list(Draft7Validator(schema).iter_errors(bad))
    latest = json.loads(json.dumps(server_json()))
    latest["packages"][0]["version"] = "latest"
    assert list(Draft7Validator(schema).iter_errors(latest))


def test_server_json_describes_the_package_and_its_variables_with_the_secret_ones_marked() -> None:
    document = server_json()
    assert document["version"] == VERSION
    (package,) = document["packages"]
    assert (package["registryType"], package["identifier"], package["version"]) == (
        "pypi",
        DISTRIBUTION,
        VERSION,
    )
    variables = {v["name"]: v for v in package["environmentVariables"]}
    assert {"WOODPECKER_URL", "WOODPECKER_TOKEN", "WOODPECKER_READ_ONLY", "ELICITATION"} <= set(variables)
    assert set(variables) <= {name for name, _, _ in VARIABLES}
    assert {name for name, v in variables.items() if v.get("isSecret")} == SECRETS
    assert all(v["description"] for v in variables.values())


def test_the_readme_names_the_registry_entry_so_the_registry_can_verify_the_package() -> None:
    # The registry accepts a PyPI package for a server name only if its README says mcp-name: <name>.
    assert f"mcp-name: {server_json()['name']}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_bundle_asks_for_the_url_and_the_token_and_keeps_the_token_sensitive() -> None:
    document = manifest()
    assert document["version"] == VERSION
    config = document["user_config"]
    assert config["woodpecker_url"]["type"] == "string" and not config["woodpecker_url"].get("sensitive")
    assert config["woodpecker_token"]["sensitive"] is True
    env = document["server"]["mcp_config"]["env"]
    assert env["WOODPECKER_URL"] == "${user_config.woodpecker_url}"
    assert env["WOODPECKER_TOKEN"] == "${user_config.woodpecker_token}"
    referenced = {v.removeprefix("${user_config.").removesuffix("}") for v in env.values()}
    assert referenced == set(config), "every user setting reaches the server, and only those"
    assert (PACKAGING / "mcpb" / document["server"]["entry_point"]).is_file()


@pytest.mark.parametrize("name", ["package.json", "package-lock.json"])
def test_the_mcpb_cli_is_pinned_for_npm_ci(name: str) -> None:
    document = load(PACKAGING / name)
    pinned = document.get("devDependencies") or document["packages"][""]["devDependencies"]
    assert pinned["@anthropic-ai/mcpb"][0].isdigit(), "an exact version, so CI's bundle is reproducible"
