"""The single-process host: every router in one FastAPI app over local storage."""
