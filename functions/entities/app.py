"""The entity endpoints (GET /entities, /entities/stats, /entities/{name}, /entities/{name}/memories and
POST /entities/reclassify) as one Lambda function."""

from zengram.memory.api import entities
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([entities.router])
handler = http_handler(app)
