"""The AWS `ClientStore`: fingerprints as items of the records table, all in one partition (`pk = CLIENTS`,
`sk = <client_id>`), so listing them is one strongly consistent Query in client_id order (infra/README.md)."""

from __future__ import annotations

from typing import Any

from zengram.adapters.dynamodb.items import AttributeValue, Item, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import DynamoTable, make_client
from zengram.adapters.dynamodb.writes import Expression, WriteOp
from zengram.kernel.timestamps import parse_timestamp
from zengram.memory.domain.clients import ClientFingerprint

CLIENTS_PARTITION = "CLIENTS"
CLIENT_KIND = "CLIENT"
_LISTS = ("aliases", "people", "domains", "keywords")
_PAGE = 100


def client_key(client_id: str) -> Item:
    return {PK: string(CLIENTS_PARTITION), SK: string(client_id)}


def _string_list(values: list[str]) -> AttributeValue:
    return {"L": [string(value) for value in values]}


def fingerprint_from_item(item: Item) -> ClientFingerprint:
    return ClientFingerprint(
        client_id=item[SK]["S"],
        name=item["name"]["S"] if "name" in item else None,
        **{name: [element["S"] for element in item[name]["L"]] for name in _LISTS},
        created_at=parse_timestamp(item["created_at"]["S"]),
        updated_at=parse_timestamp(item["updated_at"]["S"]),
        revision=int(item["revision"]["N"]),
    )


def upsert_fingerprint(fingerprint: ClientFingerprint) -> WriteOp:
    """One UpdateItem, atomic in DynamoDB: the first writer sets created_at, every writer adds one to revision."""
    expression = Expression()
    assignments = [
        expression.equals("kind", string(CLIENT_KIND)),
        *(expression.equals(name, _string_list(getattr(fingerprint, name))) for name in _LISTS),
        expression.equals("updated_at", timestamp(fingerprint.updated_at)),
        f"{expression.name('created_at')} = if_not_exists({expression.name('created_at')}, "
        f"{expression.value(timestamp(fingerprint.created_at))})",
    ]
    if fingerprint.name is not None:
        assignments.append(expression.equals("name", string(fingerprint.name)))
    update = f"SET {', '.join(assignments)} ADD {expression.name('revision')} {expression.value({'N': '1'})}"
    if fingerprint.name is None:
        update += f" REMOVE {expression.name('name')}"
    return WriteOp("Update", {"Key": client_key(fingerprint.client_id), **expression.params(UpdateExpression=update)})


class DynamoDBClientStore:
    """Thread-safe like the record store: all state is in the table."""

    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = DynamoTable(client or make_client(region=region), table_name)

    def put(self, fingerprint: ClientFingerprint) -> ClientFingerprint:
        return fingerprint_from_item(self._table.update_returning(upsert_fingerprint(fingerprint)))

    def get(self, client_id: str) -> ClientFingerprint | None:
        item = self._table.get(client_key(client_id))
        return fingerprint_from_item(item) if item is not None else None

    def delete(self, client_id: str) -> bool:
        response = self._table.client.delete_item(TableName=self._table.name, Key=client_key(client_id),
                                                  ReturnValues="ALL_OLD")
        return bool(response.get("Attributes"))

    def list_all(self) -> list[ClientFingerprint]:
        query = {"KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": PK},
                 "ExpressionAttributeValues": {":pk": string(CLIENTS_PARTITION)}, "ConsistentRead": True}
        return [fingerprint_from_item(item) for item in self._table.query(query, page_size=_PAGE)]
