"""docs/clients.md's gateway table: a row for each gateway that was tried, what the person gets through
it, and settings that exist; and the warning that a hub's users are one identity."""

import re
from pathlib import Path

from entrypoints.settings import KNOWN_VARIABLES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
GATEWAYS = (
    "mcp-remote",
    "supergateway 4.0, stateful",
    "supergateway 4.0, stateless",
    "FastMCP",
    "ContextForge",
    "mcp-hub",
)


def rows() -> dict[str, tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8").split("## Behind a gateway or hub", 1)[1]
    table = re.findall(r"^\| (?!gateway |---)(.+?) \| (.+?) \| (.+?) \|$", text, flags=re.MULTILINE)
    return {gateway: (gets, setting) for gateway, gets, setting in table}


def test_each_gateway_tried_has_a_row_saying_what_the_person_gets() -> None:
    table = rows()
    for gateway in GATEWAYS:
        (row,) = [gets for name, (gets, _) in table.items() if name.startswith(gateway) or gateway in name]
        assert re.match(r"(the dialog|a token|nothing|on 2025-11-25|what the client)", row), (gateway, row)


def test_every_setting_the_table_names_is_one_this_server_reads() -> None:
    named = {v for _, setting in rows().values() for v in re.findall(r"`([A-Z][A-Z_]+)=", setting)}
    assert named and named <= KNOWN_VARIABLES, named - KNOWN_VARIABLES
    assert "WOODPECKER_MCP_TOKEN_STORE" in named  # what per-request processes need


def test_the_page_warns_that_a_hubs_users_are_one_identity() -> None:
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "A hub is one identity." in text
    assert "a token issued to one hub user can be redeemed by another hub user" in text
