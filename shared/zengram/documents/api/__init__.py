"""The document knowledge base API (Agent Brain-style), a FastAPI application of its own mounted at `/kb`
(`zengram.documents.api.app`). Nothing is imported here: every function imports the role table beside it."""
