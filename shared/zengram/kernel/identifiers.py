"""How a client (tenant) is named: the pattern every client_id follows, and the client every tenant shares.

A module of its own, without models, so what only checks identities (API keys, the authorizer, the middleware)
does not build the memory models when a function starts."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

GLOBAL_CLIENT = "global"
CLIENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
ClientId = Annotated[str, StringConstraints(pattern=CLIENT_PATTERN)]
