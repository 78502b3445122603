"""The memory endpoints (store, search, query, read, update, delete, restore) as one Lambda function."""

from zengram.memory.api import memory
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([memory.router])
handler = http_handler(app)
