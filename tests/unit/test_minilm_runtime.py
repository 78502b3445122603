"""Which MiniLM runtime the settings pick, the numpy fallback without onnxruntime, and the built-graph cache."""

from __future__ import annotations

import logging
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from zengram.adapters.factories import build_embedder
from zengram.adapters.minilm import (
    MiniLMEmbedder,
    MissingRuntime,
    OnnxMiniLMEmbedder,
    find_model_dir,
    resolve_runtime,
)
from zengram.adapters.minilm import onnx_embedder as onnx_module
from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder
from zengram.settings import Settings

pytestmark = pytest.mark.slow

TEXT = "Melanie signed up for a pottery class on Saturday"


@pytest.fixture
def without_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine where onnxruntime is not installed: importing it fails and find_spec finds nothing."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)


@pytest.fixture(scope="module")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installation's user cache folder ($XDG_CACHE_HOME) holding both graphs, built once here."""
    folder = tmp_path_factory.mktemp("cache")
    for variant in ("fp32", "int8"):
        OnnxMiniLMEmbedder(variant=variant, cache_dir=folder / "zengram" / "models").load()
    return folder


@pytest.fixture
def graphs(user_cache: Path) -> Path:
    return user_cache / "zengram" / "models"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every graph built from the weights, by variant."""
    built: list[str] = []
    real = onnx_module._built

    def counted(model_dir: Path, variant: onnx_module.Variant) -> bytes:
        built.append(variant)
        return real(model_dir, variant)

    monkeypatch.setattr(onnx_module, "_built", counted)
    return built


def graph_file(folder: Path, variant: str) -> Path:
    (path,) = folder.glob(f"all-MiniLM-L6-v2.{variant}.*.onnx")
    return path


def test_auto_is_onnx_int8_when_onnxruntime_is_installed() -> None:
    assert resolve_runtime("auto") == "onnx-int8"
    assert Settings().minilm_runtime == "auto"


def test_the_default_embedder_is_onnx_int8_behind_merged_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    settings = Settings(data_dir=tmp_path / "data")
    embedder = build_embedder(settings)
    assert isinstance(embedder, CoalescingEmbedder)
    assert isinstance(embedder.inner, OnnxMiniLMEmbedder) and embedder.inner.runtime == "onnx-int8"
    with caplog.at_level(logging.DEBUG):
        embedder.embed([TEXT])
    assert builds == ["int8"]
    # Cached for the installation (the user's cache folder), not in the data folder.
    assert graph_file(tmp_path / "cache" / "zengram" / "models", "int8").stat().st_size > 20_000_000
    assert not (tmp_path / "data" / "models").exists()
    # Quietly: none of the quantizer's 24 "Quantization parameters for tensor … not specified" lines.
    assert not [record for record in caplog.records if "Quantization parameters" in record.getMessage()]


def test_a_new_data_folder_loads_the_installations_graph(
    user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[str]
) -> None:
    """Issue 37: every new data folder rebuilt the int8 graph (19 s). Counted, not timed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    for folder in ("first", "second"):
        embedder = build_embedder(Settings(data_dir=tmp_path / folder))
        assert embedder.embed([TEXT]).shape == (1, 384)
        assert not (tmp_path / folder / "models").exists()
    assert builds == []


def test_without_a_writable_user_cache_the_data_folder_keeps_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert Settings(data_dir=tmp_path / "data").minilm_graph_dir == tmp_path / "data" / "models"
    assert Settings(data_dir=tmp_path, minilm_cache_dir=tmp_path / "mine").minilm_graph_dir == tmp_path / "mine"


@pytest.mark.parametrize(("runtime", "expected"), [("numpy", "numpy"), ("onnx", "onnx")])
def test_a_chosen_runtime_is_used(tmp_path: Path, runtime: str, expected: str) -> None:
    embedder = build_embedder(Settings(data_dir=tmp_path, minilm_runtime=runtime))  # type: ignore[arg-type]
    assert isinstance(embedder, CoalescingEmbedder)
    assert getattr(embedder.inner, "runtime") == expected  # noqa: B009 - both runtimes' attribute


@pytest.mark.usefixtures("without_onnxruntime")
def test_auto_falls_back_to_numpy_without_onnxruntime(tmp_path: Path) -> None:
    assert resolve_runtime("auto") == "numpy"
    embedder = build_embedder(Settings(data_dir=tmp_path))
    assert isinstance(embedder, CoalescingEmbedder) and isinstance(embedder.inner, MiniLMEmbedder)
    vector = embedder.embed([TEXT])[0]
    np.testing.assert_allclose(vector, MiniLMEmbedder().embed([TEXT])[0], atol=1e-6)
    assert not (tmp_path / "models").exists()


@pytest.mark.usefixtures("without_onnxruntime")
@pytest.mark.parametrize("runtime", ["onnx", "onnx-int8"])
def test_an_explicit_onnx_runtime_without_onnxruntime_says_what_to_do(tmp_path: Path, runtime: str) -> None:
    with pytest.raises(MissingRuntime, match=r"pip install onnxruntime onnx.*minilm_runtime=numpy"):
        build_embedder(Settings(data_dir=tmp_path, minilm_runtime=runtime))  # type: ignore[arg-type]


def test_a_cached_graph_is_loaded_not_built_again(graphs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_building(*_: object) -> bytes:
        raise AssertionError("the graph was built again although a cached one exists")

    monkeypatch.setattr(onnx_module, "_built", no_building)
    for variant in ("fp32", "int8"):
        embedder = OnnxMiniLMEmbedder(variant=variant, cache_dir=graphs)
        assert embedder.embed([TEXT]).shape == (1, 384)


def test_each_variant_has_its_own_file_and_the_graph_is_fused(graphs: Path) -> None:
    fp32 = Counter(node.op_type for node in onnx.load_model(graph_file(graphs, "fp32")).graph.node)
    int8 = Counter(node.op_type for node in onnx.load_model(graph_file(graphs, "int8")).graph.node)
    assert fp32["Attention"] == 6 and fp32["SkipLayerNormalization"] == 12 and fp32["EmbedLayerNormalization"] == 1
    assert "Softmax" not in fp32  # attention is one fused kernel per layer
    assert int8["QAttention"] == 6 and int8["MatMulInteger"] == 18  # every matmul in int8
    assert int8["Attention"] == 0 and int8["MatMul"] == 0


def test_an_unwritable_cache_folder_still_embeds(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    embedder = OnnxMiniLMEmbedder(cache_dir=blocker / "models")
    with caplog.at_level(logging.WARNING, logger=onnx_module.__name__):
        vector = embedder.embed([TEXT])[0]
    np.testing.assert_allclose(vector, MiniLMEmbedder().embed([TEXT])[0], atol=1e-5)
    assert "not cached" in caplog.text


def test_the_cache_key_follows_the_weights_and_the_variant(tmp_path: Path) -> None:
    original = find_model_dir()
    changed = tmp_path / "model"
    changed.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (changed / name).symlink_to(original / name)
    shutil.copy(original / "config.json", changed / "config.json")
    with (changed / "config.json").open("a") as config:
        config.write("\n")
    fingerprints = {
        onnx_module.graph_fingerprint(original, "fp32"),
        onnx_module.graph_fingerprint(original, "int8"),
        onnx_module.graph_fingerprint(changed, "fp32"),
    }
    assert len(fingerprints) == 3
    assert onnx_module.graph_fingerprint(original, "fp32") == onnx_module.graph_fingerprint(original, "fp32")


def test_padded_batches_bound_padding_and_tokens_and_keep_every_text() -> None:
    lengths = [12, 100, 13, 14, 250, 15, 99, 40, 12, 101, 16, 41]
    sequences = [np.zeros(length, dtype=np.int64) for length in lengths]
    batches = onnx_module.padded_batches(sequences, max_tokens=256, max_padding_per_text=4)
    assert sorted(index for batch in batches for index in batch) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert longest * len(batch) <= 256 or len(batch) == 1
        assert sum(longest - lengths[i] for i in batch) <= 4 * len(batch)
    grouped = {tuple(sorted(lengths[i] for i in batch)) for batch in batches}
    assert (12, 12, 13, 14, 15, 16) in grouped  # near lengths share a pass
    assert (99, 100) in grouped  # a third row of 101 tokens would pass the 256-token budget
