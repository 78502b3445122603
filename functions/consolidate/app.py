"""Consolidation as one Lambda function: POST /consolidate, GET /consolidate/job/{job_id}, GET /consolidate/status,
the jobs an async POST hands to itself, and the EventBridge schedule."""

from zengram.memory.api import consolidate
from zengram.serverless.handlers import create_function_app
from zengram.serverless.jobs import consolidation_handler

app = create_function_app([consolidate.router])
handler = consolidation_handler(app)
