"""Client fingerprints: the names, people, domains and keywords that let POST /memory resolve a client_id."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from zengram.kernel.identifiers import CLIENT_PATTERN
from zengram.memory.api.deps import ClientServiceDep
from zengram.memory.api.schemas.clients import CLIENT_NOT_FOUND, ClientBody, ClientDeletedBody, ClientListBody
from zengram.memory.domain.clients import ClientDraft, ClientFingerprint
from zengram.web.access import ScopeDep
from zengram.web.schemas import ERROR_RESPONSES

router = APIRouter(tags=["clients"], responses=ERROR_RESPONSES)

ClientIdPath = Annotated[str, Path(pattern=CLIENT_PATTERN, description="Client slug, e.g. acme-corp")]


def client_body(fingerprint: ClientFingerprint) -> ClientBody:
    return ClientBody.model_validate(fingerprint.model_dump(mode="json"))


@router.put("/clients/{client_id}", status_code=200, response_model=ClientBody,
            responses={201: {"model": ClientBody, "description": "Created"}})
def put_client(client_id: ClientIdPath, draft: ClientDraft, clients: ClientServiceDep, scope: ScopeDep,
               response: Response) -> ClientBody:
    """Creates (201) or replaces (200) the whole fingerprint."""
    stored = clients.put(client_id, draft, scope)
    if stored.revision == 1:
        response.status_code = 201
    return client_body(stored)


@router.get("/clients", response_model=ClientListBody)
def list_clients(clients: ClientServiceDep, scope: ScopeDep) -> ClientListBody:
    fingerprints = clients.list_all(scope)
    return ClientListBody(count=len(fingerprints), clients=[client_body(f) for f in fingerprints])


@router.get("/clients/{client_id}", response_model=ClientBody, responses=CLIENT_NOT_FOUND)
def get_client(client_id: ClientIdPath, clients: ClientServiceDep, scope: ScopeDep) -> ClientBody:
    return client_body(clients.get(client_id, scope))


@router.delete("/clients/{client_id}", response_model=ClientDeletedBody, responses=CLIENT_NOT_FOUND)
def delete_client(client_id: ClientIdPath, clients: ClientServiceDep, scope: ScopeDep) -> ClientDeletedBody:
    """Removes the fingerprint (memories already stored keep their client_id); 404 when there is none."""
    clients.delete(client_id, scope)
    return ClientDeletedBody(client_id=client_id, deleted=True)
