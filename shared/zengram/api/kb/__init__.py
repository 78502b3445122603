"""The document knowledge base API (Agent Brain-style), a FastAPI application of its own mounted at `/kb`."""

from zengram.api.kb.app import BASE_PATH, create_kb_app, open_paths
from zengram.provider import Lazy

__all__ = ["BASE_PATH", "Lazy", "create_kb_app", "open_paths"]
