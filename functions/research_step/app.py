"""The Task states of the research state machine: one step (retrieve, judge, synthesize) per invocation."""

from zengram.serverless.handlers import function_container
from zengram.serverless.jobs import research_step_handler

provider = function_container()
handler = research_step_handler(provider)
