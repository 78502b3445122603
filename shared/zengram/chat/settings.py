"""The chat context layer's settings (docs/chat.md): providers, recall, versioning, learning."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from zengram.chat.domain.learning import LearningConfig
from zengram.chat.domain.memories import RecallPolicy, VersioningPolicy
from zengram.chat.domain.recalls import RecallConfig
from zengram.kernel.settings import DynamoDBSettings, HostSettings, blank_is_unset


class ChatSettings(DynamoDBSettings, HostSettings):
    """Everything the chat context's wiring reads (its stores live beside the records)."""

    # -- the chat context layer (docs/chat.md) -------------------------------------------------------------------
    chat_openai_base_url: str = Field(
        default="https://api.openai.com/v1", description="OpenAI's chat endpoint, used with an x-openai-key.")
    chat_anthropic_base_url: str = Field(
        default="https://api.anthropic.com/v1",
        description="Anthropic's OpenAI-compatible endpoint, used with an x-anthropic-key.")
    chat_google_base_url: str = Field(
        default="https://generativelanguage.googleapis.com/v1beta/openai",
        description="Google Gemini's OpenAI-compatible endpoint, used with an x-google-key.")
    chat_default_base_url: str | None = Field(
        default=None, description="The provider a completion goes to when the caller sends no provider key (an "
                                  "OpenAI-compatible endpoint: Ollama, vLLM…); unset: such requests answer 503.")
    chat_default_api_key: SecretStr | None = Field(default=None, description="Key for the default provider, if any.")
    chat_default_model: str | None = Field(
        default=None, description="Model the default provider runs, whatever the request names (unset: as named).")
    chat_provider_timeout: float = Field(default=120.0, gt=0, description="Seconds per provider call.")
    chat_history_token_budget: int = Field(
        default=2000, ge=0, description="Estimated tokens of chat history `history: true` replays (newest first).")
    chat_recall_limit: int = Field(default=RecallConfig.memories, ge=0, le=50,
                                   description="Most memories `recall: true` injects.")
    chat_recall_min_relevance: float = Field(
        default=RecallConfig.memory_relevance, ge=0, le=1,
        description="Least relevance of an injected memory: the cosine calibrated for the embedder (MiniLM: "
                    "0.20 → 0.3), lifted by keyword agreement (chat/domain/recall_calibration.py).")
    chat_records_limit: int = Field(default=RecallConfig.records, ge=0, le=50,
                                    description="Most records `records.recall` injects.")
    chat_records_min_similarity: float = Field(
        default=RecallConfig.record_similarity, ge=0, le=1,
        description="Least relevance of an injected record (calibrated as memories are).")
    chat_skip_similarity: float = Field(
        default=VersioningPolicy.skip_at, ge=0, le=100,
        description="Semantic versioning: a new memory this similar (cosine × 100) to an active one is skipped.")
    chat_supersede_similarity: float = Field(
        default=VersioningPolicy.supersede_from, ge=0, le=100,
        description="Semantic versioning: same-kind memories from this similarity up are superseded.")
    chat_decay_per_day: float = Field(default=RecallPolicy.decay_per_day, gt=0, le=1,
                                      description="Recall decay per day since a memory was last recalled.")
    chat_temporal_decay_per_day: float = Field(default=RecallPolicy.temporal_decay_per_day, gt=0, le=1,
                                               description="The same, for temporal memories.")
    chat_learning_launcher: Literal["thread", "lambda"] = Field(
        default="thread", description="Who runs learning jobs: this process's worker thread, or asynchronous "
                                      "invocations of chat_learning_function (AWS).")
    chat_learning_function: str | None = Field(
        default=None, description="Function the lambda launcher invokes with each learning job id.")
    chat_learning_queue_size: int = Field(
        default=100, ge=1, description="Jobs the embedded worker holds in memory; the rest wait in the store.")
    chat_learning_sweep_seconds: float = Field(
        default=5.0, gt=0, description="How often the embedded worker runs the stored jobs that are due (retries, "
                                       "and those a full queue or a restart left behind).")
    chat_learning_attempts: int = Field(default=LearningConfig.max_attempts, ge=1, le=10,
                                        description="Attempts per learning job before it stays failed.")
    chat_learning_retry_seconds: float = Field(
        default=LearningConfig.retry_after.total_seconds(), gt=0,
        description="Wait before a failed learning job is tried again (doubling per attempt).")
    chat_events_heartbeat_seconds: float = Field(
        default=30.0, gt=0, description="Memory event stream: a `heartbeat` event after this many quiet seconds.")
    chat_events_poll_seconds: float = Field(
        default=1.0, gt=0, le=60, description="Memory event stream: how often an open stream reads the event log.")
    chat_events_window_seconds: float = Field(
        default=0.0, ge=0, le=900,
        description="Memory event stream: 0 streams until the client leaves (embedded); above 0 (AWS, behind API "
                    "Gateway's buffering) each response is a long poll that ends once it has delivered events or "
                    "after this many seconds, and the client reconnects with Last-Event-ID.")

    # -- integrations and webhooks (docs/chat.md, "Integrations") -------------------------------------------------
    outbound_allow: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Outside URLs integrations and webhook deliveries may call, comma-separated: URL prefixes "
                    "(https://api.example.com/v1/) or hosts (api.example.com, *.example.com). Empty: none.")
    outbound_allow_networks: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Loopback, private or link-local networks (CIDR, comma-separated) an allowed URL may still "
                    "resolve to; empty: such addresses are always refused.")
    integration_delivery_attempts: int = Field(default=4, ge=1, le=10,
                                               description="Attempts per webhook delivery before it is failed.")
    integration_delivery_backoff_seconds: float = Field(
        default=0.5, ge=0, le=10, description="Wait after a delivery's first failed attempt (doubling, at most 8 s).")

    @field_validator("outbound_allow", "outbound_allow_networks", mode="before")
    @classmethod
    def _comma_separated_outbound(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("chat_default_base_url", "chat_default_api_key", mode="before")
    @classmethod
    def _blank_chat_is_unset(cls, value: object) -> object:
        return blank_is_unset(value)
