"""Scoped API keys, managed by an admin key: create (the key is shown once), list, revoke."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from zengram.kernel.keys import ALL_CLIENTS, ApiKey, KeyDraft
from zengram.kernel.timestamps import format_timestamp
from zengram.memory.api.deps import KeyServiceDep
from zengram.memory.api.schemas.keys import KEY_NOT_FOUND, ApiKeyBody, ApiKeyListBody, CreatedKeyBody, RevokedKeyBody
from zengram.web.schemas import ERROR_RESPONSES

router = APIRouter(tags=["admin"], responses=ERROR_RESPONSES)


def key_body(key: ApiKey) -> ApiKeyBody:
    return ApiKeyBody(id=key.id, name=key.name, role=key.role.value,
                      clients=key.clients if key.clients is not None else ALL_CLIENTS,
                      created_at=format_timestamp(key.created_at),
                      revoked_at=format_timestamp(key.revoked_at) if key.revoked_at else None)


@router.post("/admin/keys", status_code=201, response_model=CreatedKeyBody)
def create_key(draft: KeyDraft, keys: KeyServiceDep) -> CreatedKeyBody:
    """Mints a key for `clients` ("all", or a list of client_ids) with `role` read, write or admin. The answer's
    `key` is the only time the key is shown."""
    minted = keys.create(draft)
    return CreatedKeyBody(**key_body(minted.record).model_dump(), key=minted.key)


@router.get("/admin/keys", response_model=ApiKeyListBody)
def list_keys(keys: KeyServiceDep) -> ApiKeyListBody:
    """Every scoped key, oldest first, revoked ones included (the bootstrap BRAIN_API_KEY is not listed)."""
    found = keys.list_all()
    return ApiKeyListBody(count=len(found), keys=[key_body(key) for key in found])


@router.delete("/admin/keys/{key_id}", response_model=RevokedKeyBody, responses=KEY_NOT_FOUND)
def revoke_key(key_id: Annotated[str, Path(description="The key's id (from the list)")],
               keys: KeyServiceDep) -> RevokedKeyBody:
    """Revokes the key at once; revoking it again answers the same."""
    revoked = keys.revoke(key_id)
    assert revoked.revoked_at is not None
    return RevokedKeyBody(id=revoked.id, revoked=True, revoked_at=format_timestamp(revoked.revoked_at))
