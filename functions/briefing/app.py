"""The session briefing endpoint (GET /briefing) as one Lambda function."""

from zengram.api.routers import briefing
from zengram.serverless import create_function_app, http_handler

app = create_function_app([briefing.router])
handler = http_handler(app)
