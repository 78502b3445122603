"""The versioned index definition (`mappings/memories.v<N>.json`) and the names derived from it.

The JSON file is the reviewed source of truth; code only fills what is known at creation time: the
vector dimension, the k-NN engine and the embedding model recorded in `_meta`.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

# v2: the `entities` keyword field; since the chat layer also `scope` (added in place to v2 indexes without it)
MAPPING_VERSION = 2
SCOPE_FIELD = {"scope": {"type": "keyword"}}
Engine = Literal["lucene", "faiss"]


@dataclass(frozen=True)
class Binding:
    """The embedding model an index was built for, as recorded in the mapping's `_meta`."""

    model_id: str | None
    dimension: int


@cache
def _template() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(f"mappings/memories.v{MAPPING_VERSION}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def concrete_index_name(alias: str, dimension: int) -> str:
    """Deterministic, so two processes racing to create the index collide instead of making two."""
    return f"{alias}-v{MAPPING_VERSION}-{dimension}d"


def index_body(alias: str, binding: Binding, engine: Engine) -> dict[str, Any]:
    """The create-index request: settings, mappings with dimension/engine/_meta filled in, and the alias."""
    body = copy.deepcopy(_template())
    mappings = body["mappings"]
    mappings["_meta"] = meta(binding)
    vector = mappings["properties"]["vector"]
    vector["dimension"] = binding.dimension
    vector["method"]["engine"] = engine
    body["aliases"] = {alias: {}}
    return body


def meta(binding: Binding) -> dict[str, Any]:
    return {"mapping_version": MAPPING_VERSION, "model_id": binding.model_id, "dimension": binding.dimension}


def lacks_scope(mappings: dict[str, Any]) -> bool:
    """Whether an index (a GET _mapping answer for it) predates the `scope` field: a v2 index, which gets the field
    added in place (`put_mapping`; its documents, all Zengram memories, are in the empty scope without it)."""
    return "scope" not in mappings.get("mappings", {}).get("properties", {})


def binding_from_mapping(mappings: dict[str, Any]) -> Binding:
    """Reads the binding back from a GET _mapping answer for one index (`{"mappings": {...}}`)."""
    body = mappings.get("mappings", {})
    recorded = body.get("_meta") or {}
    dimension = recorded.get("dimension") or body.get("properties", {}).get("vector", {}).get("dimension")
    if not isinstance(dimension, int):
        raise ValueError("the index mapping has no vector dimension; it was not created by zengram")
    model_id = recorded.get("model_id")
    return Binding(model_id=model_id if isinstance(model_id, str) else None, dimension=dimension)
