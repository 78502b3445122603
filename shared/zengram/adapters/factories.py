"""The shared adapters, one small builder per provider, picked by a setting (the wiring table): the search index over
memories (`ZENGRAM_SEARCH_INDEX`), the embedder (`ZENGRAM_EMBEDDER`), the JSON language model. Each context's wiring
and the hosts' assembly build them here; every import of a backend's library happens inside its builder, so a
Lambda function pays only for the providers it uses. docs/architecture.md tells how to add one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from zengram.kernel.ports import Embedder, LanguageModel, SearchIndex
from zengram.kernel.settings import OpenSearchSettings, SharedAdapterSettings

if TYPE_CHECKING:
    from zengram.adapters.opensearch.client import OpenSearchOptions


def build_embedded_index(settings: SharedAdapterSettings) -> SearchIndex:
    from zengram.adapters.sqlite import EmbeddedSearchIndex

    def threshold(rows: int) -> int | None:
        return rows if rows >= 0 else None

    return EmbeddedSearchIndex(settings.index_path, ann_min_rows=threshold(settings.vector_ann_min_rows),
                               keyword_memory_min_rows=threshold(settings.keyword_memory_min_rows))


def opensearch_options(settings: OpenSearchSettings) -> OpenSearchOptions:
    """The cluster settings every OpenSearch index shares (the memories' and the documents'), read in one place."""
    from zengram.adapters.opensearch.client import ClientOptions, OpenSearchOptions, RetryPolicy

    if not settings.opensearch_url:
        raise ValueError("ZENGRAM_SEARCH_INDEX=opensearch needs ZENGRAM_OPENSEARCH_URL")
    password = settings.opensearch_password.get_secret_value() if settings.opensearch_password else None
    client = ClientOptions(
        settings.opensearch_url, auth=settings.opensearch_auth, username=settings.opensearch_username,
        password=password, aws_region=settings.aws_region, aws_service=settings.opensearch_aws_service,
        timeout=settings.opensearch_timeout,
    )
    retry = RetryPolicy(attempts=settings.opensearch_max_attempts, base_delay=settings.opensearch_retry_delay,
                        budget=settings.opensearch_retry_budget)
    return OpenSearchOptions(client, retry, settings.opensearch_refresh)


def build_opensearch_index(settings: SharedAdapterSettings) -> SearchIndex:
    from zengram.adapters.opensearch import OpenSearchIndex

    options = opensearch_options(settings)
    return OpenSearchIndex(options.client, alias=settings.opensearch_alias, refresh=options.refresh,
                           retry=options.retry)


def build_minilm_embedder(settings: SharedAdapterSettings) -> Embedder:
    """all-MiniLM-L6-v2 on the configured runtime, concurrent calls merged into shared forward passes."""
    from zengram.adapters.minilm import build_minilm_embedder as build_runtime
    from zengram.adapters.system.coalescing_embedder import CoalescingEmbedder

    minilm = build_runtime(settings.minilm_runtime, model_dir=settings.minilm_model_dir,
                           cache_dir=settings.minilm_graph_dir, parallel_runs=settings.minilm_parallel_passes,
                           lone_pass_threads=settings.minilm_lone_pass_threads)
    return CoalescingEmbedder(minilm, max_parallel_passes=settings.minilm_parallel_passes)


def build_openai_embedder(settings: SharedAdapterSettings) -> Embedder:
    from zengram.adapters.openai import OpenAIEmbedder

    api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    if api_key is None and settings.openai_api_key_secret_id:
        from zengram.adapters.aws_parameters import fetch_api_key

        api_key = fetch_api_key(secret_id=settings.openai_api_key_secret_id)
    if api_key is None:
        raise ValueError("ZENGRAM_EMBEDDER=openai needs OPENAI_API_KEY or ZENGRAM_OPENAI_API_KEY_SECRET_ID")
    return OpenAIEmbedder(base_url=settings.openai_base_url, api_key=api_key, model=settings.embedding_model,
                          dimensions=settings.embedding_dimensions)


def build_bedrock_embedder(settings: SharedAdapterSettings) -> Embedder:
    from zengram.adapters.bedrock import BedrockEmbedder

    return BedrockEmbedder(model_id=settings.bedrock_model_id, dimensions=settings.embedding_dimensions,
                           region=settings.aws_region)


SEARCH_INDEXES: Mapping[str, Callable[[SharedAdapterSettings], SearchIndex]] = {  # ZENGRAM_SEARCH_INDEX
    "embedded": build_embedded_index,
    "opensearch": build_opensearch_index,
}
EMBEDDERS: Mapping[str, Callable[[SharedAdapterSettings], Embedder]] = {  # ZENGRAM_EMBEDDER
    "minilm": build_minilm_embedder,
    "openai": build_openai_embedder,
    "bedrock": build_bedrock_embedder,
}


def build_search_index(settings: SharedAdapterSettings) -> SearchIndex:
    return SEARCH_INDEXES[settings.search_index](settings)


def build_embedder(settings: SharedAdapterSettings) -> Embedder:
    return EMBEDDERS[settings.embedder](settings)


def no_language_model() -> LanguageModel:
    from zengram.adapters.system.language_model import NoLanguageModel

    return NoLanguageModel()


def build_language_model(settings: SharedAdapterSettings) -> LanguageModel:
    """An OpenAI-compatible chat model when a base URL or a key is configured; else one that answers 503."""
    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if api_key is None and settings.llm_api_key_secret_id:
        from zengram.adapters.aws_parameters import fetch_api_key

        api_key = fetch_api_key(secret_id=settings.llm_api_key_secret_id)
    if api_key is None and settings.llm_base_url is None:
        return no_language_model()
    from zengram.adapters.openai.chat import OpenAIChatModel

    return OpenAIChatModel(base_url=settings.llm_base_url, api_key=api_key, model=settings.llm_model,
                           timeout=settings.llm_timeout, max_retries=settings.llm_max_retries)
