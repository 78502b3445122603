"""Whose data a chat-layer request touches: a project (one of Zengram's clients) and, within it, a subject.

A subject lives under exactly one project, and a project is a client (tenant): a scoped API key reaches the
subjects of its clients only (docs/keys.md, "The chat layer"). The project of a request is named by the
`x-mnx-project-id` header, else implied by the key.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import StringConstraints

from zengram.kernel.errors import InvalidInput
from zengram.kernel.identifiers import CLIENT_PATTERN, GLOBAL_CLIENT
from zengram.kernel.keys import TenantScope

PROJECT_HEADER = "x-mnx-project-id"
# Subject and chat ids: what Mnexium's clients send (user_123, subj_…, UUIDs, e-mail addresses), nothing that needs
# escaping in a URL, a header or a storage key.
NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:@+=-]{0,199}$"
SubjectId = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
ChatId = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
ProjectId = Annotated[str, StringConstraints(pattern=CLIENT_PATTERN)]


def resolve_project(scope: TenantScope, asked: str | None) -> str:
    """The project of a request: the one asked for (it must be one of the key's clients), else the key's only
    client, else `global` when the key may use it; a key of several clients without `global` must say which."""
    if asked is not None:
        scope.require(asked, field=PROJECT_HEADER)
        return asked
    if scope.clients is not None and len(scope.clients) == 1:
        return next(iter(scope.clients))
    if scope.allows(GLOBAL_CLIENT):
        return GLOBAL_CLIENT
    raise InvalidInput(PROJECT_HEADER, f"required: this API key has {len(scope.clients or ())} clients "
                                       f"({', '.join(scope.sorted_clients() or [])}); name the project to use")


def new_id(prefix: str) -> str:
    """`<prefix>_<32 hex>`: the id shapes Mnexium's clients know (mem_…, rec_…, sp_…)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def new_subject_id() -> str:
    return new_id("subj")
