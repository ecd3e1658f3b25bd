# The README's commands. `make test` is what CI runs (.ci/run).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install test lint bench sandbox

install:
	python3 -m venv .venv
	$(BIN)pip install -q --upgrade pip
	$(BIN)pip install -q -e '.[test]'
	@# The independent MCP client the tests drive; its tests skip where npm is missing.
	@if command -v npm >/dev/null 2>&1; then cd tests/node && npm ci --no-audit --no-fund --loglevel=error; fi

lint:
	$(BIN)ruff check .
	$(BIN)ruff format --check .
	$(BIN)mypy
	$(BIN)lint-imports

test: lint
	$(BIN)pytest -q

bench:
	$(PY) -m bench

sandbox:
	$(BIN)woodpecker-ci-mcp sandbox
