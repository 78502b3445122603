"""The all-MiniLM-L6-v2 encoder as an ONNX graph, written node by node from the safetensors weights.

No exporter and no torch: `onnx.helper` assembles the same BERT forward pass as `bert.py`, with ONNX
Runtime's fused CPU kernels (the `com.microsoft` contrib operators its own transformer optimizer would
produce): EmbedLayerNormalization, Attention (one packed QKV matmul, softmax over the attention mask),
SkipLayerNormalization (residual + bias + LayerNorm), BiasGelu (exact erf GELU). Batch and sequence
length are dynamic; mean pooling over the attention mask and L2 normalisation are in the graph too.

Inputs: `input_ids` and `attention_mask`, int32 (batch, sequence), right-padded. Padded key positions
get a -10000 bias before the softmax, whose exponential is exactly 0 in float32, and pooling skips them:
a text's vector does not depend on the padding its batch needed.

The int8 variant is ONNX Runtime's dynamic quantization of this graph: weights int8 per output channel,
activations uint8 with a scale computed per tensor at run time (so per batch: see `onnx_embedder`).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from zengram.adapters.minilm.bert import BertConfig, LayerWeights, load_weights

if TYPE_CHECKING:
    import onnx

# Bump when the graph below changes: cached graphs are keyed by it.
GRAPH_VERSION = 1
OPSET = 18  # ReduceL2 takes its axes as an input from opset 18
CONTRIB = "com.microsoft"
INPUT_IDS = "input_ids"
ATTENTION_MASK = "attention_mask"
OUTPUT = "sentence_embedding"


def build_graph(tensors: Mapping[str, npt.NDArray[np.generic]], config: BertConfig) -> onnx.ModelProto:
    """The fp32 graph for a Hugging Face BertModel state dict (the same names `bert.load_weights` reads)."""
    weights = load_weights(tensors, config)
    graph = _GraphBuilder(config.hidden_size)
    eps = config.layer_norm_eps
    # Single-sentence inputs have token type 0 everywhere: its row is folded into the position table.
    positions = weights.position_embeddings + weights.token_type_embedding
    graph.node("EmbedLayerNormalization",
               [INPUT_IDS, "", graph.weight("word_embeddings", weights.word_embeddings),
                graph.weight("position_embeddings", positions), "",
                graph.weight("embeddings.norm.weight", weights.embed_norm_w),
                graph.weight("embeddings.norm.bias", weights.embed_norm_b), ATTENTION_MASK],
               ["embedded", "mask_index"], domain=CONTRIB, epsilon=eps, shapes=[graph.hidden, ["batch"]],
               types=[_FLOAT, _INT32])
    hidden = "embedded"
    for index, layer in enumerate(weights.layers):
        hidden = _encoder_layer(graph, f"layer{index}", layer, config, hidden)
    graph.mean_pooled_and_normalised(hidden)
    return graph.model()


def _encoder_layer(graph: _GraphBuilder, name: str, layer: LayerWeights, config: BertConfig, hidden: str) -> str:
    eps = config.layer_norm_eps
    inner_shape = [graph.inner(layer.ffn_in_w.shape[1])]
    # bert.load_weights pre-scales the query by 1/sqrt(head_size), hence scale=1.
    graph.node("Attention", [hidden, graph.weight(f"{name}.qkv.weight", layer.qkv_w),
                             graph.weight(f"{name}.qkv.bias", layer.qkv_b), "mask_index"],
               [f"{name}.context"], domain=CONTRIB, num_heads=config.num_heads, scale=1.0)
    graph.node("MatMul", [f"{name}.context", graph.weight(f"{name}.attention_out.weight", layer.attn_out_w)],
               [f"{name}.attention_out"])
    graph.node("SkipLayerNormalization",
               [f"{name}.attention_out", hidden, graph.weight(f"{name}.attention_norm.weight", layer.attn_norm_w),
                graph.weight(f"{name}.attention_norm.bias", layer.attn_norm_b),
                graph.weight(f"{name}.attention_out.bias", layer.attn_out_b)],
               [f"{name}.attended"], domain=CONTRIB, epsilon=eps)
    graph.node("MatMul", [f"{name}.attended", graph.weight(f"{name}.ffn_in.weight", layer.ffn_in_w)],
               [f"{name}.ffn_in"], shapes=inner_shape)
    graph.node("BiasGelu", [f"{name}.ffn_in", graph.weight(f"{name}.ffn_in.bias", layer.ffn_in_b)],
               [f"{name}.gelu"], domain=CONTRIB, shapes=inner_shape)
    graph.node("MatMul", [f"{name}.gelu", graph.weight(f"{name}.ffn_out.weight", layer.ffn_out_w)],
               [f"{name}.ffn_out"])
    graph.node("SkipLayerNormalization",
               [f"{name}.ffn_out", f"{name}.attended", graph.weight(f"{name}.ffn_norm.weight", layer.ffn_norm_w),
                graph.weight(f"{name}.ffn_norm.bias", layer.ffn_norm_b),
                graph.weight(f"{name}.ffn_out.bias", layer.ffn_out_b)],
               [f"{name}.out"], domain=CONTRIB, epsilon=eps)
    return f"{name}.out"


def quantized(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX Runtime's dynamic int8 quantization of `model`: its MatMuls and Attentions, weights per channel.

    Per-channel weights matter here: per-tensor scales cost ~0.04 of cosine against the reference
    (min 0.85 over the reference texts, 0.98 per channel). The embedding tables stay float32.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="zengram-minilm-") as folder:
        source, target = Path(folder) / "fp32.onnx", Path(folder) / "int8.onnx"
        onnx.save_model(model, source)
        with _without_preprocessing_advice():
            quantize_dynamic(source, target, op_types_to_quantize=["MatMul", "Attention"], per_channel=True,
                             weight_type=QuantType.QInt8)
        return onnx.load_model(target)


_FLOAT = 1  # onnx.TensorProto.FLOAT, spelt out so that this module imports without onnx
_INT32 = 6  # onnx.TensorProto.INT32


class _GraphBuilder:
    """Collects nodes, initialisers and the type of every intermediate tensor.

    The types let ONNX Runtime's quantizer see through the contrib operators, which ONNX's own shape
    inference does not know.
    """

    def __init__(self, hidden_size: int) -> None:
        self.hidden_size = hidden_size
        self.hidden: list[str | int] = ["batch", "sequence", hidden_size]
        self._nodes: list[onnx.NodeProto] = []
        self._initializers: list[onnx.TensorProto] = []
        self._value_info: list[onnx.ValueInfoProto] = []

    def inner(self, width: int) -> list[str | int]:
        return ["batch", "sequence", width]

    def weight(self, name: str, value: npt.NDArray[np.generic]) -> str:
        from onnx import numpy_helper

        self._initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op_type: str, inputs: list[str], outputs: list[str], *, domain: str = "",
             shapes: list[list[str | int]] | None = None, types: list[int] | None = None,
             **attributes: Any) -> None:
        from onnx import helper

        self._nodes.append(helper.make_node(op_type, inputs, outputs, name=outputs[0], domain=domain, **attributes))
        for position, output in enumerate(outputs):
            shape = shapes[position] if shapes else self.hidden
            elem_type = types[position] if types else _FLOAT
            self._value_info.append(helper.make_tensor_value_info(output, elem_type, shape))

    def mean_pooled_and_normalised(self, hidden: str) -> None:
        """sentence_embedding = normalise(sum(hidden * mask) / max(sum(mask), 1)), as sentence-transformers."""
        pooled_shape: list[list[str | int]] = [["batch", self.hidden_size]]
        sequence_axis = self.weight("sequence_axis", np.array([1], dtype=np.int64))
        feature_axis = self.weight("feature_axis", np.array([2], dtype=np.int64))
        self.node("Cast", [ATTENTION_MASK], ["mask"], to=_FLOAT, shapes=[["batch", "sequence"]])
        self.node("Unsqueeze", ["mask", feature_axis], ["mask_per_feature"], shapes=[["batch", "sequence", 1]])
        self.node("Mul", [hidden, "mask_per_feature"], ["masked"])
        self.node("ReduceSum", ["masked", sequence_axis], ["summed"], keepdims=0, shapes=pooled_shape)
        self.node("ReduceSum", ["mask", sequence_axis], ["tokens"], keepdims=1, shapes=[["batch", 1]])
        self.node("Max", ["tokens", self.weight("one", np.array(1.0, dtype=np.float32))], ["divisor"],
                  shapes=[["batch", 1]])
        self.node("Div", ["summed", "divisor"], ["pooled"], shapes=pooled_shape)
        self.node("ReduceL2", ["pooled", sequence_axis], ["norm"], keepdims=1, shapes=[["batch", 1]])
        self.node("Max", ["norm", self.weight("epsilon", np.array(1e-12, dtype=np.float32))], ["norm_floor"],
                  shapes=[["batch", 1]])
        self.node("Div", ["pooled", "norm_floor"], [OUTPUT], shapes=pooled_shape)

    def model(self) -> onnx.ModelProto:
        from onnx import helper

        inputs = [helper.make_tensor_value_info(name, _INT32, ["batch", "sequence"])
                  for name in (INPUT_IDS, ATTENTION_MASK)]
        outputs = {OUTPUT}
        graph = helper.make_graph(
            self._nodes, "all-MiniLM-L6-v2", inputs,
            [info for info in self._value_info if info.name in outputs], self._initializers,
            value_info=[info for info in self._value_info if info.name not in outputs],
        )
        return helper.make_model(graph, producer_name="zengram",
                                 opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)])


class _PreprocessingAdvice(logging.Filter):
    """The quantizer advises (on the root logger) a pre-processing pass that cannot read contrib operators, and
    logs one INFO line per activation it quantizes at run time (24 for MiniLM, issue 37): both dropped, its
    warnings and errors kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "pre-processing before quantization" in record.getMessage():
            return False
        return not (record.levelno < logging.WARNING and "quantization" in Path(record.pathname).parts)


@contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    advice = _PreprocessingAdvice()
    logging.getLogger().addFilter(advice)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(advice)
