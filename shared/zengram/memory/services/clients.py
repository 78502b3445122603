"""Client fingerprints: managing them, and resolving which client a memory is about (semantics.md)."""

from __future__ import annotations

import time
from collections.abc import Callable

from zengram.kernel.content import Scrubber
from zengram.kernel.errors import InvalidInput, NotFound
from zengram.kernel.keys import TenantScope
from zengram.kernel.ports import Clock
from zengram.memory.domain.client_resolution import ClientTerms, resolve_client
from zengram.memory.domain.clients import ClientDraft, ClientFingerprint
from zengram.memory.domain.models import GLOBAL_CLIENT
from zengram.memory.ports import ClientStore
from zengram.memory.services.cache import Expiring


class ClientService:
    """CRUD over the `ClientStore`, plus `resolve`, which reads fingerprints from an in-process cache.

    The cache lives `cache_seconds` (a store write in another process shows up after at most that long); this
    process's own writes drop it at once, so a PUT is used by the very next POST /memory here.
    """

    def __init__(
        self,
        store: ClientStore,
        clock: Clock,
        *,
        scrubber: Scrubber,
        cache_seconds: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._clock = clock
        self._scrubber = scrubber
        self._known = Expiring(self._load_known, cache_seconds, monotonic)

    def put(self, client_id: str, draft: ClientDraft, scope: TenantScope = TenantScope.EVERYONE) -> ClientFingerprint:
        """Creates or replaces the whole fingerprint (revision 1 means it was created); its words are scrubbed
        of credentials like a memory's content. `scope`: the caller's clients, here and below (Forbidden outside
        them)."""
        scope.require(client_id)
        if client_id == GLOBAL_CLIENT:
            raise InvalidInput("client_id", f"'{GLOBAL_CLIENT}' is the default tenant, not a client to describe")
        now = self._clock.now()
        words = self._scrubber.scrub_value(draft.model_dump())
        stored = self._store.put(ClientFingerprint(client_id=client_id, **words, created_at=now, updated_at=now))
        self.invalidate()
        return stored

    def get(self, client_id: str, scope: TenantScope = TenantScope.EVERYONE) -> ClientFingerprint:
        scope.require(client_id)
        fingerprint = self._store.get(client_id)
        if fingerprint is None:
            raise _client_not_found(client_id)
        return fingerprint

    def delete(self, client_id: str, scope: TenantScope = TenantScope.EVERYONE) -> None:
        """Raises NotFound for an unknown client, so a typo in the id is not taken for success."""
        scope.require(client_id)
        existed = self._store.delete(client_id)
        self.invalidate()
        if not existed:
            raise _client_not_found(client_id)

    def list_all(self, scope: TenantScope = TenantScope.EVERYONE) -> list[ClientFingerprint]:
        return [fingerprint for fingerprint in self._store.list_all() if scope.allows(fingerprint.client_id)]

    def known_clients(self) -> list[ClientFingerprint]:
        """Every fingerprint, from the cache (what entity extraction reads on each write)."""
        return self._known.get()[0]

    def resolve(self, text: str, among: frozenset[str] | None = None) -> str:
        """The one known client `text` is about, else "global"; with `among` (a key's clients), only those
        clients are candidates."""
        candidates = self._known.get()[1]
        if among is not None:
            candidates = [client for client in candidates if client.client_id in among]
        return resolve_client(text, candidates)

    def invalidate(self) -> None:
        self._known.invalidate()

    def _load_known(self) -> tuple[list[ClientFingerprint], list[ClientTerms]]:
        fingerprints = self._store.list_all()
        return fingerprints, [ClientTerms.of(fingerprint) for fingerprint in fingerprints]


def _client_not_found(client_id: str) -> NotFound:
    return NotFound(f"client {client_id} not found")
