"""The export and import endpoints (GET /export, POST /export/import) as one Lambda function."""

from zengram.memory.api import export
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([export.router])
handler = http_handler(app)
