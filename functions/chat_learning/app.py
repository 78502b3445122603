"""The chat layer's learning: one job per asynchronous invocation, and the scheduled sweep for due jobs."""

from zengram.serverless.handlers import function_container
from zengram.serverless.jobs import chat_learning_handler

provider = function_container()
handler = chat_learning_handler(provider)
