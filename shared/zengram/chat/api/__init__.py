"""The chat layer's HTTP API, mounted at `/api/v1` (the Mnexium SDK's base URL; docs/chat.md)."""

PREFIX = "/api/v1"
