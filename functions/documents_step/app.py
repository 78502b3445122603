"""The Task states of the documents state machine: plan, batch, finish or fail one indexing job per invocation."""

from zengram.serverless.documents import documents_provider, documents_step_handler

provider = documents_provider()
handler = documents_step_handler(provider)
