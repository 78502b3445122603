"""The `ChatModel` port over HTTP: any OpenAI-compatible `/chat/completions` endpoint (OpenAI itself, Anthropic's
and Google's compatibility endpoints, Ollama, vLLM…), called with the caller's key for that one request.

httpx rather than the openai SDK: the layer forwards the caller's body as sent and answers with the provider's
JSON as received, which a typed client would reshape. The key travels in the Authorization header only; httpx
logs no headers, and error messages are cleaned of anything key-shaped before they leave.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from zengram.chat.domain.providers import ProviderCall, provider_refusal
from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable

logger = logging.getLogger(__name__)
_KEY_SHAPED = re.compile(r"\b(?:sk|sk-ant|sk-proj|AIza|gsk|xai)[-_A-Za-z0-9*.]{4,}")
MAX_MESSAGE_CHARS = 500


class OpenAICompatibleChat:
    """Thread-safe (one pooled httpx client); `close` releases the pool."""

    def __init__(self, *, timeout: float = 120.0, transport: httpx.BaseTransport | None = None) -> None:
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)), transport=transport)

    def close(self) -> None:
        self._client.close()

    def complete(self, call: ProviderCall, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(_url(call), json=dict(body), headers=_headers(call))
        except httpx.HTTPError as error:
            raise LLMUnavailable(f"{call.provider.value} unreachable: {type(error).__name__}") from None
        _raise_for_status(call, response.status_code, response.content)
        try:
            answer = response.json()
        except ValueError:
            raise LLMInvalidResponse(f"{call.provider.value} answered with something that is not JSON") from None
        if not isinstance(answer, dict):
            raise LLMInvalidResponse(f"{call.provider.value} answered with JSON that is not an object")
        return answer

    def stream(self, call: ProviderCall, body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Opens the stream now (a refusal raises here), then yields its chunks lazily."""
        request = self._client.build_request("POST", _url(call), json={**body, "stream": True}, headers=_headers(call))
        try:
            response = self._client.send(request, stream=True)
        except httpx.HTTPError as error:
            raise LLMUnavailable(f"{call.provider.value} unreachable: {type(error).__name__}") from None
        if response.status_code >= 400:
            content = response.read()
            response.close()
            _raise_for_status(call, response.status_code, content)
        return _chunks(call, response)


def _chunks(call: ProviderCall, response: httpx.Response) -> Iterator[dict[str, Any]]:
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # comments, `event:` lines, keep-alives
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                return
            if not data:
                continue
            try:
                chunk = json.loads(data)
            except ValueError:
                logger.warning("%s sent a stream event that is not JSON; skipped", call.provider.value)
                continue
            if isinstance(chunk, dict):
                yield chunk
    except httpx.HTTPError as error:
        raise LLMUnavailable(f"{call.provider.value} stream broke off: {type(error).__name__}") from None
    finally:
        response.close()


def _url(call: ProviderCall) -> str:
    return f"{call.base_url.rstrip('/')}/chat/completions"


def _headers(call: ProviderCall) -> dict[str, str]:
    return {"Authorization": f"Bearer {call.api_key}"} if call.api_key else {}


def _raise_for_status(call: ProviderCall, status: int, content: bytes) -> None:
    if status < 400:
        return
    message = _clean(_message_of(content), call.api_key)
    if status < 500:
        raise provider_refusal(call.provider, status, message)
    raise LLMUnavailable(f"{call.provider.value} failed ({status}): {message}")


def _message_of(content: bytes) -> str:
    """The provider's error message: OpenAI's `{"error": {"message"}}`, a plain `{"error": "…"}`, or the text."""
    try:
        body = json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if error is not None:
        return str(error)
    return str(body.get("message") if isinstance(body, dict) and body.get("message") else body)


def _clean(message: str, api_key: str | None) -> str:
    """No key, nor anything shaped like one (providers quote masked keys), leaves in an error."""
    if api_key:
        message = message.replace(api_key, "[key]")
    return _KEY_SHAPED.sub("[key]", message)[:MAX_MESSAGE_CHARS]
