"""A document query (POST /query) and its answer, as agent-brain-api.md defines them."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zengram.documents.domain.files import LANGUAGE_NAMES
from zengram.documents.domain.models import SourceType

MAX_QUERY_CHARS = 1000


class QueryMode(StrEnum):
    VECTOR = "vector"
    BM25 = "bm25"
    HYBRID = "hybrid"
    GRAPH = "graph"
    MULTI = "multi"

    @property
    def uses_graph(self) -> bool:
        return self in (QueryMode.GRAPH, QueryMode.MULTI)


class DocumentQuery(BaseModel):
    """Fields the Agent Brain CLI sends beyond these (`explain`, `entity_types`…) are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Search query text")
    top_k: int = Field(default=5, ge=1, le=100, description="Number of results (1-100)")
    similarity_threshold: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Least relevance score (calibrated, 0-1) of a result, every mode")
    mode: QueryMode = Field(default=QueryMode.HYBRID, description="vector, bm25, hybrid, graph or multi")
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="Hybrid and multi: 1.0 no keyword lift, 0.0 the most")
    traversal_depth: int = Field(default=2, ge=1, le=5, description="Graph hops for graph and multi modes")
    include_relationships: bool = Field(default=False, description="Add each result's code relationships")
    source_types: list[SourceType] | None = Field(default=None, description="Only doc, code and/or test chunks")
    languages: list[str] | None = Field(default=None, description="Only chunks in these languages")
    file_paths: list[str] | None = Field(default=None, description="Only sources matching these globs")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, value: list[str] | None) -> list[str] | None:
        unknown = [language for language in value or () if language not in LANGUAGE_NAMES | {"markdown", "text",
                                                                                              "pdf"}]
        if unknown:
            raise ValueError(f"unsupported languages {unknown}")
        return value


class Relationship(BaseModel):
    type: str
    target: str
    source_entity: str


class QueryResult(BaseModel):
    text: str
    source: str
    score: float
    vector_score: float | None = None
    bm25_score: float | None = None
    graph_score: float | None = None
    chunk_id: str
    source_type: str = "doc"
    language: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    relationships: list[Relationship] | None = None


class QueryResponse(BaseModel):
    results: list[QueryResult]
    query_time_ms: float
    total_results: int
