# helix-agents session stores — developer commands. `make help` lists them.
.DEFAULT_GOAL := help
SHELL := /bin/bash

# uv from PATH, else a private copy bootstrapped into .tools/ with the system Python.
PYTHON ?= python3
UV := $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/bin/uv)
SYNCED := .venv/.synced

$(CURDIR)/.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet --disable-pip-version-check "uv>=0.5"

$(SYNCED): $(UV) pyproject.toml uv.lock $(wildcard packages/*/pyproject.toml) contract_tests/pyproject.toml
	$(UV) sync --all-packages --locked --inexact
	@touch $@

.PHONY: install
install: $(SYNCED) ## Create .venv with every package, the dev tools and uv if missing

.PHONY: install-containers
install-containers: $(SYNCED) ## Add testcontainers to .venv: the fixtures' Docker fallback
	$(UV) sync --all-packages --locked --inexact --group containers

.PHONY: lint
lint: $(SYNCED) ## Lint and check formatting with ruff
	$(UV) run ruff check .
	$(UV) run ruff format --check .

.PHONY: typecheck
typecheck: $(SYNCED) ## Type-check every package and test with mypy --strict
	$(UV) run mypy

.PHONY: test
test: lint typecheck ## Lint, type-check, then run every test on every backend
	$(UV) run pytest

.PHONY: state-machine-long
state-machine-long: $(SYNCED) ## Nightly: the state machine's long profile on every backend
	HELIX_CONTRACT_PROFILE=helix-thorough $(UV) run pytest packages -k state_machine_matches_model

.PHONY: frameworks-all
frameworks-all: $(SYNCED) ## Nightly: every framework's own test suite on all four backends (make test: SQLite)
	HELIX_FRAMEWORK_SUITE_BACKENDS=all $(UV) run pytest packages -k "sdk_suite or sdk_session_tests or sdk_resumability_tests"

.PHONY: failover-long
failover-long: $(SYNCED) ## The failover fault tests' long version: bigger workload, longer run
	HELIX_FAILOVER_LONG=1 $(UV) run pytest packages -k "FO_"

# Mutation testing: mutmut's mutants of the memory store and its core modules, each run in
# memory against the contract suite on the memory store; the score and every survivor
# go into docs/contract.md. MUTATION_ARGS adds options, e.g. "--results mutation.txt"
# to resume an interrupted run (see contract_tests/mutation.py).
.PHONY: mutation
mutation: $(SYNCED) ## Mutation testing; score and survivors into docs/contract.md (~1 h)
	nice -n 10 $(UV) run python contract_tests/mutation.py $(MUTATION_ARGS)

# docs/lifecycle.md, "Storage stays flat": SOAK_TURNS turns with idle_ttl, checkpoint
# retention and the sweep on SOAK_BACKEND (sqlite, postgres, redis or memory); fails if the
# storage grows after warm-up. make test runs a 5,000-turn sample (repo_tests/test_soak.py).
SOAK_TURNS ?= 1000000
SOAK_BACKEND ?= sqlite
.PHONY: soak
soak: $(SYNCED) ## Soak: 1,000,000 turns with TTL on; storage must stay flat (~30 min on SQLite)
	nice -n 10 $(UV) run python -m bench.soak --backend $(SOAK_BACKEND) --turns $(SOAK_TURNS)

.PHONY: demo
demo: $(SYNCED) ## Run the scripted agent loop on ./helix-demo.db (SQLite)
	$(UV) run python examples/agent_loop.py

# The inspector's screenshots in docs/inspector.md: its browser test on SQLite, saving them.
.PHONY: inspector-screenshots
inspector-screenshots: $(SYNCED) ## Retake docs/img/inspector-*.png (needs /usr/bin/chromium)
	HELIX_INSPECTOR_SHOTS=docs/img $(UV) run pytest "packages/helix-agents-cli/cli_tests/test_serve_browser.py::test_INS_2_the_demo_session_its_hidden_rows_compaction_and_output_grep[sqlite_url]"

.PHONY: long-run
long-run: $(SYNCED) ## Run the context-strategies walk-through on ./helix-long-run.db (SQLite)
	$(UV) run python examples/long_run.py

# EXP-14 (docs/export.md): a generated export file of TRANSFER_MB megabytes imported into
# SQLite and exported again by helix-store, each command's peak memory measured.
TRANSFER_MB ?= 1024
.PHONY: transfer-1gb
transfer-1gb: $(SYNCED) ## Import and export a 1 GB file; print each command's peak memory (~10 min)
	cd packages/helix-agents-cli && $(UV) run python -m cli_tests.transfer_memory --mb $(TRANSFER_MB) --dir $(CURDIR)/.transfer-1gb
	rm -rf .transfer-1gb

# The benchmarks need the bench group (the alternatives) and the local Postgres and
# Redis (HELIX_POSTGRES_URL / HELIX_REDIS_URL to point elsewhere). BENCH_ARGS adds options,
# e.g. BENCH_ARGS="--wait-quiet 600" to wait for other test runs to finish first.
BENCH := $(UV) run --locked --all-packages --group bench python -m bench $(BENCH_ARGS)

.PHONY: bench
bench: $(SYNCED) ## Run every benchmark; write bench/results/full.json, docs/performance.md and its plot
	$(BENCH)

.PHONY: bench-quick
bench-quick: $(SYNCED) ## The benchmarks' short mode (a few minutes); results in bench/results/quick.*
	$(BENCH) --quick

.PHONY: docs
docs: $(SYNCED) ## Build the documentation site into site/ (open site/index.html from disk)
	$(UV) run nox -s docs

.PHONY: docs-serve
docs-serve: $(SYNCED) ## Serve the docs on http://127.0.0.1:8000, rebuilt on each change
	NO_MKDOCS_2_WARNING=1 $(UV) run mkdocs serve --dev-addr 127.0.0.1:8000

# Every distribution's wheel, into a fresh dist/: `pip install --find-links dist/ NAME` installs
# from there (README). uv's build frontend, as repo_tests/test_release.py uses it; no .venv.
# DIST=elsewhere builds there instead (repo_tests/test_dist.py does). helix-agents-crewai is
# outside the uv workspace (CrewAI pins mcp<2; CONTRIBUTING.md): built by its path.
DIST ?= dist
.PHONY: dist
dist: $(UV) ## Build every distribution's wheel into dist/
	rm -rf $(DIST)
	$(UV) build --all-packages --wheel --quiet --out-dir $(DIST)
	$(UV) build packages/helix-agents-crewai --wheel --quiet --out-dir $(DIST)
	@ls $(DIST)

.PHONY: clean
clean: ## Remove the environment, caches and build output
	rm -rf .venv .tools .nox .mypy_cache .ruff_cache .pytest_cache .hypothesis site dist .transfer-1gb

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'
