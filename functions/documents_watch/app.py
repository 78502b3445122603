"""Watched document folders on AWS: S3 object events (EventBridge, then the watch queue) queue re-index jobs."""

from zengram.serverless.documents import documents_provider, documents_watch_handler

provider = documents_provider()
handler = documents_watch_handler(provider)
