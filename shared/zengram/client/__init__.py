"""Python SDK for the Zengram API: `BrainClient` (sync) and `AsyncBrainClient` (asyncio) on httpx.

Answers are the server's own pydantic models (`zengram.memory.api.schemas`); failures raise `BrainError` subclasses
carrying the server's `error` text. Method names follow Zengram's Python `BrainClient`.
"""

from zengram.client.aio import AsyncBrainClient
from zengram.client.errors import (
    AuthenticationError,
    BrainConnectionError,
    BrainError,
    ConflictError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    ServiceUnavailableError,
)
from zengram.client.retry import RetryPolicy
from zengram.client.sync import BrainClient

__all__ = [
    "AsyncBrainClient",
    "AuthenticationError",
    "BrainClient",
    "BrainConnectionError",
    "BrainError",
    "ConflictError",
    "ForbiddenError",
    "InvalidRequestError",
    "NotFoundError",
    "RateLimitError",
    "RetryPolicy",
    "ServiceUnavailableError",
]
