"""The role each document knowledge base route needs (mounted at /kb; docs/documents.md). Its documents are shared
knowledge, not any one client's: a scoped key also needs `global` among its clients (`authorize_documents`)."""

from __future__ import annotations

from zengram.kernel.keys import Role

KB_ROUTE_ROLES: dict[tuple[str, str], Role] = {
    ("GET", "/kb/health/status"): Role.READ,
    ("GET", "/kb/health/providers"): Role.READ,
    ("GET", "/kb/health/config"): Role.READ,
    ("GET", "/kb/graph/entity/{entity_type}/{entity_id}"): Role.READ,
    ("POST", "/kb/graph/project"): Role.WRITE,
    ("DELETE", "/kb/graph/project"): Role.WRITE,
    ("GET", "/kb/query/count"): Role.READ,
    ("POST", "/kb/query"): Role.READ,
    ("GET", "/kb/query/chunk/{chunk_id}"): Role.READ,
    ("GET", "/kb/index/jobs"): Role.READ,
    ("GET", "/kb/index/jobs/{job_id}"): Role.READ,
    ("GET", "/kb/index/folders"): Role.READ,
    ("GET", "/kb/index/cache"): Role.READ,
    ("DELETE", "/kb/index/cache"): Role.WRITE,  # drops derived vectors only: the next index re-embeds
    ("POST", "/kb/index"): Role.WRITE,
    ("POST", "/kb/index/add"): Role.WRITE,
    ("DELETE", "/kb/index/jobs/{job_id}"): Role.WRITE,
    ("DELETE", "/kb/index/folders"): Role.WRITE,
    ("DELETE", "/kb/index"): Role.ADMIN,  # clears every indexed folder
}
