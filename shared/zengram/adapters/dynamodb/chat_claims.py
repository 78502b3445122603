"""The AWS `ClaimStore` (chat/ports.py): a subject's claims in its own partition (`CLAIMS#<project>#<subject>`,
sorted by when each was made), so listing them is one strongly consistent query; a pointer item per claim
(`CLAIM#<project>`, sort key the id) says where a claim lives, for reads by id. Both are written in one
transaction."""

from __future__ import annotations

from typing import Any

from zengram.adapters.dynamodb.chat_items import (
    BODY,
    REVISION,
    ChatTable,
    WriteConflict,
    key,
    part,
    position,
    put_if_absent,
    replace_at_revision,
)
from zengram.adapters.dynamodb.items import Item, number, string
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import make_client
from zengram.chat.domain.claims import Claim
from zengram.kernel.errors import Conflict, StaleRevision

HOME = "home"  # the pointer's attribute naming the claim item's sort key


def claims_partition(project_id: str, subject_id: str) -> str:
    return f"CLAIMS#{part(project_id)}#{part(subject_id)}"


def pointers_partition(project_id: str) -> str:
    return f"CLAIM#{part(project_id)}"


def _item(claim: Claim) -> Item:
    return {**key(claims_partition(claim.project_id, claim.subject_id), position(claim.created_at, claim.id)),
            BODY: string(claim.model_dump_json()), REVISION: number(claim.revision)}


def _claim(item: Item) -> Claim:
    return Claim.model_validate_json(item[BODY]["S"])


class DynamoDBClaimStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = ChatTable(client or make_client(region=region), table_name)

    def add(self, claim: Claim) -> Claim:
        item = _item(claim)
        pointer = {**key(pointers_partition(claim.project_id), claim.id), "subject_pk": item[PK], HOME: item[SK]}
        try:
            self._table.write([put_if_absent(pointer), put_if_absent(item)])
        except WriteConflict:
            raise Conflict(f"claim {claim.id} already exists") from None
        return claim

    def get(self, project_id: str, claim_id: str) -> Claim | None:
        pointer = self._table.get(key(pointers_partition(project_id), claim_id))
        if pointer is None:
            return None
        item = self._table.get({PK: pointer["subject_pk"], SK: pointer[HOME]})
        return _claim(item) if item is not None else None

    def of_subject(self, project_id: str, subject_id: str) -> list[Claim]:
        return [_claim(item) for item in self._table.partition(claims_partition(project_id, subject_id))]

    def save(self, claim: Claim, expected_revision: int) -> Claim:
        try:
            self._table.write([replace_at_revision(_item(claim), expected_revision)])
        except WriteConflict:
            raise StaleRevision(f"claim {claim.id} changed meanwhile (or does not exist); read it again") from None
        return claim
