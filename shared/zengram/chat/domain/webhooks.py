"""Signed webhooks, both ways (docs/chat.md, "Webhooks"), in the scheme of the Mnexium SDK's
`integrations.sign_webhook`: `x-mnx-webhook-timestamp: <unix seconds>` and `x-mnx-webhook-signature: <hex>`, the
HMAC-SHA256, keyed with the integration's `webhook_secret`, of `"<timestamp>.<body>"` where body is the JSON text
as `json.dumps(payload)` writes it (the SDK's serialisation; a delivery sends exactly that text).

Inbound (`POST /integrations/{id}/webhook`): a push is accepted when its signature matches the raw body, or the
SDK's serialisation of the parsed body (the SDK signs `json.dumps(payload)` but its HTTP client sends compact
JSON), and its timestamp is within `TOLERANCE` of now. Outbound deliveries are signed the same way and retried
with a doubling backoff; every attempt is kept in the delivery's log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from zengram.kernel.errors import Forbidden, InvalidInput
from zengram.kernel.timestamps import format_timestamp

TIMESTAMP_HEADER = "x-mnx-webhook-timestamp"
SIGNATURE_HEADER = "x-mnx-webhook-signature"
EVENT_HEADER = "x-event-id"
TOLERANCE = timedelta(minutes=5)


def canonical_body(payload: Any) -> str:
    """The JSON text a payload is signed (and delivered) as: the SDK's `json.dumps(payload)`."""
    return json.dumps(payload if payload is not None else {})


def signature(secret: str, timestamp: str, body: str | bytes) -> str:
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return hmac.new(secret.encode("utf-8"), timestamp.encode("utf-8") + b"." + raw, hashlib.sha256).hexdigest()


def _normalized(value: str) -> str:
    value = value.strip()
    return (value.split("=", 1)[1] if value.lower().startswith("sha256=") else value).lower()


def verify(secret: str, timestamp: str | None, signed: str | None, raw_body: bytes, now: datetime) -> Any:
    """Checks an inbound push and returns its parsed JSON body (InvalidInput for a missing header or a body that is
    not JSON, Forbidden for a stale timestamp or a signature that matches neither form of the body)."""
    if not timestamp:
        raise InvalidInput(TIMESTAMP_HEADER, "required (unix seconds)")
    if not signed:
        raise InvalidInput(SIGNATURE_HEADER, "required (hex HMAC-SHA256 of '<timestamp>.<body>')")
    try:
        moment = datetime.fromtimestamp(int(timestamp.strip()), tz=now.tzinfo)
    except (ValueError, OverflowError, OSError):
        raise InvalidInput(TIMESTAMP_HEADER, "must be unix seconds") from None
    if abs(now - moment) > TOLERANCE:
        raise Forbidden(f"{TIMESTAMP_HEADER}: outside the {int(TOLERANCE.total_seconds())} s tolerance (replayed "
                        "or the sender's clock is off)")
    try:
        payload = json.loads(raw_body or b"{}")
    except ValueError:
        raise InvalidInput("body", "must be JSON") from None
    given = _normalized(signed)
    forms = (raw_body, canonical_body(payload).encode("utf-8"))
    if not any(hmac.compare_digest(given, signature(secret, timestamp.strip(), form)) for form in forms):
        raise Forbidden(f"{SIGNATURE_HEADER}: does not match the body signed with the integration's webhook_secret")
    return payload


def signed_headers(secret: str, body: str, at: datetime, event_id: str) -> dict[str, str]:
    timestamp = str(int(at.timestamp()))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body), EVENT_HEADER: event_id,
            "content-type": "application/json"}


# -- outbound deliveries -------------------------------------------------------------------------------------------

class DeliveryPolicy(BaseModel):
    """How hard a delivery tries: `attempts` in all, waiting `backoff_seconds` × 2ⁿ (at most `max_backoff_seconds`)
    between them. A 2xx answer is delivered; a 4xx but 408/429 is refused and not retried."""

    model_config = ConfigDict(frozen=True)

    attempts: int = 4
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 8.0

    def wait_after(self, attempt: int) -> float:
        return float(min(self.backoff_seconds * 2.0 ** (attempt - 1), self.max_backoff_seconds))


def retryable(status: int) -> bool:
    """Whether an answer is worth another attempt: none at all (0), a timeout or rate limit, a server error."""
    return status == 0 or status in (408, 425, 429) or status >= 500


class Attempt(BaseModel):
    model_config = ConfigDict(frozen=True)

    attempt: int
    at: datetime
    status_code: int | None  # None: no answer (unreachable, timed out)
    error: str | None = None
    duration_ms: int

    @field_serializer("at")
    def _stamp(self, value: datetime) -> str:
        return format_timestamp(value)


class Delivery(BaseModel):
    """One event delivered (or not) to an integration's endpoint, with every attempt."""

    model_config = ConfigDict(frozen=True)

    delivery_id: str
    project_id: str
    integration_id: str
    event_id: str
    event: str
    url: str
    status: Literal["delivered", "failed"]
    attempts: list[Attempt] = Field(default_factory=list)
    created_at: datetime
    finished_at: datetime

    @field_serializer("created_at", "finished_at")
    def _stamp(self, value: datetime) -> str:
        return format_timestamp(value)
