"""The role each memory route needs (`zengram.web.access` checks them; docs/keys.md): (method, route path) → the
least role that may call it. A route missing from the host's table needs admin: fail closed."""

from __future__ import annotations

from zengram.kernel.keys import Role

MEMORY_ROUTE_ROLES: dict[tuple[str, str], Role] = {
    ("POST", "/memory"): Role.WRITE,
    ("GET", "/memory/search"): Role.READ,
    ("GET", "/memory/query"): Role.READ,
    ("GET", "/memory/{memory_id}"): Role.READ,
    ("GET", "/memory/{memory_id}/history"): Role.READ,
    ("PATCH", "/memory/{memory_id}"): Role.WRITE,
    ("DELETE", "/memory/{memory_id}"): Role.WRITE,
    ("POST", "/memory/{memory_id}/restore"): Role.WRITE,
    ("GET", "/briefing"): Role.READ,
    ("GET", "/stats"): Role.READ,
    ("GET", "/export"): Role.READ,
    ("POST", "/export/import"): Role.WRITE,
    ("GET", "/entities"): Role.READ,
    ("GET", "/entities/stats"): Role.READ,
    ("GET", "/entities/graph"): Role.READ,
    ("GET", "/entities/{name}"): Role.READ,
    ("GET", "/entities/{name}/memories"): Role.READ,
    ("POST", "/entities/reclassify"): Role.ADMIN,  # rewrites memories of every tenant
    ("DELETE", "/entities/{name}"): Role.ADMIN,  # likewise
    ("POST", "/entities/{name}/merge"): Role.ADMIN,
    ("GET", "/collections"): Role.READ,
    ("GET", "/collections/{name}"): Role.READ,
    ("POST", "/collections"): Role.ADMIN,  # upstream's registry is one for every tenant
    ("DELETE", "/collections/{name}"): Role.ADMIN,
    ("GET", "/clients"): Role.READ,
    ("GET", "/clients/{client_id}"): Role.READ,
    ("PUT", "/clients/{client_id}"): Role.WRITE,
    ("DELETE", "/clients/{client_id}"): Role.WRITE,
    ("POST", "/reflect"): Role.READ,  # reads memories and answers; stores nothing
    ("POST", "/research"): Role.READ,
    ("POST", "/consolidate"): Role.ADMIN,  # merges and supersedes memories of every tenant
    ("GET", "/consolidate/job/{job_id}"): Role.ADMIN,  # a job's result names every tenant it touched
    ("GET", "/consolidate/status"): Role.READ,
    ("POST", "/admin/keys"): Role.ADMIN,
    ("GET", "/admin/keys"): Role.ADMIN,
    ("DELETE", "/admin/keys/{key_id}"): Role.ADMIN,
}
