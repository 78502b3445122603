"""Who may call what: the role each route needs, checked in one place for every route (docs/keys.md).

The API key middleware authenticates the caller and leaves its `Principal` in the request state; `authorize`
(an app-wide dependency) compares the principal's role with the route's. Which memories a caller sees is its
`TenantScope`, which routes pass to the services (they filter by it: the tenant check lives there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Annotated

from fastapi import Depends, Request

from zengram.chat.api.roles import CHAT_ROUTE_ROLES, UNSUPPORTED_ROLES
from zengram.kernel.errors import Forbidden
from zengram.kernel.identifiers import GLOBAL_CLIENT
from zengram.kernel.keys import Principal, Role, TenantScope, authenticate

# (method, route path) → the least role that may call it. A route missing here needs admin: fail closed.
ROUTE_ROLES: dict[tuple[str, str], Role] = {
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
    # The document knowledge base (mounted at /kb; docs/documents.md). Its documents are shared knowledge, not any
    # one client's: a scoped key also needs `global` among its clients (authorize_documents).
    ("GET", "/kb/health/status"): Role.READ,
    ("GET", "/kb/query/count"): Role.READ,
    ("POST", "/kb/query"): Role.READ,
    ("GET", "/kb/index/jobs"): Role.READ,
    ("GET", "/kb/index/jobs/{job_id}"): Role.READ,
    ("GET", "/kb/index/folders"): Role.READ,
    ("POST", "/kb/index"): Role.WRITE,
    ("POST", "/kb/index/add"): Role.WRITE,
    ("DELETE", "/kb/index/jobs/{job_id}"): Role.WRITE,
    ("DELETE", "/kb/index/folders"): Role.WRITE,
    ("DELETE", "/kb/index"): Role.ADMIN,  # clears every indexed folder
}


ROUTE_ROLES.update(CHAT_ROUTE_ROLES)  # the chat layer's routes (api/chat/roles.py)


def required_role(method: str, route_path: str) -> Role:
    return ROUTE_ROLES.get((method, route_path)) or UNSUPPORTED_ROLES.get((method, route_path), Role.ADMIN)


def principal_of(request: Request) -> Principal:
    """The authenticated caller (the API key middleware put it there; every route but /health has one)."""
    principal: Principal | None = request.scope.get("state", {}).get("principal")
    if principal is None:  # a route reached without the middleware: refuse rather than assume anything
        raise Forbidden("no authenticated caller")
    return principal


# The dependencies are `async def`, run inline: they only read the request (see zengram.memory.api.deps).
async def get_principal(request: Request) -> Principal:
    return principal_of(request)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def get_scope(principal: PrincipalDep) -> TenantScope:
    return principal.scope


ScopeDep = Annotated[TenantScope, Depends(get_scope)]


async def authorize(request: Request) -> None:
    """App-wide: a caller whose role is below the route's gets a 403 before anything is read or counted."""
    route_path = getattr(request.scope.get("route"), "path", None)
    if route_path is None or route_path == "/health":
        return
    require_role(request, route_path)


def require_role(request: Request, route_path: str) -> Principal:
    """The caller, if its role reaches the one `route_path` (as written in ROUTE_ROLES) needs; else a 403."""
    principal = principal_of(request)
    needed = required_role(request.method, route_path)
    if not principal.may(needed):
        raise Forbidden(f"role: this API key is {principal.role.value}; {request.method} {route_path} needs "
                        f"{needed.value}")
    return principal


def authorize_documents(request: Request, base_path: str, open_paths: Collection[str]) -> None:
    """The document knowledge base's check (an app-wide dependency of the app mounted at `base_path`): the route's
    role, and `global` in the key's scope, because the indexed documents belong to no one client."""
    route_path = getattr(request.scope.get("route"), "path", None)
    if route_path is None:
        return
    route_path = base_path + (route_path.rstrip("/") or "")  # each route also answers with a trailing slash
    if route_path in open_paths:
        return
    principal = require_role(request, route_path)
    if not principal.scope.allows(GLOBAL_CLIENT):
        raise Forbidden(f"client_id: the document knowledge base is shared knowledge ('{GLOBAL_CLIENT}'), which "
                        "is not one of this API key's clients")


def authenticator(bootstrap_key: Callable[[], str],
                  scoped_key: Callable[[str], Principal | None]) -> Callable[[str], Principal | None]:
    """The middleware's check: `authenticate` (the same function the API Gateway authorizer calls) bound to this
    host's bootstrap key and key store. `bootstrap_key` may raise a ZengramError (e.g. none configured: 503)."""

    def check(presented: str) -> Principal | None:
        return authenticate(presented, scoped=scoped_key, bootstrap_key=bootstrap_key)

    return check
