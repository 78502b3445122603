"""The chat layer's HTTP API, mounted at `/api/v1` (the Mnexium SDK's base URL; docs/chat.md). Each router module
writes the prefix literally (`APIRouter(prefix="/api/v1")`) so that a route's full path greps to its decorator;
`PREFIX` is the same value for the role table (roles.py)."""

PREFIX = "/api/v1"
