"""GET /health as a Lambda function."""

from zengram.memory.api import health
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([health.router])
handler = http_handler(app)
