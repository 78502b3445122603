"""Scoped API keys: minted, listed and revoked by an admin; verified on every request (docs/keys.md)."""

from __future__ import annotations

from zengram.kernel.errors import NotFound
from zengram.kernel.keys import ApiKey, KeyDraft, MintedKey, Principal, is_key_id, mint_key, verify_key
from zengram.kernel.ports import Clock
from zengram.memory.ports import ApiKeyStore


class KeyService:
    def __init__(self, store: ApiKeyStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def create(self, draft: KeyDraft) -> MintedKey:
        """A new key; its text is in the answer only, the store keeps a salted hash."""
        minted = mint_key(draft, self._clock.now())
        self._store.create(minted.record)
        return minted

    def list_all(self) -> list[ApiKey]:
        return self._store.list_all()

    def revoke(self, key_id: str) -> ApiKey:
        """Effective at once: the next request with the key is a 401. Revoking again changes nothing."""
        revoked = self._store.revoke(key_id, self._clock.now()) if is_key_id(key_id) else None
        if revoked is None:
            raise NotFound(f"api key {key_id} not found")
        return revoked

    def authenticate(self, presented: str) -> Principal | None:
        """The principal of a scoped key (one store read, a constant-time compare), else None."""
        return verify_key(presented, self._store.get)

