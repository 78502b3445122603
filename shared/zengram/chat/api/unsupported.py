"""What the Mnexium SDK can call but this layer does not offer (yet): claims, profiles, integrations and the memory
event stream. Each answers 501 with `{"error": …}` to any valid key. Outside the OpenAPI document: not API."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from zengram.chat.api import PREFIX
from zengram.chat.api.roles import UNSUPPORTED_FEATURES, UNSUPPORTED_METHODS
from zengram.web.errors import error_response

router = APIRouter(prefix=PREFIX, include_in_schema=False)


def _refusal(feature: str) -> JSONResponse:
    return error_response(501, f"{feature}: not supported by this server (docs/chat.md lists what the chat layer "
                               "offers)")


for _path, _feature in UNSUPPORTED_FEATURES.items():
    router.add_api_route(_path, lambda feature=_feature: _refusal(feature), methods=UNSUPPORTED_METHODS,
                         name=f"unsupported {_path}")
