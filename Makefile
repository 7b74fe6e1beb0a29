# oltplab developer commands. `make test` is what CI runs: it installs what the
# tests need, builds the engine into .venv, runs every lint and every test.
.DEFAULT_GOAL := help
SHELL := /bin/bash

VENV ?= .venv
BIN := $(VENV)/bin
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

# Parallel pytest processes (scripts/test-phases): more than the cores, since many tests wait on
# servers and sleeps; 3, 4 and 5 measured on 2 cores in the README's Development section.
export PYTEST_WORKERS ?= 4
WITH_SERVERS := $(BIN)/python -m tests.servers.with_servers -- scripts/test-phases

.PHONY: help free-disk deps install build-dev build-release format docs lint lint-rust lint-py test-rust test-py test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-14s %s\n",$$1,$$2}'

$(BIN)/python:
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

free-disk: ## fail at once, saying so, when the disk is too full for a fresh clone's make test
	python3 -m tests.servers.disk

deps: ## install MariaDB, PostgreSQL and sysbench from Debian's packages when missing
	scripts/install-test-deps.sh

install: $(BIN)/python ## create .venv and install the build and dev tools
	$(BIN)/python -m pip install -q "maturin>=1.7,<2"

build-dev: install ## compile the engine (debug) into .venv, with the dev extras
	scripts/build-engine

build-release: install ## compile the engine optimised into .venv (for real measurements)
	scripts/build-engine --release

format: ## rustfmt + ruff format + ruff --fix
	cargo fmt --all
	$(BIN)/ruff format python tests
	$(BIN)/ruff check --fix python tests

docs: build-dev ## regenerate docs/options.md from the engine's option catalogue
	$(BIN)/python -m oltplab.options_doc > docs/options.md

# The two sides at once, each one's output kept together: the Python lints run while clippy
# and the module-cycle test compile (mostly one crate, on one core).
lint: build-dev ## rustfmt --check, clippy -D warnings, no module cycles, ruff, mypy --strict, stubtest
	$(MAKE) --no-print-directory -j2 --output-sync=target lint-rust lint-py

lint-rust: ## the Rust side of `lint` (needs no build)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test -q --workspace --test module_cycles

lint-py: ## the Python side of `lint` (after `make build-dev`: stubtest reads the built engine)
	$(BIN)/ruff check python tests bench
	$(BIN)/ruff format --check python tests bench
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest oltplab._core

test-rust: deps build-dev ## engine unit and integration tests (with private MariaDB and PostgreSQL)
	$(WITH_SERVERS) rust

test-py: deps build-dev ## pytest: parallel, then the `serial` tests (exit 5, no tests, fails)
	$(WITH_SERVERS) parallel serial

test: free-disk deps lint ## everything CI runs: lints, then every test under one pair of servers
	$(WITH_SERVERS) rust parallel serial
