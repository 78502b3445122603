"""Consolidation as one Lambda function: POST /consolidate, GET /consolidate/job/{job_id}, GET /consolidate/status,
the jobs an async POST hands to itself, and the EventBridge schedule."""

from zengram.memory.api import consolidate
from zengram.serverless.handlers import consolidation_handler, create_function_app

app = create_function_app([consolidate.router])
handler = consolidation_handler(app)
