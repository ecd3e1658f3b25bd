# The README's commands. `make test` is what CI runs (.ci/run).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install test lint bench sandbox

install:
	python3 -m venv .venv
	$(BIN)pip install -q --upgrade pip
	$(BIN)pip install -q -e '.[test]'

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
