"""Public documents the contract tests read, vendored so that a clone anywhere runs them (ADR 0025).

- `woodpecker/swagger-3.17.0.json`: the OpenAPI (swagger 2.0) document Woodpecker 3.17.0 serves.
- `spec/catalogue.json` and `spec/catalogue-beyond.json`: the reference tool catalogue and the
  entries guard.md §1b replaces whole.

They are copies, byte for byte, of the shared specification that sits beside a checkout during
development (`../shared/woodpecker/`, `../shared/spec/`); `SHA256SUMS` pins them, and
tests/docs/test_contract_data.py fails if a copy is edited or if the shared originals, where
present, have moved on.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
SWAGGER_3_17 = HERE / "woodpecker" / "swagger-3.17.0.json"
CATALOGUE = HERE / "spec" / "catalogue.json"
CATALOGUE_BEYOND = HERE / "spec" / "catalogue-beyond.json"
VENDORED = (SWAGGER_3_17, CATALOGUE, CATALOGUE_BEYOND)
SUMS = HERE / "SHA256SUMS"
# The shared specification beside the checkout (the repository's parent's `shared/`), if any.
UPSTREAM = HERE.parents[2] / "shared"


def upstream_of(path: Path) -> Path:
    """Where the shared original of a vendored file lives (it may not exist)."""
    return UPSTREAM / path.relative_to(HERE)
