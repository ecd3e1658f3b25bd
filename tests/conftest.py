"""Shared test configuration. Fixtures live in tests/fixtures/, one module per concern."""

import pytest

pytest_plugins = [
    "tests.fixtures.sandbox",
    "tests.fixtures.gateway",
    "tests.fixtures.mcp",
    "tests.fixtures.http",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
