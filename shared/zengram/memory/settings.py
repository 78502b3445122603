"""The memory context's settings: the index's upkeep, search and ranking, research and consolidation, beside the shared
adapters its wiring picks from (`zengram.kernel.settings`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Literal, Self

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator

from zengram.kernel.settings import (
    DynamoDBSettings,
    HostSettings,
    SharedAdapterSettings,
    blank_is_unset,
)
from zengram.memory.domain.circuit import CircuitBreaker
from zengram.memory.domain.context import DEFAULT_CONTEXT, ContextPolicy
from zengram.memory.domain.graph import DEFAULT_GRAPH, GraphPolicy
from zengram.memory.domain.query_plan import DEFAULT_QUERY_EXTRAS, QueryExtras
from zengram.memory.domain.rerank import DEFAULT_RERANK, RerankPolicy
from zengram.memory.domain.retrieval import DEFAULT_PROFILE, PROFILES, ProfileName, RetrievalProfile
from zengram.memory.domain.scoring import DEFAULT_SCORING, Fusion, ScoringConfig
from zengram.memory.domain.temporal import TemporalMode


class MemoryIndexSettings(HostSettings):
    """Keeping the derived search index in step with the records."""

    index_circuit_failures: int = Field(
        default=1, ge=1,
        description="Consecutive failed search-index operations (each after its own retries) that open the circuit: "
                    "while open, index calls fail at once (writes are stored pending, searches answer 503).",
    )
    index_circuit_open_seconds: float = Field(
        default=30.0, gt=0,
        description="How long an open circuit refuses index calls before letting one probe through (per process: "
                    "per Lambda execution environment).",
    )
    index_repair_batch: int = Field(
        default=500, ge=1, le=5000, description="Pending records the repair sweep reads (and indexes) at a time.",
    )
    index_repair_attempts: int = Field(
        default=5, ge=1,
        description="Failed repair attempts (at most one per sweep) after which a record is parked: the sweep stops "
                    "retrying it and /stats index_health names it with its last error, until `zengram repair "
                    "--retry-parked` (or a reindex, or a new change to the record).",
    )
    index_repair_interval_seconds: float = Field(
        default=30.0, gt=0,
        description="Embedded host: how often the in-process repair sweep indexes the memories and chat writes an "
                    "index outage left pending (the AWS host runs it on its EventBridge schedule).",
    )
    embed_beside_writes: bool = Field(
        default=True,
        description="Run a new memory's embedding on its own thread while its entities, record and registry links "
                    "are written (ONNX releases the GIL): faster with a core to spare; 'false' suits a host whose "
                    "cores are always busy (the thread hand-offs then cost more than they save).",
    )
    index_behind_writes: int = Field(
        default=32, ge=0, le=10_000,
        description="With the embedded index: a new memory's embedding and index write are applied on one thread "
                    "just after its record is committed and the write has answered, at most this many waiting "
                    "(then a writer waits for room); every search, count or index change first waits for those "
                    "queued before it, so a search after a write's response finds it. One client's writes then "
                    "overlap their embeddings with the next request (ADR 0040). 0: the index is written before the "
                    "write answers. Ignored with OpenSearch (other processes search it, and cannot wait for this "
                    "process's queue) and in the Lambda functions (frozen once they answer).",
    )
    import_embed_chunk: int = Field(
        default=500, ge=1, le=10_000,
        description="An import's batch is embedded and indexed in chunks of this many records: each chunk's "
                    "embedding starts as soon as it is prepared, and a chunk is indexed while later ones are still "
                    "embedded (every record of the batch is stored first). 500 (a whole batch): one embedding call, "
                    "indexed after it; smaller chunks overlap more but cost more CPU.",
    )

    def index_circuit(self) -> CircuitBreaker:
        return CircuitBreaker(failures_to_open=self.index_circuit_failures,
                              open_for=timedelta(seconds=self.index_circuit_open_seconds))


class MemorySearchSettings(HostSettings):
    """Search and ranking, and upstream Zengram's retrieval extras (docs/retrieval-extras.md)."""

    max_observers: int = Field(default=20, ge=1)
    rrf_k: int = Field(default=DEFAULT_SCORING.rrf_k, ge=1)
    decay_factor: float = Field(default=DEFAULT_SCORING.decay_factor, gt=0, le=1)
    similarity_floor: float = Field(default=DEFAULT_SCORING.similarity_floor, ge=0, le=1)
    vector_weight: float = Field(default=DEFAULT_SCORING.vector_weight, ge=0, le=1)
    access_boost_slope: float = Field(
        default=DEFAULT_SCORING.access_boost_slope, ge=0, le=1,
        description="access_boost = min(1 + slope·log2(access_count + 1), cap). semantics.md's 0.3 / 2.0 let a "
                    "popular hit outrank a far more relevant one; the defaults bound reinforcement (ADR 0042).",
    )
    access_boost_cap: float = Field(
        default=DEFAULT_SCORING.access_boost_cap, ge=1, le=4,
        description="The most reinforcement can multiply a hit's score by (see access_boost_slope).",
    )
    search_paths: Literal["hybrid", "vector", "keyword"] = Field(
        default="hybrid",
        description="Retrieval paths a search runs: both fused (the product), or one alone (for baselines and "
                    "diagnosis).",
    )
    reinforce_on_search: bool = Field(
        default=True,
        description="Count every returned search hit as an access (raises access_boost, resets fact/status "
                    "decay). Off makes searches read-only, e.g. for benchmarks that must not rank on their "
                    "own earlier queries.",
    )
    retrieval_profile: ProfileName = Field(
        default=DEFAULT_PROFILE.name,
        description="The retrieval heuristics, switched together (docs/retrieval-profiles.md): 'conversation' "
                    "(speaker boost, 'when' boost, neighbouring turns indexed as keyword context; tuned on "
                    "conversation turns, bench/recall/RESULTS.md) or 'plain' (all of them off). The four settings "
                    "below override one value of the profile each.",
    )
    index_context_turns: int | None = Field(
        default=None, ge=0, le=4,
        description="Index each event with this many events stored just before it by the same client and agent "
                    "(a conversation's previous turns), so a reply is found by what it replies to. 0: off. "
                    "Default: the retrieval profile's (conversation 2, plain 0).",
    )
    index_context_next_turns: int | None = Field(
        default=None, ge=0, le=2,
        description="Also index each event with this many events stored just after it (a conversation's next "
                    "turns: an answer is often echoed or followed up; LoCoMo dev5 recall@10 +1.3 pt). Storing "
                    "an event replaces the keyword text of the ones before it (their vectors are kept: no "
                    "embedding, unless index_context_embed). 0: off. Default: the retrieval profile's "
                    "(conversation 1, plain 0).",
    )
    index_context_window_minutes: float = Field(
        default=DEFAULT_CONTEXT.window / timedelta(minutes=1), gt=0,
        description="Only events within this many minutes of each other (by valid_from, else stored time, and "
                    "by stored time) are context for one another.",
    )
    index_context_embed: bool = Field(
        default=DEFAULT_CONTEXT.embed,
        description="The vector path embeds the context too. Off (default): only the keyword path indexes it, "
                    "which measured better (a reply's vector stays its own) and costs no extra embedding.",
    )
    fusion: Fusion = Field(
        default=DEFAULT_SCORING.fusion,
        description="How the two paths' hits combine before effective_score's multipliers. 'linear': "
                    "linear_vector_weight x cosine/best cosine + the rest x BM25/best BM25 of this search "
                    "(LoCoMo dev5 recall@10 0.72 vs 0.58, bench/recall/RESULTS.md); 'blend': vector_weight x "
                    "similarity + the rest x RRF (semantics.md, the previous default).",
    )
    linear_vector_weight: float = Field(
        default=DEFAULT_SCORING.linear_vector_weight, ge=0, le=1,
        description="The vector path's share of the score under fusion='linear'.",
    )
    near_duplicate_cosine: float = Field(
        default=DEFAULT_SCORING.near_duplicate_cosine, ge=0, le=1,
        description="Under fusion='linear', a memory at least this similar to the query (cosine) scores at least its "
                    "cosine, so one that says what the query says is not buried by keyword matches. 1: identical only.",
    )
    search_path_fetch: int = Field(
        default=50, ge=1, le=200,
        description="Most hits each retrieval path hands to fusion (at least the request's limit, at most twice it).",
    )
    speaker_boost: float | None = Field(
        default=None, ge=1, le=3,
        description="Multiplier for a 'Speaker: text' memory whose speaker the query names by name "
                    "(LoCoMo dev5 recall@10 +1.7 pt, bench/recall/RESULTS.md). 1: off. Default: the retrieval "
                    "profile's (conversation 1.3, plain 1).",
    )
    time_boost: float | None = Field(
        default=None, ge=1, le=3,
        description="Multiplier for a memory that says when ('yesterday', 'last Friday', 'May 2023') if the "
                    "query asks when ('When did...', 'How long ago...'). 1: off. Default: the retrieval profile's "
                    "(conversation 1.2, plain 1).",
    )
    writer_entities: bool = Field(
        default=True,
        description="Link every memory to its own client (unless global) and agent as entities (types client and "
                    "agent), as upstream Zengram does; off: only the entities its text names.",
    )
    # Upstream Zengram's retrieval extras (docs/retrieval-extras.md; LoCoMo measurements: bench/recall/RESULTS.md).
    temporal_resolver: TemporalMode = Field(
        default=DEFAULT_QUERY_EXTRAS.temporal_windows,
        description="Which time words in a search query narrow it to their date window, resolved against "
                    "reference_date (else at_time, else now): 'all' (upstream's resolver: 'yesterday', 'last "
                    "week', 'two days ago', 'recently', 'in March'…), 'calendar' (only month and year names: 'in "
                    "May 2022', 'in March', 'in 2022') or 'off'. Explicit date_from/date_to always apply.",
    )
    temporal_boost: bool = Field(
        default=DEFAULT_QUERY_EXTRAS.temporal_boost,
        description="For a query about time that passes reference_date (or at_time): memories that happened near "
                    "that moment score up to x2 (1 + e^(-days/temporal_half_life_days)).",
    )
    temporal_half_life_days: float = Field(
        default=DEFAULT_QUERY_EXTRAS.half_life_days, gt=0, description="The temporal boost's scale in days.",
    )
    query_expansion: bool = Field(
        default=DEFAULT_QUERY_EXTRAS.query_expansion,
        description="A vague, preference-style query ('recommend a show') gets its topic's broader terms on the "
                    "vector path (upstream's query expander).",
    )
    graph_retrieval: bool = Field(
        default=DEFAULT_GRAPH.enabled,
        validation_alias=AliasChoices("ZENGRAM_GRAPH_RETRIEVAL", "GRAPH_RETRIEVAL_ENABLED"),
        description="A third search path: the entities the query names, one hop over their co-occurrence edges, "
                    "and the memories linked to them, fused at graph_weight.",
    )
    graph_weight: float = Field(
        default=DEFAULT_SCORING.graph_weight, ge=0, le=1,
        validation_alias=AliasChoices("ZENGRAM_GRAPH_WEIGHT", "RRF_GRAPH_WEIGHT"),
        description="The graph path's weight: x its max-normalised score under fusion='linear' (beside vector and "
                    "keyword shares summing to 1; LoCoMo best 0.1, 0.5 costs 4.7 pt r@10), x its RRF term under "
                    "fusion='blend' (the others weigh 1; upstream's RRF weight is 0.5).",
    )
    graph_hop_decay: float = Field(
        default=DEFAULT_GRAPH.hop_decay, ge=0, le=1,
        validation_alias=AliasChoices("ZENGRAM_GRAPH_HOP_DECAY", "GRAPH_HOP_DECAY"),
        description="A one-hop neighbour's score at the strongest edge (entities the query names score 1).",
    )
    graph_neighbor_limit: int = Field(
        default=DEFAULT_GRAPH.neighbour_limit, ge=0, le=100,
        validation_alias=AliasChoices("ZENGRAM_GRAPH_NEIGHBOR_LIMIT", "GRAPH_NEIGHBOR_LIMIT"),
        description="The strongest co-occurrence edges the graph path follows per query.",
    )
    graph_memories_per_entity: int = Field(
        default=DEFAULT_GRAPH.memories_per_entity, ge=1, le=1000,
        description="Most linked memories (newest first) the graph path reads per entity.",
    )
    rerank_enabled: bool = Field(
        default=DEFAULT_RERANK.enabled, validation_alias=AliasChoices("ZENGRAM_RERANK_ENABLED", "RERANK_ENABLED"),
        description="Re-score the fused top rerank_candidates hits through rerank_url; on failure or timeout the "
                    "fused order stays.",
    )
    rerank_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ZENGRAM_RERANK_URL", "RERANK_URL"),
        description="The re-ranker's full endpoint, e.g. http://localhost:8090/rerank.",
    )
    rerank_api: Literal["cohere", "tei"] = Field(
        default="cohere", validation_alias=AliasChoices("ZENGRAM_RERANK_API", "RERANK_API"),
        description="'cohere': {query, documents} -> {results: [{index, relevance_score}]} (Cohere, Jina, "
                    "Infinity, vLLM); 'tei': {query, texts} -> [{index, score}] (text-embeddings-inference).",
    )
    rerank_model: str | None = Field(
        default=None, validation_alias=AliasChoices("ZENGRAM_RERANK_MODEL", "RERANK_MODEL"),
        description="Model name sent in the 'cohere' shape (many servers ignore it).",
    )
    rerank_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ZENGRAM_RERANK_API_KEY", "RERANK_API_KEY"),
        description="Sent as a bearer token to the re-ranker.",
    )
    rerank_timeout: float = Field(
        default=DEFAULT_RERANK.timeout_seconds, gt=0, description="Seconds one search waits for the re-ranker.",
    )
    rerank_candidates: int = Field(
        default=DEFAULT_RERANK.candidates, ge=2, le=200,
        validation_alias=AliasChoices("ZENGRAM_RERANK_CANDIDATES", "RERANK_CANDIDATES"),
        description="How many of the fused top hits are re-scored (at least the request's limit).",
    )
    rerank_max_batch: int = Field(
        default=DEFAULT_RERANK.max_batch, ge=1, le=1000,
        validation_alias=AliasChoices("ZENGRAM_RERANK_MAX_BATCH", "RERANK_MAX_BATCH"),
        description="Most documents per re-ranker request (larger pools are sent in chunks).",
    )
    rerank_circuit_failures: int = Field(
        default=DEFAULT_RERANK.circuit_failures, ge=1,
        description="Consecutive re-ranker failures after which searches stop asking it for "
                    "rerank_circuit_open_seconds (then one search probes it again).",
    )
    rerank_circuit_open_seconds: float = Field(default=DEFAULT_RERANK.circuit_open / timedelta(seconds=1), gt=0)
    client_cache_seconds: float = Field(
        default=30.0, ge=0,
        description="How long a process reuses the client fingerprint list for client_id auto-resolution "
                    "(its own writes refresh it at once; other processes' writes show after at most this).",
    )

    @field_validator("rerank_api_key", "rerank_url", "rerank_model", mode="before")
    @classmethod
    def _blank_memory_search_is_unset(cls, value: object) -> object:
        return blank_is_unset(value)

    def retrieval(self) -> RetrievalProfile:
        """The retrieval profile in effect: the named one, with the values set one by one in place of its own."""
        return PROFILES[self.retrieval_profile].overridden(
            speaker_boost=self.speaker_boost, time_boost=self.time_boost, context_turns=self.index_context_turns,
            context_next_turns=self.index_context_next_turns)
    def context_policy(self) -> ContextPolicy:
        profile = self.retrieval()
        return ContextPolicy(turns=profile.context_turns, next_turns=profile.context_next_turns,
                             window=timedelta(minutes=self.index_context_window_minutes),
                             embed=self.index_context_embed)
    @model_validator(mode="after")
    def _rerank_needs_a_url(self) -> Self:
        if self.rerank_enabled and self.rerank_url is None:
            raise ValueError("rerank_url: required when rerank_enabled is true (RERANK_URL)")
        if self.rerank_url is not None and not self.rerank_url.startswith(("http://", "https://")):
            raise ValueError("rerank_url: must be an http:// or https:// URL")
        return self
    def query_extras(self) -> QueryExtras:
        return QueryExtras(temporal_windows=self.temporal_resolver, temporal_boost=self.temporal_boost,
                           half_life_days=self.temporal_half_life_days, query_expansion=self.query_expansion)
    def graph_policy(self) -> GraphPolicy:
        return GraphPolicy(enabled=self.graph_retrieval, hop_decay=self.graph_hop_decay,
                           neighbour_limit=self.graph_neighbor_limit,
                           memories_per_entity=self.graph_memories_per_entity)
    def rerank_policy(self) -> RerankPolicy:
        return RerankPolicy(enabled=self.rerank_enabled, candidates=self.rerank_candidates,
                            timeout_seconds=self.rerank_timeout, max_batch=self.rerank_max_batch,
                            circuit_failures=self.rerank_circuit_failures,
                            circuit_open=timedelta(seconds=self.rerank_circuit_open_seconds))
    def scoring(self) -> ScoringConfig:
        profile = self.retrieval()
        return replace(DEFAULT_SCORING, rrf_k=self.rrf_k, decay_factor=self.decay_factor,
                       similarity_floor=self.similarity_floor, vector_weight=self.vector_weight, fusion=self.fusion,
                       access_boost_slope=self.access_boost_slope, access_boost_cap=self.access_boost_cap,
                       linear_vector_weight=self.linear_vector_weight,
                       near_duplicate_cosine=self.near_duplicate_cosine, speaker_boost=profile.speaker_boost,
                       time_boost=profile.time_boost, graph_weight=self.graph_weight)


class MemoryJobSettings(HostSettings):
    """Research runs and consolidation."""

    research_enabled: bool = Field(
        default=False, validation_alias=AliasChoices("RESEARCH_ENABLED", "ZENGRAM_RESEARCH_ENABLED"),
        description="POST /research (several LLM calls per request) answers 503 unless this is true.",
    )
    research_state_machine_arn: str | None = Field(
        default=None, description="Run the research loop as this Step Functions state machine; unset: in process.",
    )
    research_execution: Literal["sync", "poll"] = Field(
        default="sync",
        description="'sync': StartSyncExecution (Express machines). 'poll': StartExecution, then DescribeExecution "
                    "until done (Standard machines, and emulators without StartSyncExecution such as moto).",
    )
    research_timeout: float = Field(default=60.0, gt=0, description="Seconds the 'poll' mode waits for a run.")
    research_retrieve_limit: int = Field(default=15, ge=1, le=100, description="Memories each research round adds.")
    research_synthesis_memories: int = Field(
        default=40, ge=1, le=200, description="Most memories the research synthesis sees."
    )
    consolidation_enabled: bool = Field(
        default=False, description="Run consolidation on its schedule (embedded: an in-process timer; AWS: the "
                                   "template's ConsolidationScheduleEnabled sets this and the schedule's state).",
    )
    consolidation_interval: str = Field(
        default="0 */6 * * *", description="The schedule, shown by GET /consolidate/status. The embedded timer "
                                           "runs every period of it from start-up (rate(N hours) or a step cron).",
    )
    consolidation_batch_size: int = Field(default=50, ge=1, le=200, description="Memories per LLM call.")
    consolidation_max_batches: int = Field(
        default=20, ge=1, description="Most batches one run sends; the rest wait for the next run.",
    )
    consolidation_similarity: float = Field(
        default=0.92, gt=0, le=1, description="A merged fact this close (cosine) to an active memory is skipped.",
    )
    consolidation_event_ttl_days: float = Field(
        default=30.0, gt=0, description="Low/medium events older than this, never accessed, expire at consolidation.",
    )
    consolidation_lock_seconds: float = Field(
        default=900.0, gt=0, description="Lock lifetime, renewed after every batch: a crashed run blocks this long.",
    )
    consolidation_launcher: Literal["thread", "lambda"] = Field(
        default="thread", description="Where an async POST /consolidate runs: a thread of this process, or an "
                                      "asynchronous invocation of consolidation_function (AWS).",
    )
    consolidation_function: str | None = Field(
        default=None, description="Function (name, ARN or name:alias) the lambda launcher invokes with the job id.",
    )


class MemorySettings(MemoryIndexSettings, MemorySearchSettings, MemoryJobSettings, DynamoDBSettings,
                     SharedAdapterSettings):
    """Everything the memory context's wiring reads."""
