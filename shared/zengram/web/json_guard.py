"""A JSON body's nesting is measured before anything parses it.

Python's JSON reader and the validators after it recurse once per level: a body nested a few hundred levels deep
made a RecursionError (a 500), a few thousand made an anonymous parse error. No valid request nests deeper than
six levels (an import record's metadata), so a body past `MAX_JSON_DEPTH` is refused with a 400 naming where it
goes too deep. The scan is iterative and runs at C speed on the common path: strings are blanked out (they may
hold any bracket), then the depth is the running sum of what brackets remain.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from zengram.web.errors import error_response
from zengram.web.middleware import replay_body

MAX_JSON_DEPTH = 32
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_PATH_PARTS_SHOWN = 3  # `data.0.metadata`: enough to find the field, short enough to read


def nesting_problem(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """`"<path>: ..."` when the JSON text nests objects and arrays deeper than `max_depth`, else None."""
    brackets = _STRING.sub(b'""', body).translate(None, _NOT_BRACKETS)
    if not brackets or max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) <= max_depth:
        return None
    return f"{_path_where_too_deep(body, max_depth)}: JSON may nest at most {max_depth} levels"


def _path_where_too_deep(body: bytes, max_depth: int) -> str:
    """The rare path: walks the tokens again, keeping the key or index being read in each open container."""
    path: list[str | int] = []
    last_string = b'""'
    for match in _TOKEN.finditer(body):
        token = match.group()
        if token in (b"{", b"["):
            if len(path) == max_depth:
                break
            path.append(0 if token == b"[" else "")
        elif token in (b"}", b"]"):
            if path:
                path.pop()
        elif token == b"," and path and isinstance(path[-1], int):
            path[-1] += 1
        elif token == b":" and path:
            path[-1] = _text(last_string)
        elif token.startswith(b'"'):
            last_string = token
    return ".".join(str(part) for part in path[:_PATH_PARTS_SHOWN]) or "body"


def _text(string_token: bytes) -> str:
    try:
        return str(json.loads(string_token))[:64]
    except ValueError:
        return string_token[1:-1].decode("utf-8", "replace")[:64]


class JsonDepthMiddleware:
    """Reads a JSON body whole (the body size limit, outside, has capped it), checks its nesting, then hands the
    same bytes on. Bodies that are not JSON pass untouched; FastAPI refuses them as it always did.

    A JSON object or array sent without a content type, or as `curl -d` sends it (form-urlencoded) or as text, is
    read as the JSON it is (the content type is set to `application/json` for the routes): issue 37 found a
    newcomer's `curl -d '{...}'` refused with "a JSON object is required". This API takes no forms."""

    def __init__(self, app: ASGIApp, max_depth: int = MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        content_type = Headers(scope=scope).get("content-type") if scope["type"] == "http" else None
        if (scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS")
                or not (_may_be_json(content_type) or _loosely_typed(content_type))):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _loosely_typed(content_type) or not content_type:
            if body.lstrip()[:1] not in (b"{", b"["):
                await self.app(scope, replay_body(body, receive), send)
                return
            scope = _as_json(scope)
        problem = nesting_problem(body, self.max_depth) if body else None
        if problem is not None:
            await error_response(400, problem)(scope, receive, send)
            return
        await self.app(scope, replay_body(body, receive), send)


def _may_be_json(content_type: str | None) -> bool:
    """FastAPI parses a body as JSON when it has no content type or a JSON one (`application/json`, `...+json`)."""
    if not content_type:
        return True
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type.endswith("/json") or media_type.endswith("+json")


# What a JSON body often arrives as by mistake: `curl -d` sends form-urlencoded, some clients plain text.
LOOSE_TYPES = frozenset({"application/x-www-form-urlencoded", "text/plain"})


def _loosely_typed(content_type: str | None) -> bool:
    return content_type is not None and content_type.split(";", 1)[0].strip().lower() in LOOSE_TYPES


def _as_json(scope: Scope) -> Scope:
    """The same request, its content type `application/json`."""
    headers = [(name, value) for name, value in scope["headers"] if name.lower() != b"content-type"]
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
