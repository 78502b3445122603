"""all-MiniLM-L6-v2 on ONNX Runtime, fp32 or int8, from a graph built here (`graph.py`), without torch.

The graph is built from the installed safetensors weights on first use and, when a cache folder is
given, saved there under a name that fingerprints the weights, the graph code and the variant, so the
next process loads it instead of building it again (building costs ~1 s fp32, ~2 s int8). A cache
folder that cannot be written is not an error: the graph is then built in memory each time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from zengram.adapters.minilm.bert import Ints
from zengram.adapters.minilm.model_files import (
    DIMENSION,
    MAX_SEQ_LENGTH,
    MODEL_ID,
    find_model_dir,
    l2_normalised,
    load_tokenizer,
    read_config,
    token_ids,
)

logger = logging.getLogger(__name__)

Variant = Literal["fp32", "int8"]
# Padding a batch may add per text, on average. Measured CPU per text (fp32, one thread): a pass costs
# ~3 ms of fixed work per row it runs alone (16 tokens: 7.0 ms alone, 3.8 ms in a batch of 8) and
# ~0.24 ms per token, padding included; so a few tokens of padding per text are cheaper than a pass.
MAX_PADDING_PER_TEXT = 4


@dataclass(frozen=True)
class _LoadedModel:
    tokenizer: Any  # tokenizers.Tokenizer (the library ships no type information)
    session: Any  # onnxruntime.InferenceSession (untyped), one thread per pass
    lone_session: Any  # the same graph on `lone_pass_threads` threads (the session itself when that is 1)


class OnnxMiniLMEmbedder:
    """The `Embedder` port on all-MiniLM-L6-v2 run by ONNX Runtime: 384 dimensions, L2-normalised rows.

    fp32 reproduces the reference vectors (cosine ≥ 0.9999) and batches by length: padding is masked,
    so a text's vector is the same (to ~1e-7) in any batch. int8 trades accuracy (cosine ≥ 0.98, mean
    0.992, to the reference; ≥ 0.97 on an AVX2-only CPU) for ~2.5x less CPU per text; its
    activations are quantized with one scale per tensor, computed at run time, so a batch would change each
    text's vector: int8 therefore runs one text per pass.

    Construction is cheap; the first `embed` builds or loads the graph. Safe to share between threads:
    loading happens once under a lock, and ONNX Runtime sessions accept concurrent `run` calls. A call that
    needs several passes (a batch of int8 texts, or of fp32 texts of different lengths) runs them on up to
    `parallel_runs` threads, one core each: an import or a seeding uses every core, not one.

    A pass that runs alone (no other pass of this embedder is running) spreads over `lone_pass_threads`
    threads, as many cores as the process has at most (ADR 0039: one client's writes 1.6-1.75x faster on
    two cores). Its vector is the same, bit for bit: the split only changes who computes which rows of a product.
    """

    def __init__(self, model_dir: Path | None = None, *, variant: Variant = "fp32", cache_dir: Path | None = None,
                 max_batch_tokens: int = 2048, parallel_runs: int = 1, lone_pass_threads: int = 1) -> None:
        if max_batch_tokens < MAX_SEQ_LENGTH:
            raise ValueError(f"max_batch_tokens must be at least {MAX_SEQ_LENGTH}")
        if parallel_runs < 1 or lone_pass_threads < 1:
            raise ValueError("parallel_runs and lone_pass_threads must be at least 1")
        self._model_dir = model_dir
        self._variant: Variant = variant
        self._cache_dir = cache_dir
        self._max_batch_tokens = max_batch_tokens
        self._parallel_runs = parallel_runs
        self._lone_pass_threads = min(lone_pass_threads, usable_cores())
        self._passes_running = 0
        self._passes_lock = threading.Lock()
        self._model: _LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._runners: ThreadPoolExecutor | None = None  # made on the first call that needs them

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def runtime(self) -> str:
        return "onnx" if self._variant == "fp32" else "onnx-int8"

    def load(self) -> None:
        """Builds or loads the graph now rather than on the first `embed` (e.g. to warm a server up)."""
        self._loaded()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return vectors
        model = self._loaded()
        sequences = token_ids(model.tokenizer, texts)
        batches = self._batches(sequences)

        parallel = len(batches) > 1 and self._parallel_runs > 1

        def run(batch: list[int]) -> npt.NDArray[np.float32]:
            return self._pass(model, [sequences[i] for i in batch], may_spread=not parallel)

        passes = self._runner_pool().map(run, batches) if parallel else map(run, batches)
        for batch, batch_vectors in zip(batches, passes, strict=True):
            vectors[batch] = batch_vectors
        return vectors

    def _pass(self, model: _LoadedModel, sequences: Sequence[Ints], *, may_spread: bool) -> npt.NDArray[np.float32]:
        """One forward pass: on the lone session's threads when no other pass of this embedder is running,
        else on one thread, so that passes side by side do not fight over the cores."""
        with self._passes_lock:
            alone = may_spread and self._passes_running == 0
            self._passes_running += 1
        try:
            return _run(model.lone_session if alone else model.session, sequences)
        finally:
            with self._passes_lock:
                self._passes_running -= 1

    def _runner_pool(self) -> ThreadPoolExecutor:
        """The threads a call's passes share (ONNX Runtime releases the GIL while it runs a pass)."""
        with self._load_lock:
            if self._runners is None:
                self._runners = ThreadPoolExecutor(self._parallel_runs, thread_name_prefix="minilm-pass")
            return self._runners

    def _batches(self, sequences: Sequence[Ints]) -> list[list[int]]:
        if self._variant == "int8":
            return [[index] for index in range(len(sequences))]
        return padded_batches(sequences, self._max_batch_tokens)

    def _loaded(self) -> _LoadedModel:
        model = self._model
        if model is None:
            with self._load_lock:
                if self._model is None:
                    model_dir = find_model_dir(self._model_dir)
                    graph = graph_file_or_bytes(model_dir, self._variant, self._cache_dir)
                    session = _session(graph)
                    lone = _session(graph, self._lone_pass_threads) if self._lone_pass_threads > 1 else session
                    self._model = _LoadedModel(tokenizer=load_tokenizer(model_dir), session=session,
                                               lone_session=lone)
                model = self._model
        return model


def padded_batches(sequences: Sequence[Ints], max_tokens: int,
                   max_padding_per_text: int = MAX_PADDING_PER_TEXT) -> list[list[int]]:
    """Indices of `sequences` by length, cut so that a batch is at most `max_tokens` tokens once padded and
    pads its texts by at most `max_padding_per_text` tokens on average.

    Unlike the packed numpy pass, a padded batch computes every padding position: merging a 20-token
    text with a 100-token one would cost more than running them apart.
    """
    batches: list[list[int]] = []
    batch: list[int] = []
    real_tokens = 0
    for index in sorted(range(len(sequences)), key=lambda i: len(sequences[i])):
        length = len(sequences[index])  # the longest so far: every row of the batch is padded to it
        rows = len(batch) + 1
        padding = rows * length - real_tokens - length
        if batch and (rows * length > max_tokens or padding > max_padding_per_text * rows):
            batches.append(batch)
            batch, real_tokens = [], 0
        batch.append(index)
        real_tokens += length
    if batch:
        batches.append(batch)
    return batches


def _run(session: Any, sequences: Sequence[Ints]) -> npt.NDArray[np.float32]:
    """One forward pass over right-padded sequences; the graph pools and normalises."""
    longest = max(len(ids) for ids in sequences)
    input_ids = np.zeros((len(sequences), longest), dtype=np.int32)
    attention_mask = np.zeros((len(sequences), longest), dtype=np.int32)
    for row, ids in enumerate(sequences):
        input_ids[row, : len(ids)] = ids
        attention_mask[row, : len(ids)] = 1
    (vectors,) = session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})
    # Normalised in the graph already; once more here so that rows are unit length to float32 rounding.
    return l2_normalised(np.asarray(vectors, dtype=np.float32))


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says, else the machine's)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _session(graph: Path | bytes, threads: int = 1) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # Passes side by side take one thread each (see CoalescingEmbedder); a lone pass may take more. On a 2-core
    # AVX2 machine a second thread cut a 58-token int8 pass from 10.7 to 6.2 ms, for ~16 % more CPU; a pass
    # whose second thread must wait for a core other work holds can be slower than one (ADR 0039).
    # No spinning: idle pool threads must not burn a core other requests need.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    source = str(graph) if isinstance(graph, Path) else graph
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def graph_file_or_bytes(model_dir: Path, variant: Variant, cache_dir: Path | None) -> Path | bytes:
    """The graph for `variant`: a cached file when there is one (written now if missing), else bytes."""
    if cache_dir is None:
        return _built(model_dir, variant)
    path = cache_dir / f"all-MiniLM-L6-v2.{variant}.{graph_fingerprint(model_dir, variant)}.onnx"
    if path.is_file():
        return path
    built = _built(model_dir, variant)
    try:
        _write_atomically(path, built)
    except OSError as error:
        logger.warning("MiniLM ONNX graph not cached (%s): it will be built again by the next process", error)
        return built
    logger.info("MiniLM ONNX graph (%s) built and cached at %s", variant, path)
    return path


def graph_fingerprint(model_dir: Path, variant: Variant) -> str:
    """Changes with the weights, the config, the graph code and, for int8, the quantizer's version."""
    from zengram.adapters.minilm.graph import GRAPH_VERSION

    digest = hashlib.sha256(f"{GRAPH_VERSION}:{variant}:{_quantizer_version(variant)}".encode())
    for name in ("config.json", "model.safetensors"):
        with (model_dir / name).open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()[:16]


def _quantizer_version(variant: Variant) -> str:
    if variant == "fp32":
        return ""
    import onnxruntime

    return str(onnxruntime.__version__)


def _built(model_dir: Path, variant: Variant) -> bytes:
    from safetensors.numpy import load_file

    from zengram.adapters.minilm.graph import build_graph, quantized

    model = build_graph(load_file(str(model_dir / "model.safetensors")), read_config(model_dir / "config.json"))
    if variant == "int8":
        model = quantized(model)
    serialized: bytes = model.SerializeToString()
    return serialized


def _write_atomically(path: Path, content: bytes) -> None:
    """Other processes see the whole file or none (two building at once both write; the last rename wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(content)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
