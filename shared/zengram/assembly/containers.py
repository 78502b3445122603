"""How a host assembles the three contexts: the shared parts first (embedder, scrubber, language model, the guarded
search index inside the memory context), then memory, then the chat layer and the document base over the same parts.

The embedded server and every Lambda function build their containers here, the same way; each context's own
wiring (`zengram.memory.wiring`, `zengram.chat.wiring`, `zengram.documents.wiring`) picks its adapters.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from zengram.adapters.factories import build_embedder, build_language_model
from zengram.kernel.content import Scrubber, derive_digest_key
from zengram.kernel.errors import FeatureUnavailable
from zengram.kernel.ports import Clock, Embedder, LanguageModel
from zengram.memory.wiring import RECORD_BACKENDS, MemoryContainer, MemoryInputs, build_memory_container
from zengram.settings import Settings

if TYPE_CHECKING:
    from zengram.chat.wiring import ChatLayer
    from zengram.documents.wiring import DocumentsContainer


class Container(MemoryContainer):
    """A host's container: the memory context's services, and the chat layer over the same shared parts."""

    settings: Settings

    @cached_property
    def chat(self) -> ChatLayer:
        """The chat layer (docs/chat.md), built on first use: only hosts that serve /api/v1 pay for it."""
        from zengram.chat.wiring import build_chat_layer

        layer = build_chat_layer(self.settings, self.shared_parts(), table_client=getattr(self.records, "client", None))
        self.closers.append(layer.close)
        return layer


def build_container(settings: Settings, *, embedder: Embedder | None = None, clock: Clock | None = None,
                    check_index: bool = False, language_model: LanguageModel | None = None) -> Container:
    """Wires the adapters the settings name; `embedder`, `clock` and `language_model` let tests, benchmarks and
    hosts (the Lambda host meters its LLM calls) bring their own. `check_index`: see `build_memory_container`."""
    inputs = MemoryInputs(embedder or build_embedder(settings), build_scrubber(settings),
                          language_model or build_language_model(settings), clock)
    return build_memory_container(settings, inputs, Container, check_index=check_index)


def build_documents_container(settings: Settings, *, embedder: Embedder | None = None, clock: Clock | None = None,
                              recover: bool = False) -> DocumentsContainer:
    """The document base over the memories' embedder when the host has built it (the same model either way) and the
    memories' scrubber key. `recover` (single-process hosts): see `zengram.documents.wiring.build_documents`."""
    from zengram.documents.wiring import build_documents

    return build_documents(settings, embedder or build_embedder(settings), build_scrubber(settings), clock=clock,
                           recover=recover)


def build_scrubber(settings: Settings) -> Scrubber:
    """The credential scrubber, keyed by ZENGRAM_SCRUB_KEY or else by the admin API key (from the environment,
    Secrets Manager / SSM on AWS, or the embedded host's key file). The key is read on the first scrub, so
    functions that never write never fetch it."""
    return Scrubber(lambda: derive_digest_key(_scrub_secret(settings)))


def _scrub_secret(settings: Settings) -> str:
    if settings.scrub_key is not None:
        return settings.scrub_key.get_secret_value()
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.api_key_secret_id or settings.api_key_parameter:
        from zengram.adapters.aws_parameters import fetch_api_key

        return fetch_api_key(secret_id=settings.api_key_secret_id, parameter_name=settings.api_key_parameter)
    if RECORD_BACKENDS[settings.record_store].keeps_key_file:
        from zengram.assembly.keys import resolve_api_key

        return resolve_api_key(settings)[0]
    raise FeatureUnavailable("writes need a key for credential placeholders: set ZENGRAM_SCRUB_KEY or the API key")
