"""The chat layer's turn (/api/v1: completions, history, state, prompts) as one Lambda."""

from zengram.chat.api.audit import audited
from zengram.chat.api.groups import turn_routers
from zengram.serverless.handlers import create_function_app, http_handler

app = audited(create_function_app(turn_routers()))
handler = http_handler(app)
