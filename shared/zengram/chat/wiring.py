"""Wiring the chat layer (docs/chat.md): its stores per backend family, then its services over the host's shared
parts (the same index, embedder, scrubber, clock and language model as Zengram's memories).

The host's container builds it on first use (`zengram.assembly.containers.Container.chat`), so functions and
commands that never chat never pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from zengram.chat.domain.events import StreamConfig
from zengram.chat.domain.learning import LearningConfig
from zengram.chat.domain.memories import RecallPolicy, VersioningPolicy
from zengram.chat.domain.outbound import OutboundPolicy
from zengram.chat.domain.policies import PolicyConfig
from zengram.chat.domain.providers import Provider, ProviderEndpoints
from zengram.chat.domain.recall_calibration import calibration_for
from zengram.chat.domain.recalls import RecallConfig
from zengram.chat.domain.webhooks import DeliveryPolicy
from zengram.chat.ports import (
    AgentStateStore,
    AuditLog,
    ChatHistoryStore,
    ChatModel,
    ClaimStore,
    IntegrationStore,
    LearningDispatch,
    LearningJobStore,
    MemoryEventLog,
    MemoryPolicyStore,
    PromptStore,
    RecallEventStore,
    RecordBase,
    SubjectMemoryStore,
)
from zengram.chat.services.claims import ClaimService
from zengram.chat.services.completions import CompletionService, ContextSources
from zengram.chat.services.events import MemoryEvents, RequestAudit
from zengram.chat.services.history import ChatHistoryService
from zengram.chat.services.indexing import ChatIndexSync
from zengram.chat.services.integrations import IntegrationService
from zengram.chat.services.knowledge import SubjectKnowledge
from zengram.chat.services.learning import LearningService
from zengram.chat.services.memories import SubjectMemoryService
from zengram.chat.services.policies import MemoryPolicyService
from zengram.chat.services.prompts import PromptService
from zengram.chat.services.recalls import RecallService
from zengram.chat.services.records import RecordService
from zengram.chat.services.state import AgentStateService
from zengram.chat.services.webhooks import WebhookDeliveries
from zengram.chat.settings import ChatSettings
from zengram.kernel.parts import SharedParts


@dataclass(frozen=True)
class ChatStores:
    memories: SubjectMemoryStore
    history: ChatHistoryStore
    state: AgentStateStore
    records: RecordBase
    prompts: PromptStore
    recalls: RecallEventStore
    learning: LearningJobStore
    claims: ClaimStore
    policies: MemoryPolicyStore
    events: MemoryEventLog
    audit: AuditLog
    integrations: IntegrationStore


@dataclass
class ChatLayer:
    """The chat layer's services; `close` releases what its stores hold."""

    memories: SubjectMemoryService
    history: ChatHistoryService
    state: AgentStateService
    records: RecordService
    prompts: PromptService
    recalls: RecallService
    learning: LearningService
    completions: CompletionService
    claims: ClaimService
    memory_index: ChatIndexSync
    record_index: ChatIndexSync
    dispatch: LearningDispatch
    policies: MemoryPolicyService
    policy_defaults: PolicyConfig  # what applies where no memory policy sets a key (the settings)
    events: MemoryEvents
    audit: RequestAudit
    integrations: IntegrationService
    webhooks: WebhookDeliveries
    closers: list[Callable[[], None]] = field(default_factory=list)
    starters: list[Callable[[], None]] = field(default_factory=list)

    def start_learning(self) -> None:
        """Starts this process's learning worker, if it has one (embedded); its first sweep runs the jobs stored
        before a restart."""
        for start in self.starters:
            start()

    def repair_index(self, limit: int = 500) -> int:
        """Indexes subject memories and records whose last change did not reach the index (the repair sweep)."""
        return self.memory_index.repair(limit) + self.record_index.repair(limit)

    def reindex(self) -> int:
        """Re-adds every subject memory and record (after a rebuild cleared the shared index)."""
        return self.memory_index.reindex() + self.record_index.reindex()

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


# -- stores per backend family ---------------------------------------------------------------------------------

def _embedded_stores(settings: ChatSettings, _: Any | None) -> ChatStores:
    """Tables in the records file beside Zengram's memories."""
    from zengram.adapters.sqlite.chat_claims import SQLiteClaimStore
    from zengram.adapters.sqlite.chat_events import SQLiteAuditLog, SQLiteMemoryEventLog
    from zengram.adapters.sqlite.chat_history import SQLiteChatHistoryStore
    from zengram.adapters.sqlite.chat_integrations import SQLiteIntegrationStore
    from zengram.adapters.sqlite.chat_learning import SQLiteLearningJobStore
    from zengram.adapters.sqlite.chat_memories import SQLiteSubjectMemoryStore
    from zengram.adapters.sqlite.chat_policies import SQLiteMemoryPolicyStore
    from zengram.adapters.sqlite.chat_prompts import SQLitePromptStore
    from zengram.adapters.sqlite.chat_recalls import SQLiteRecallEventStore
    from zengram.adapters.sqlite.chat_records import SQLiteRecordBase
    from zengram.adapters.sqlite.chat_state import SQLiteAgentStateStore

    path = settings.records_path
    return ChatStores(SQLiteSubjectMemoryStore(path), SQLiteChatHistoryStore(path), SQLiteAgentStateStore(path),
                      SQLiteRecordBase(path), SQLitePromptStore(path), SQLiteRecallEventStore(path),
                      SQLiteLearningJobStore(path), SQLiteClaimStore(path), SQLiteMemoryPolicyStore(path),
                      SQLiteMemoryEventLog(path), SQLiteAuditLog(path),
                      SQLiteIntegrationStore(path))


def _aws_stores(settings: ChatSettings, table_client: Any | None) -> ChatStores:
    """Items in the records table, through the record store's own DynamoDB client when the host shares it."""
    from zengram.adapters.dynamodb.chat_claims import DynamoDBClaimStore
    from zengram.adapters.dynamodb.chat_events import DynamoDBAuditLog, DynamoDBMemoryEventLog
    from zengram.adapters.dynamodb.chat_history import DynamoDBChatHistoryStore
    from zengram.adapters.dynamodb.chat_integrations import DynamoDBIntegrationStore
    from zengram.adapters.dynamodb.chat_learning import DynamoDBLearningJobStore
    from zengram.adapters.dynamodb.chat_memories import DynamoDBSubjectMemoryStore
    from zengram.adapters.dynamodb.chat_policies import DynamoDBMemoryPolicyStore
    from zengram.adapters.dynamodb.chat_prompts import DynamoDBPromptStore
    from zengram.adapters.dynamodb.chat_recalls import DynamoDBRecallEventStore
    from zengram.adapters.dynamodb.chat_records import DynamoDBRecordBase
    from zengram.adapters.dynamodb.chat_state import DynamoDBAgentStateStore
    from zengram.adapters.dynamodb.table import make_client

    client = table_client if table_client is not None else make_client(region=settings.aws_region)
    table = settings.dynamodb_table
    return ChatStores(DynamoDBSubjectMemoryStore(table, client=client), DynamoDBChatHistoryStore(table, client=client),
                      DynamoDBAgentStateStore(table, client=client), DynamoDBRecordBase(table, client=client),
                      DynamoDBPromptStore(table, client=client), DynamoDBRecallEventStore(table, client=client),
                      DynamoDBLearningJobStore(table, client=client), DynamoDBClaimStore(table, client=client),
                      DynamoDBMemoryPolicyStore(table, client=client),
                      DynamoDBMemoryEventLog(table, client=client), DynamoDBAuditLog(table, client=client),
                      DynamoDBIntegrationStore(table, client=client))


STORES_BY_FAMILY: dict[str, Callable[[ChatSettings, Any | None], ChatStores]] = {
    "sqlite": _embedded_stores,
    "dynamodb": _aws_stores,
}


@dataclass(frozen=True)
class _Runner:
    dispatch: LearningDispatch
    start: Callable[[], None] | None = None
    stop: Callable[[], None] | None = None


def _learning_runner(settings: ChatSettings, learning: LearningService,
                     sync_due: Callable[[], int] = lambda: 0) -> _Runner:
    """The learning runner: this process's worker thread, or (AWS) asynchronous invocations of a function."""
    if settings.chat_learning_launcher == "lambda":
        from zengram.adapters.aws_lambda.chat_learning import LambdaLearningDispatch

        if not settings.chat_learning_function:
            raise ValueError("ZENGRAM_CHAT_LEARNING_LAUNCHER=lambda needs ZENGRAM_CHAT_LEARNING_FUNCTION")
        return _Runner(LambdaLearningDispatch(settings.chat_learning_function, region=settings.aws_region))
    from zengram.adapters.system.learning_worker import LearningWorker

    def sweep() -> int:  # the worker's periodic sweep also runs the integrations' scheduled syncs
        return learning.run_due() + sync_due()

    worker = LearningWorker(learning.run, sweep, queue_size=settings.chat_learning_queue_size,
                            sweep_seconds=settings.chat_learning_sweep_seconds)
    return _Runner(worker, worker.start, worker.stop)


def provider_endpoints(settings: ChatSettings) -> ProviderEndpoints:
    default_key = settings.chat_default_api_key.get_secret_value() if settings.chat_default_api_key else None
    return ProviderEndpoints(
        urls={Provider.OPENAI: settings.chat_openai_base_url, Provider.ANTHROPIC: settings.chat_anthropic_base_url,
              Provider.GOOGLE: settings.chat_google_base_url},
        default_url=settings.chat_default_base_url, default_key=default_key, default_model=settings.chat_default_model)


@dataclass(frozen=True)
class _Integrations:
    service: IntegrationService
    webhooks: WebhookDeliveries
    close: Callable[[], None]


def _integrations(settings: ChatSettings, stores: ChatStores, records: RecordService, parts: SharedParts) -> \
        _Integrations:
    """Integrations and webhook deliveries over the outbound HTTP adapter, which calls only what the operator allowed
    (ZENGRAM_OUTBOUND_ALLOW, ZENGRAM_OUTBOUND_ALLOW_NETWORKS)."""
    from zengram.adapters.http.outbound import HttpxOutbound

    policy = OutboundPolicy.of(settings.outbound_allow, settings.outbound_allow_networks)
    outbound = HttpxOutbound(policy)
    deliveries = DeliveryPolicy(attempts=settings.integration_delivery_attempts,
                                backoff_seconds=settings.integration_delivery_backoff_seconds)
    return _Integrations(IntegrationService(stores.integrations, outbound, policy, records, parts.clock),
                         WebhookDeliveries(stores.integrations, outbound, parts.clock, deliveries), outbound.close)


def build_chat_layer(settings: ChatSettings, parts: SharedParts, *, table_client: Any | None = None,
                     model: ChatModel | None = None) -> ChatLayer:
    """The chat layer over the host's shared index, embedder, scrubber, clock and LLM, its stores beside the
    memories' records (`table_client`: the records table's DynamoDB client, shared); `model` lets tests bring their
    own provider adapter."""
    stores = STORES_BY_FAMILY[settings.record_store](settings, table_client)
    clock, scrubber, index = parts.clock, parts.scrubber, parts.index
    memory_index = ChatIndexSync(stores.memories, index, parts.embedder, parts.ensure_index)
    record_index = ChatIndexSync(stores.records, index, parts.embedder, parts.ensure_index)
    memories = SubjectMemoryService(
        stores.memories, memory_index, index, clock, scrubber=scrubber,
        versioning=VersioningPolicy(skip_at=settings.chat_skip_similarity,
                                    supersede_from=settings.chat_supersede_similarity),
        recall_policy=RecallPolicy(decay_per_day=settings.chat_decay_per_day,
                                   temporal_decay_per_day=settings.chat_temporal_decay_per_day,
                                   calibration=calibration_for(parts.embedder.model_id)))
    events = MemoryEvents(stores.events, clock, StreamConfig(
        heartbeat=settings.chat_events_heartbeat_seconds, poll=settings.chat_events_poll_seconds,
        window=settings.chat_events_window_seconds))
    memories.attach_events(events)
    history = ChatHistoryService(stores.history, scrubber, token_budget=settings.chat_history_token_budget)
    state = AgentStateService(stores.state, clock, scrubber)
    records = RecordService(stores.records, record_index, index, clock, scrubber=scrubber,
                            calibration=calibration_for(parts.embedder.model_id))
    prompts = PromptService(stores.prompts, clock, scrubber)
    recalls = RecallService(stores.recalls)
    claims = ClaimService(stores.claims, clock, scrubber)
    policies = MemoryPolicyService(stores.policies, clock, scrubber)
    learning = LearningService(
        stores.learning, memories, records, recalls, parts.llm, clock,
        LearningConfig(max_attempts=settings.chat_learning_attempts,
                       retry_after=timedelta(seconds=settings.chat_learning_retry_seconds)), claims)
    integrations = _integrations(settings, stores, records, parts)
    runner = _learning_runner(settings, learning, integrations.service.sync_due)
    learning.attach(runner.dispatch)
    if model is None:
        from zengram.adapters.openai.chat_proxy import OpenAICompatibleChat

        model = proxy = OpenAICompatibleChat(timeout=settings.chat_provider_timeout)
        model_closer: Callable[[], None] | None = proxy.close
    else:
        model_closer = None
    completions = CompletionService(
        model, provider_endpoints(settings),
        ContextSources(memories, history, state, records, prompts, recalls, SubjectKnowledge(claims), policies),
        learning=learning, clock=clock, scrubber=scrubber,
        config=RecallConfig(memories=settings.chat_recall_limit, memory_relevance=settings.chat_recall_min_relevance,
                            records=settings.chat_records_limit,
                            record_similarity=settings.chat_records_min_similarity))
    closers = [close for close in (getattr(store, "close", None) for store in vars(stores).values()) if close]
    closers += [close for close in (model_closer, runner.stop, integrations.close) if close is not None]
    return ChatLayer(memories, history, state, records, prompts, recalls, learning, completions, claims,
                     memory_index, record_index, runner.dispatch, policies,
                     PolicyConfig(recall_limit=settings.chat_recall_limit,
                                  recall_min_relevance=settings.chat_recall_min_relevance, recall_private=True),
                     events, RequestAudit(stores.audit, clock),
                     integrations.service, integrations.webhooks,
                     closers=closers,
                     starters=[runner.start] if runner.start is not None else [])
