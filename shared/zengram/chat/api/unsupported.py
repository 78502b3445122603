"""What the Mnexium SDK can call but this layer does not offer (yet): integrations and the memory event
stream. Each answers 501 with `{"error": …}` to any valid key. Outside the OpenAPI document: not API.
The role table (roles.py, UNSUPPORTED_PATHS) lists the same paths: any key may be told 501."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from zengram.chat.api.roles import UNSUPPORTED_METHODS
from zengram.web.errors import error_response

router = APIRouter(prefix="/api/v1", include_in_schema=False)


def _refusal(feature: str) -> JSONResponse:
    return error_response(501, f"{feature}: not supported by this server (docs/chat.md lists what the chat layer "
                               "offers)")


@router.api_route("/integrations", methods=UNSUPPORTED_METHODS, name="unsupported /integrations")
def integrations() -> JSONResponse:
    return _refusal("integrations")


@router.api_route("/integrations/{rest:path}", methods=UNSUPPORTED_METHODS,
                  name="unsupported /integrations/{rest:path}")
def integrations_below() -> JSONResponse:
    return _refusal("integrations")
