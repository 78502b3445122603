"""Client fingerprints (PUT/GET/DELETE /clients/{client_id}, GET /clients) as one Lambda function."""

from zengram.memory.api import clients
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([clients.router])
handler = http_handler(app)
