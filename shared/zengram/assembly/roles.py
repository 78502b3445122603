"""Every route's role, composed from the three contexts' own tables (docs/keys.md): what a host hands its app."""

from __future__ import annotations

from zengram.chat.api.roles import CHAT_ROUTE_ROLES
from zengram.documents.api.roles import KB_ROUTE_ROLES
from zengram.kernel.keys import Role
from zengram.memory.api.roles import MEMORY_ROUTE_ROLES
from zengram.web.access import RouteRoles

ROUTE_ROLES: dict[tuple[str, str], Role] = {**MEMORY_ROUTE_ROLES, **KB_ROUTE_ROLES, **CHAT_ROUTE_ROLES}
HOST_ROUTE_ROLES = RouteRoles(ROUTE_ROLES)
