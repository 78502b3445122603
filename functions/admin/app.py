"""Scoped API keys (POST/GET /admin/keys, DELETE /admin/keys/{key_id}, admin keys only) as one Lambda function."""

from zengram.memory.api import admin
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([admin.router])
handler = http_handler(app)
