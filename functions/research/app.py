"""POST /research as one Lambda function: it runs the research state machine as a synchronous Express execution."""

from zengram.memory.api import research
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([research.router])
handler = http_handler(app)
