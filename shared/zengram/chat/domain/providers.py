"""Which model provider a completion goes to, and with whose key (pure rules; the adapter calls it).

Callers bring their own key per request (`x-openai-key`, `x-anthropic-key`, `x-google-key`): it is used for that
request's provider call only, never stored or logged. Without a key the deployment's default provider answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from zengram.kernel.errors import ErrorKind, FeatureUnavailable, InvalidInput, ZengramError


class Provider(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GOOGLE = "google"
    DEFAULT = "default"  # the deployment's own OpenAI-compatible endpoint (Ollama, vLLM…), used without a key


KEY_HEADERS = {Provider.OPENAI: "x-openai-key", Provider.ANTHROPIC: "x-anthropic-key",
               Provider.GOOGLE: "x-google-key"}
_KEYED = (Provider.OPENAI, Provider.ANTHROPIC, Provider.GOOGLE)


def provider_for_model(model: str) -> Provider | None:
    """By model name, as the Mnexium SDK picks its key header."""
    name = model.lower()
    if "claude" in name:
        return Provider.ANTHROPIC
    if "gemini" in name or "palm" in name:
        return Provider.GOOGLE
    if any(mark in name for mark in ("gpt", "o1", "o3", "davinci")):
        return Provider.OPENAI
    return None


@dataclass(frozen=True)
class ProviderCall:
    """Where one completion goes. `api_key` is the caller's (or the default provider's configured one)."""

    provider: Provider
    base_url: str
    api_key: str | None = field(repr=False)
    model: str


def choose_provider(model: str, keys: Mapping[Provider, str], explicit: Provider | None = None) -> Provider:
    """An explicit choice wins (a keyed provider then needs its key); else the provider of the only key sent; of
    several keys, the model name's provider, else the first of OpenAI, Anthropic, Google; no key: the default."""
    if explicit is not None:
        if explicit is not Provider.DEFAULT and explicit not in keys:
            raise InvalidInput(KEY_HEADERS[explicit], f"required for provider '{explicit.value}'")
        return explicit
    sent = [provider for provider in _KEYED if provider in keys]
    if not sent:
        return Provider.DEFAULT
    if len(sent) == 1:
        return sent[0]
    by_name = provider_for_model(model)
    return by_name if by_name in sent else sent[0]


@dataclass(frozen=True)
class ProviderEndpoints:
    """The OpenAI-compatible base URL of each provider (settings), and the default provider when configured."""

    urls: Mapping[Provider, str]
    default_url: str | None = None
    default_key: str | None = field(default=None, repr=False)
    default_model: str | None = None  # replaces the requested model on the default provider (e.g. "llama3.1")

    def call_for(self, model: str, keys: Mapping[Provider, str], explicit: Provider | None = None) -> ProviderCall:
        provider = choose_provider(model, keys, explicit)
        if provider is Provider.DEFAULT:
            if not self.default_url:
                raise FeatureUnavailable(
                    "no model provider: send a provider key (x-openai-key, x-anthropic-key or x-google-key) or "
                    "configure a default provider (ZENGRAM_CHAT_DEFAULT_BASE_URL)")
            return ProviderCall(provider, self.default_url, self.default_key, self.default_model or model)
        return ProviderCall(provider, self.urls[provider], keys[provider], model)


class ProviderRefused(ZengramError):
    """The provider answered with a 4xx: the caller's request (or key) is at fault, so the caller hears of it as
    invalid input (a refused key names its header, since our own 401 means our key). Statuses that say more keep
    their meaning (`provider_refusal`). The message is the provider's, never the key."""

    kind = ErrorKind.INVALID_INPUT

    def __init__(self, provider: Provider, status: int, message: str) -> None:
        if status in (401, 403) and provider in KEY_HEADERS:
            text = f"{KEY_HEADERS[provider]}: refused by {provider.value} ({status}): {message}"
        else:
            text = f"{provider.value} refused the request ({status}): {message}"
        super().__init__(text)
        self.provider_status = status


class ProviderNotFound(ProviderRefused):
    """The provider knows no such model (or route)."""

    kind = ErrorKind.NOT_FOUND


class ProviderConflict(ProviderRefused):
    kind = ErrorKind.CONFLICT


class ProviderRateLimited(ProviderRefused):
    """The provider's own rate limit on the caller's key."""

    kind = ErrorKind.RATE_LIMITED


_REFUSAL_OF_STATUS: Mapping[int, type[ProviderRefused]] = {
    404: ProviderNotFound, 409: ProviderConflict, 429: ProviderRateLimited}


def provider_refusal(provider: Provider, status: int, message: str) -> ProviderRefused:
    """The error for a provider's 4xx answer: not found, conflict and rate limited keep their kind; any other
    refusal is the caller's invalid input."""
    return _REFUSAL_OF_STATUS.get(status, ProviderRefused)(provider, status, message)
