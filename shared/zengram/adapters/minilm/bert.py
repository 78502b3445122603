"""A BERT encoder forward pass in plain numpy (inference only, float32).

Sequences are packed, not padded: the dense layers (which cost almost all the time) run once over the
concatenated tokens of a whole batch, and attention runs per group of equal-length sequences. So no work
is spent on padding, and a text's vector does not depend on which batch it came in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]

# Attention is computed for stacks of at most this many scores (1 MB), so they stay in cache.
_ATTENTION_BLOCK_SCORES = 1 << 18


@dataclass(frozen=True)
class BertConfig:
    num_layers: int
    num_heads: int
    hidden_size: int
    layer_norm_eps: float

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer, with matrices stored as (in, out) so that `x @ w` needs no transpose."""

    qkv_w: Floats  # query, key and value fused into one matmul; query pre-scaled by 1/sqrt(head_size)
    qkv_b: Floats
    attn_out_w: Floats
    attn_out_b: Floats
    attn_norm_w: Floats
    attn_norm_b: Floats
    ffn_in_w: Floats
    ffn_in_b: Floats
    ffn_out_w: Floats
    ffn_out_b: Floats
    ffn_norm_w: Floats
    ffn_norm_b: Floats


@dataclass(frozen=True)
class BertWeights:
    word_embeddings: Floats
    position_embeddings: Floats
    token_type_embedding: Floats  # row 0 only: single-sentence inputs have token type 0 everywhere
    embed_norm_w: Floats
    embed_norm_b: Floats
    layers: tuple[LayerWeights, ...]


def load_weights(tensors: Mapping[str, npt.NDArray[np.generic]], config: BertConfig) -> BertWeights:
    """Builds the weights from a Hugging Face BertModel state dict (with or without a `bert.` prefix)."""
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def tensor(name: str) -> Floats:
        return np.ascontiguousarray(tensors[prefix + name], dtype=np.float32)

    def linear(name: str) -> tuple[Floats, Floats]:
        return np.ascontiguousarray(tensor(f"{name}.weight").T), tensor(f"{name}.bias")

    def layer(index: int) -> LayerWeights:
        base = f"encoder.layer.{index}"
        scale = np.float32(1.0 / math.sqrt(config.head_size))
        q_w, q_b = linear(f"{base}.attention.self.query")
        k_w, k_b = linear(f"{base}.attention.self.key")
        v_w, v_b = linear(f"{base}.attention.self.value")
        out_w, out_b = linear(f"{base}.attention.output.dense")
        in_w, in_b = linear(f"{base}.intermediate.dense")
        ffn_w, ffn_b = linear(f"{base}.output.dense")
        return LayerWeights(
            qkv_w=np.ascontiguousarray(np.concatenate([q_w * scale, k_w, v_w], axis=1)),
            qkv_b=np.concatenate([q_b * scale, k_b, v_b]),
            attn_out_w=out_w,
            attn_out_b=out_b,
            attn_norm_w=tensor(f"{base}.attention.output.LayerNorm.weight"),
            attn_norm_b=tensor(f"{base}.attention.output.LayerNorm.bias"),
            ffn_in_w=in_w,
            ffn_in_b=in_b,
            ffn_out_w=ffn_w,
            ffn_out_b=ffn_b,
            ffn_norm_w=tensor(f"{base}.output.LayerNorm.weight"),
            ffn_norm_b=tensor(f"{base}.output.LayerNorm.bias"),
        )

    return BertWeights(
        word_embeddings=tensor("embeddings.word_embeddings.weight"),
        position_embeddings=tensor("embeddings.position_embeddings.weight"),
        token_type_embedding=tensor("embeddings.token_type_embeddings.weight")[0],
        embed_norm_w=tensor("embeddings.LayerNorm.weight"),
        embed_norm_b=tensor("embeddings.LayerNorm.bias"),
        layers=tuple(layer(i) for i in range(config.num_layers)),
    )


def mean_pooled(weights: BertWeights, config: BertConfig, sequences: Sequence[Ints]) -> Floats:
    """The mean of the last hidden states of each token sequence: shape (len(sequences), hidden)."""
    lengths = [len(ids) for ids in sequences]
    hidden = _embed(weights, config, sequences)
    for layer in weights.layers:
        hidden = _encoder_layer(layer, config, hidden, lengths)
    starts = np.cumsum([0, *lengths[:-1]])
    pooled: Floats = np.add.reduceat(hidden, starts, axis=0)
    pooled /= np.asarray(lengths, dtype=np.float32)[:, None]
    return pooled


def _embed(weights: BertWeights, config: BertConfig, sequences: Sequence[Ints]) -> Floats:
    token_ids = np.concatenate(sequences)
    positions = np.concatenate([np.arange(len(ids)) for ids in sequences])
    hidden = weights.word_embeddings[token_ids] + weights.position_embeddings[positions]
    hidden += weights.token_type_embedding
    return _layer_norm(hidden, weights.embed_norm_w, weights.embed_norm_b, config.layer_norm_eps)


def _encoder_layer(layer: LayerWeights, config: BertConfig, hidden: Floats, lengths: list[int]) -> Floats:
    qkv: Floats = hidden @ layer.qkv_w
    qkv += layer.qkv_b
    context = _attention(qkv, config, lengths)
    attended: Floats = context @ layer.attn_out_w
    attended += layer.attn_out_b
    attended += hidden
    hidden = _layer_norm(attended, layer.attn_norm_w, layer.attn_norm_b, config.layer_norm_eps)
    inner: Floats = hidden @ layer.ffn_in_w
    inner += layer.ffn_in_b
    _gelu_in_place(inner)
    out: Floats = inner @ layer.ffn_out_w
    out += layer.ffn_out_b
    out += hidden
    return _layer_norm(out, layer.ffn_norm_w, layer.ffn_norm_b, config.layer_norm_eps)


def _attention(qkv: Floats, config: BertConfig, lengths: list[int]) -> Floats:
    """Multi-head self-attention over packed sequences; each sequence attends only to itself.

    Runs of equal-length sequences are stacked into one batched matmul (callers sort by length).
    """
    context = np.empty((qkv.shape[0], config.hidden_size), dtype=np.float32)
    start = 0
    for length, run in groupby(lengths):
        count = len(list(run))
        per_stack = max(1, _ATTENTION_BLOCK_SCORES // (config.num_heads * length * length))
        for stacked in range(0, count, per_stack):
            rows = min(per_stack, count - stacked) * length
            context[start : start + rows] = _attend(qkv[start : start + rows], config, length)
            start += rows
    return context


def _attend(qkv: Floats, config: BertConfig, length: int) -> Floats:
    """Attention for a stack of sequences that all have `length` tokens; returns (rows, hidden)."""
    count = qkv.shape[0] // length
    # (count*length, 3*hidden) -> 3 x (count, heads, length, head_size)
    split = qkv.reshape(count, length, 3, config.num_heads, config.head_size).transpose(2, 0, 3, 1, 4)
    query, key, value = split
    scores = query @ key.transpose(0, 1, 3, 2)
    _softmax_in_place(scores)
    mixed: Floats = scores @ value
    return mixed.transpose(0, 2, 1, 3).reshape(count * length, config.hidden_size)


def _softmax_in_place(scores: Floats) -> None:
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def _layer_norm(x: Floats, weight: Floats, bias: Floats, eps: float) -> Floats:
    centred: Floats = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred /= np.sqrt(variance + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


# Abramowitz & Stegun 7.1.26: erf(z) = 1 - (a1 t + ... + a5 t^5) exp(-z^2), t = 1/(1 + p z), z >= 0;
# absolute error below 1.5e-7, under float32 resolution, so this matches an exact (erf) GELU.
# With z = |x|/sqrt 2 that gives Phi(-|x|) = 0.5 * poly(t) * exp(-x^2 / 2): the 0.5 and the 1/sqrt 2
# are folded into the constants below.
_T_SCALE = 0.3275911 / math.sqrt(2.0)
_HALF_A = tuple(0.5 * a for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_GELU_BLOCK_ELEMENTS = 1 << 16  # blocks of 256 KB keep the ~20 passes below in cache


def _gelu_in_place(x: Floats) -> None:
    """Exact GELU, x * Phi(x), in place on a 2-D array; numpy has no erf, hence the polynomial.

    Written as relu(x) - |x| * Phi(-|x|), which holds for either sign of x and needs no branch.
    """
    rows = max(1, _GELU_BLOCK_ELEMENTS // x.shape[1])
    for start in range(0, x.shape[0], rows):
        _gelu_block(x[start : start + rows])


def _gelu_block(x: Floats) -> None:
    magnitude = np.abs(x)
    t = magnitude * np.float32(_T_SCALE)
    t += 1.0
    np.reciprocal(t, out=t)
    tail = t * _HALF_A[0]
    for coefficient in _HALF_A[1:]:
        tail += coefficient
        tail *= t
    gaussian = np.square(magnitude, out=t)
    gaussian *= -0.5
    np.exp(gaussian, out=gaussian)
    tail *= gaussian  # now Phi(-|x|)
    tail *= magnitude
    np.maximum(x, 0.0, out=x)
    x -= tail
