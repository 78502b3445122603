"""The session briefing (GET /briefing) and the memory health dashboard (GET /stats) as one Lambda function."""

from zengram.api.routers import briefing, stats
from zengram.serverless import create_function_app, http_handler

app = create_function_app([briefing.router, stats.router])
handler = http_handler(app)
