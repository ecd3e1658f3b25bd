# The README's commands. CI (.ci/run) runs `make install-dev` and then `make coverage`: `make test`
# with the suite under coverage and its floor (docs/adr/0025).
VENV := .venv
PY ?= $(VENV)/bin/python
BIN := $(dir $(PY))

# Bytecode caches (__pycache__/, ignored by git) are written even where the environment says
# PYTHONDONTWRITEBYTECODE: without them each pytest worker recompiles and re-rewrites every test
# module, and every server the tests start recompiles the product, on every run (docs/adr/0025).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install install-dev client-clis test coverage lint bench sandbox dist dist-check bundle bundle-check real-woodpecker real-suite

# Two set-ups (docs/adr/0069). `make install`: the server alone in .venv, editable (the tests import
# the packages from this checkout), with nothing of the test tools. `make install-dev`: that plus the
# test extras and the npm packages the tests drive. Each step leaves a stamp and runs again only when
# what it installs from changes, so a second run does nothing. pip's output goes to
# .venv/install.log and is shown only when pip fails: a success prints one line (no setuptools
# editable-install banner).
INSTALLED := $(VENV)/.installed
INSTALLED_DEV := $(VENV)/.installed-dev
PIP_QUIETLY = $(BIN)pip install -q --disable-pip-version-check
QUIETLY = > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }

install: $(INSTALLED)
$(INSTALLED): pyproject.toml
	python3 -m venv $(VENV)
	@$(PIP_QUIETLY) --upgrade pip $(QUIETLY)
	@$(PIP_QUIETLY) -e . $(QUIETLY)
	@touch $@
	@echo "installed: $(BIN)woodpecker-ci-mcp (the tests' tools: make install-dev)"

$(INSTALLED_DEV): $(INSTALLED) pyproject.toml
	@$(PIP_QUIETLY) -e '.[test]' $(QUIETLY)
	@touch $@
	@echo "installed: the test extras (pytest, ruff, mypy, import-linter, build, uv, pipx, ...)"

# The npm packages the tests drive, each installed again only when its lock changes (npm ci writes
# node_modules/.package-lock.json): the independent MCP client (tests/node), the official
# conformance suite and the Node 22 it runs on (tests/conformance, docs/adr/0050), the MCP Apps
# host SDK the approval view's browser tests run it in (tests/apps_host, docs/adr/0066), and the
# client command lines docs/clients.md tells people to run (tests/clients: Claude Code, Gemini CLI,
# Codex CLI, the MCP Inspector; tests/docs/test_client_commands.py runs each documented command),
# and the OpenID provider the approval page's sign-in tests run on loopback (tests/oidc, ADR 0084).
# Without npm their tests skip (in CI, under WOODPECKER_MCP_STRICT_SKIPS, they fail).
NPM_DIRS := tests/node tests/conformance tests/apps_host tests/clients tests/oidc
NPM_STAMPS := $(NPM_DIRS:%=%/node_modules/.package-lock.json)
$(NPM_STAMPS): %/node_modules/.package-lock.json: %/package-lock.json %/package.json
	@if command -v npm >/dev/null 2>&1; then cd $* && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the tests that need $* skip"; fi

install-dev: $(INSTALLED_DEV) $(NPM_STAMPS)
	@# Debian's packages the redis and browser tests use; without them those tests skip.
	@command -v redis-server >/dev/null 2>&1 || echo "redis-server not found: the redis tests skip (Debian: apt-get install redis-server)"
	@command -v chromium >/dev/null 2>&1 || echo "chromium not found: the browser tests skip (Debian: apt-get install chromium)"

client-clis: tests/clients/node_modules/.package-lock.json

lint: $(INSTALLED_DEV)
	$(BIN)ruff check .
	$(BIN)ruff format --check .
	$(BIN)mypy
	$(BIN)lint-imports

test: install-dev lint
	$(BIN)pytest -q

# The same checks with the suite under coverage, failing under the floor in pyproject.toml. Tracing
# every line roughly doubles the CPU of the in-process tests on CPython 3.11, so the quick loop
# (`make test`) leaves it to this target, which CI runs (docs/adr/0025).
coverage: install-dev lint
	$(BIN)pytest -q --cov --cov-report=term:skip-covered

bench: $(INSTALLED_DEV)
	$(PY) -m bench

sandbox: $(INSTALLED)
	$(BIN)woodpecker-ci-mcp sandbox

# A real, seeded Woodpecker from the archives in ../shared/woodpecker/bin (VERSION=3.11.0; default the
# newest): one JSON line, serving until Ctrl-C (docs/adr/0057).
real-woodpecker: $(INSTALLED)
	$(PY) -m tests.real.harness up $(if $(VERSION),--version $(VERSION)) $(if $(PORT),--port $(PORT))

# The real-Woodpecker suite on the newest version, and `harness up` on every version present; a missing
# binary fails (WOODPECKER_MCP_STRICT_SKIPS). Then the same suite on 3.11.0 (`harness up` has run there
# already; docs/woodpecker-versions.md), validate_pipeline_config's table of configs included
# (docs/adr/0083). CI runs it after `make coverage`.
real-suite: $(INSTALLED_DEV)
	WOODPECKER_MCP_STRICT_SKIPS=1 $(BIN)pytest -q -n 0 -m real_woodpecker tests/real
	WOODPECKER_MCP_STRICT_SKIPS=1 WOODPECKER_MCP_REAL_VERSION=3.11.0 $(BIN)pytest -q -n 0 -m real_woodpecker \
	  tests/real/test_real_guard.py tests/real/test_real_woodpecker.py tests/real/test_real_config.py

# The sdist and wheel a user installs (`python -m build`; `make dist` needs only `make install`, and
# fetches `build` where the test extras did not bring it). `make dist-check` runs the README's wheel
# lines as they are written there (scripts/readme_wheel_lines.py reads them from the README, its own
# `make dist` first), each with a new home folder: every command a line installs or starts, started
# from outside the checkout, must answer tools/list with every tool.
# as many tools as this checkout's catalogue has
TOOL_COUNT = $(shell $(PY) -c 'from domain.woodpecker.catalogue import WOODPECKER_TOOLS as t; print(len(t))')
LIST_TOOLS = cd / && $(CURDIR)/$(PY) $(CURDIR)/scripts/list_tools.py --expect $(TOOL_COUNT)

dist: $(INSTALLED)
	@$(PY) -c 'import build' 2>/dev/null || $(PIP_QUIETLY) 'build>=1.2' $(QUIETLY)
	rm -rf dist
	$(PY) -m build --outdir dist . >/dev/null
	@ls dist

dist-check: $(INSTALLED_DEV)
	$(PY) scripts/readme_wheel_lines.py --expect $(TOOL_COUNT)

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
