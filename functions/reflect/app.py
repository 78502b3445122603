"""POST /reflect (LLM-powered topic synthesis) as one Lambda function."""

from zengram.api.routers import reflect
from zengram.serverless import create_function_app, http_handler

app = create_function_app([reflect.router])
handler = http_handler(app)
