"""Who may call what: the role each route needs, checked in one place for every route (docs/keys.md).

The API key middleware authenticates the caller and leaves its `Principal` in the request state; `authorize`
(an app-wide dependency) compares the principal's role with the route's. Which memories a caller sees is its
`TenantScope`, which routes pass to the services (they filter by it: the tenant check lives there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from zengram.kernel.errors import Forbidden
from zengram.kernel.identifiers import GLOBAL_CLIENT
from zengram.kernel.keys import Principal, Role, TenantScope, authenticate


@dataclass(frozen=True)
class RouteRoles:
    """The role each route needs: (method, route path) → the least role that may call it; `fallback` for routes
    served only to say they are not offered. A route in neither needs admin: fail closed. Each context declares
    its own (`memory.api.roles`, `chat.api.roles`, `documents.api.roles`); the host composes them
    (`zengram.assembly.roles`) and hands them to its app (`app.state.route_roles`)."""

    roles: Mapping[tuple[str, str], Role]
    fallback: Mapping[tuple[str, str], Role] = field(default_factory=dict)

    def required(self, method: str, route_path: str) -> Role:
        return self.roles.get((method, route_path)) or self.fallback.get((method, route_path), Role.ADMIN)


def required_role(request: Request, route_path: str) -> Role:
    """The role `route_path` needs, from the table the host gave the app (none: admin for everything)."""
    route_roles: RouteRoles | None = getattr(request.app.state, "route_roles", None)
    return route_roles.required(request.method, route_path) if route_roles is not None else Role.ADMIN


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
    """The caller, if its role reaches the one `route_path` (as written in the host's RouteRoles) needs; else a
    403."""
    principal = principal_of(request)
    needed = required_role(request, route_path)
    if not principal.may(needed):
        raise Forbidden(f"role: this API key is {principal.role.value}; {request.method} {route_path} needs "
                        f"{needed.value}")
    return principal


_CONVERTER = re.compile(r":\w+}")


def authorize_documents(request: Request, base_path: str, open_paths: Collection[str]) -> None:
    """The document knowledge base's check (an app-wide dependency of the app mounted at `base_path`): the route's
    role, and `global` in the key's scope, because the indexed documents belong to no one client."""
    route_path = getattr(request.scope.get("route"), "path", None)
    if route_path is None:
        return
    route_path = base_path + (route_path.rstrip("/") or "")  # each route also answers with a trailing slash
    route_path = _CONVERTER.sub("}", route_path)  # `{entity_id:path}` is `{entity_id}` in the role table
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
