"""The chat layer's learning: one job per asynchronous invocation, and the scheduled sweep for due jobs."""

from zengram.serverless.handlers import chat_learning_handler, function_container

provider = function_container()
handler = chat_learning_handler(provider)
