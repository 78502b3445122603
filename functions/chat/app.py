"""The chat context layer (/api/v1: completions, subject memories, history, state, records, prompts) as one Lambda."""

from zengram.api.chat.routers import CHAT_ROUTERS
from zengram.serverless import create_function_app, http_handler

app = create_function_app(CHAT_ROUTERS)
handler = http_handler(app)
