"""JSON answers from OpenAI, or any server that speaks its `/v1/chat/completions` API (Ollama, vLLM, LM Studio).

The `openai` SDK is imported when a model is built, never at import time.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import BaseModel, ValidationError

from zengram.kernel.errors import LLMInvalidResponse, LLMUnavailable
from zengram.kernel.ports import JsonModel

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["NO_KEY_PLACEHOLDER", "OpenAIChatModel", "json_instructions"]

logger = logging.getLogger(__name__)

# The SDK refuses to start without a key; local servers such as Ollama ignore whatever is sent.
NO_KEY_PLACEHOLDER = "no-key"
_OPENAI_HOST = "api.openai.com"
_MAX_PROBLEMS_QUOTED = 5


class _BadAnswer(Exception):
    """The model's answer is not JSON for the expected schema; the message says what is wrong."""


class OpenAIChatModel:
    """The `LanguageModel` port on an OpenAI-compatible chat-completions endpoint, answers forced to JSON.

    A bad answer (not JSON, or JSON that fails the schema) is asked for once more, telling the model what
    was wrong; the SDK itself retries connection errors, 429 and 5xx `max_retries` times.
    The SDK's client is thread-safe, so one model can serve concurrent callers.
    """

    def __init__(
        self, *, base_url: str | None, api_key: str | None, model: str, timeout: float = 60.0, max_retries: int = 2
    ) -> None:
        from openai import OpenAI

        self._api_key = api_key or NO_KEY_PLACEHOLDER
        self._client: OpenAI = OpenAI(
            base_url=base_url, api_key=self._api_key, timeout=timeout, max_retries=max_retries
        )
        self._model = model
        self._provider = "openai" if base_url is None or urlparse(base_url).hostname == _OPENAI_HOST else (
            "openai-compatible"
        )

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return self._model

    def complete_json(self, system: str, user: str, schema: type[JsonModel]) -> JsonModel:
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": f"{system}\n\n{json_instructions(schema)}"},
            {"role": "user", "content": user},
        ]
        answer = self._ask(messages)
        try:
            return _parse(answer, schema)
        except _BadAnswer as first_problem:
            logger.warning("language model answer rejected, asking once more: %s", first_problem)
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": f"That answer was invalid: {first_problem}. Reply again with only "
                                            "the JSON object, matching the schema exactly."},
            ]
        try:
            return _parse(self._ask(messages), schema)
        except _BadAnswer as second_problem:
            raise LLMInvalidResponse(
                f"the language model ({self._model}) answered twice without valid JSON: {second_problem}"
            ) from None

    def _ask(self, messages: list[ChatCompletionMessageParam]) -> str:
        import openai

        try:
            completion = self._client.chat.completions.create(
                model=self._model,
                messages=messages,
                response_format={"type": "json_object"},
            )
        except openai.APIConnectionError as error:  # includes timeouts
            kind = "timed out" if isinstance(error, openai.APITimeoutError) else "could not be reached"
            raise LLMUnavailable(f"LLM provider unavailable: the {self._provider} endpoint {kind}") from None
        except openai.APIStatusError as error:
            raise self._status_error(error) from None
        if not completion.choices:
            return ""
        return completion.choices[0].message.content or ""

    def _status_error(self, error: Any) -> LLMUnavailable | LLMInvalidResponse:
        status: int = error.status_code
        if status in (401, 403):  # the provider's message may quote part of the key: never pass it on
            return LLMUnavailable(f"LLM provider unavailable: the {self._provider} endpoint refused the API key "
                                  f"({status})")
        detail = _redacted(_provider_message(error), self._api_key)
        if status in (400, 422):
            return LLMInvalidResponse(f"the LLM provider rejected the request ({status}): {detail}")
        return LLMUnavailable(f"LLM provider unavailable: the {self._provider} endpoint answered {status}: {detail}")


def json_instructions(schema: type[BaseModel]) -> str:
    """What every system prompt ends with: answer with one JSON object of this schema."""
    return ("Answer with a single JSON object and nothing else (no prose, no code fences). "
            f"It must validate against this JSON schema:\n{json.dumps(schema.model_json_schema())}")


def _parse(answer: str, schema: type[JsonModel]) -> JsonModel:
    text = _without_code_fence(answer.strip())
    if not text:
        raise _BadAnswer("the answer was empty")
    try:
        return schema.model_validate_json(text)
    except ValidationError as error:
        raise _BadAnswer(_describe(error)) from None


def _without_code_fence(text: str) -> str:
    """Some local models wrap JSON in ```json fences even in JSON mode."""
    if text.startswith("```") and text.endswith("```"):
        first_line_end = text.find("\n")
        return text[first_line_end + 1 : -3].strip() if first_line_end != -1 else ""
    return text


def _describe(error: ValidationError) -> str:
    problems = []
    for problem in error.errors()[:_MAX_PROBLEMS_QUOTED]:
        location = ".".join(str(part) for part in problem["loc"])
        problems.append(f"{location}: {problem['msg']}" if location else str(problem["msg"]))
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _provider_message(error: Any) -> str:
    body = error.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error", {})
        if isinstance(message, dict):
            message = message.get("message")
        if message:
            return str(message)[:300]
    return "no details"


def _redacted(text: str, api_key: str) -> str:
    return text.replace(api_key, "[REDACTED]") if api_key != NO_KEY_PLACEHOLDER else text
