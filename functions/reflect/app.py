"""POST /reflect (LLM-powered topic synthesis) as one Lambda function."""

from zengram.memory.api import reflect
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([reflect.router])
handler = http_handler(app)
