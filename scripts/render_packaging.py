#!/usr/bin/env python3
"""Render the MCP Registry entry (packaging/server.json) and the Claude Desktop bundle manifest (packaging/mcpb/manifest.json).

    python scripts/render_packaging.py           rewrite both files
    python scripts/render_packaging.py --check   exit 1 when either differs

Both are derived, never edited by hand: the version from pyproject.toml (the one place it is
written), the variables and their meanings from `entrypoints.settings.VARIABLES` (the one
place they are listed). `tests/test_packaging.py` runs the check and validates server.json
against the registry's published schema, vendored as packaging/server.schema.json.
"""

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from entrypoints.settings import DISTRIBUTION, PROGRAM, VARIABLES, HttpSettings  # noqa: E402  (needs ROOT on sys.path)

SERVER_JSON = ROOT / "packaging" / "server.json"
MANIFEST_JSON = ROOT / "packaging" / "mcpb" / "manifest.json"
REGISTRY_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# The registry checks that the package's README on the index names this (`mcp-name: ...`).
REGISTRY_NAME = "io.github.woodpecker-ci-mcp/woodpecker-ci-mcp"
TITLE = "Woodpecker CI"
SUMMARY = "Woodpecker CI over MCP; asks a person before anything irreversible or privilege-widening."
# Variables whose value is, or may contain, a credential (a redis URL may carry a password).
SECRET = frozenset(
    {
        "WOODPECKER_TOKEN",
        "WOODPECKER_MCP_SEAL_KEYS",
        "WOODPECKER_MCP_BEARER",
        "WOODPECKER_MCP_TOKEN_STORE",
        # Notification URLs carry the services' tokens.
        "WOODPECKER_MCP_APPROVAL_NOTIFY",
    }
)
REQUIRED = frozenset({"WOODPECKER_URL", "WOODPECKER_TOKEN"})
# The registry entry and the bundle start the stdio server; the HTTP transport's variables
# (the fields of HttpSettings) configure only `--transport http`.
HTTP_ONLY = frozenset(
    str(field.validation_alias) for field in HttpSettings.model_fields.values() if field.validation_alias
)


def project() -> dict[str, Any]:
    found: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return found


def stdio_variables() -> list[tuple[str, str, str]]:
    return [v for v in VARIABLES if v[0] not in HTTP_ONLY]


def server_json() -> dict[str, Any]:
    version = project()["version"]
    variables = []
    for name, default, meaning in stdio_variables():
        entry: dict[str, Any] = {"name": name, "description": meaning}
        if name in REQUIRED:
            entry["isRequired"] = True
        if name in SECRET:
            entry["isSecret"] = True
        if default not in ("none", "random", "stderr", "memory"):
            entry["default"] = default
        variables.append(entry)
    return {
        "$schema": REGISTRY_SCHEMA,
        "name": REGISTRY_NAME,
        "title": TITLE,
        "description": SUMMARY,
        "version": version,
        "packages": [
            {
                "registryType": "pypi",
                "identifier": DISTRIBUTION,
                "version": version,
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "environmentVariables": variables,
            }
        ],
    }


def manifest_json() -> dict[str, Any]:
    """The MCPB manifest: a `uv` server (the host makes the environment from the bundle's pyproject.toml).

    The bundle is the sdist (pyproject.toml and the packages) plus this manifest and
    server/main.py; `make bundle` assembles and packs it.
    """
    meta = project()
    return {
        "manifest_version": "0.4",
        "name": PROGRAM,
        "display_name": TITLE,
        "version": meta["version"],
        "description": SUMMARY,
        "long_description": meta["description"],
        "author": {"name": "the woodpecker-ci-mcp maintainers"},
        "license": meta["license"],
        "keywords": meta["keywords"],
        "server": {
            "type": "uv",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", "server/main.py"],
                "env": {
                    "WOODPECKER_URL": "${user_config.woodpecker_url}",
                    "WOODPECKER_TOKEN": "${user_config.woodpecker_token}",
                    "WOODPECKER_READ_ONLY": "${user_config.read_only}",
                },
            },
        },
        "user_config": {
            "woodpecker_url": {
                "type": "string",
                "title": "Woodpecker URL",
                "description": "The Woodpecker server root, e.g. https://ci.example.com (not the /api URL).",
                "required": True,
            },
            "woodpecker_token": {
                "type": "string",
                "title": "Woodpecker token",
                "description": "A personal access token (Woodpecker UI > user settings > personal access token).",
                "sensitive": True,
                "required": True,
            },
            "read_only": {
                "type": "boolean",
                "title": "Read only",
                "description": "Register only the read tools.",
                "default": False,
                "required": False,
            },
        },
        "compatibility": {"platforms": ["darwin", "linux", "win32"], "runtimes": {"python": ">=3.11"}},
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file differs")
    options = parser.parse_args()
    stale = []
    for path, document in ((SERVER_JSON, server_json()), (MANIFEST_JSON, manifest_json())):
        text = render(document)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if options.check:
            stale.append(path.relative_to(ROOT))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(map(str, stale))}; run python scripts/render_packaging.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
