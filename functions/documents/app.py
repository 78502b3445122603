"""The document knowledge base API (/kb/...) as one Lambda function; indexing runs in the documents state machine."""

from zengram.serverless import http_handler
from zengram.serverless_documents import create_documents_function_app

app = create_documents_function_app()
handler = http_handler(app)
