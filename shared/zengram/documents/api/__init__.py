"""The document knowledge base API (Agent Brain-style), a FastAPI application of its own mounted at `/kb`."""

from zengram.documents.api.app import BASE_PATH, create_kb_app, open_paths
from zengram.kernel.lazy import Lazy

__all__ = ["BASE_PATH", "Lazy", "create_kb_app", "open_paths"]
