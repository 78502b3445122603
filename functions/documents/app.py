"""The document knowledge base API (/kb/...) as one Lambda function; indexing runs in the documents state machine."""

from zengram.serverless.documents import create_documents_function_app
from zengram.serverless.handlers import http_handler

app = create_documents_function_app()
handler = http_handler(app)
