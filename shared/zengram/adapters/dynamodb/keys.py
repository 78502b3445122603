"""The AWS `ApiKeyStore`: key records as items of the records table, all in one partition (`pk = KEYS`,
`sk = <key id>`): verifying a key is one strongly consistent GetItem, listing them one Query (infra/README.md).
Items hold the salted hash, never the key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from zengram.adapters.dynamodb.items import Item, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK, error_code
from zengram.adapters.dynamodb.table import DynamoTable, make_client
from zengram.kernel.errors import Conflict
from zengram.kernel.keys import ApiKey, Role
from zengram.kernel.timestamps import parse_timestamp

KEYS_PARTITION = "KEYS"
KEY_KIND = "APIKEY"
_PAGE = 100


def key_item_key(key_id: str) -> Item:
    return {PK: string(KEYS_PARTITION), SK: string(key_id)}


def key_to_item(key: ApiKey) -> Item:
    item: Item = {
        **key_item_key(key.id), "kind": string(KEY_KIND), "name": string(key.name), "role": string(key.role.value),
        "secret_hash": string(key.secret_hash), "created_at": timestamp(key.created_at),
    }
    if key.clients is not None:  # an empty list cannot be stored as a string set, and a key never has none
        item["clients"] = {"L": [string(client) for client in key.clients]}
    if key.revoked_at is not None:
        item["revoked_at"] = timestamp(key.revoked_at)
    return item


def key_from_item(item: Item) -> ApiKey:
    return ApiKey(
        id=item[SK]["S"], name=item["name"]["S"], role=Role(item["role"]["S"]),
        clients=[value["S"] for value in item["clients"]["L"]] if "clients" in item else None,
        secret_hash=item["secret_hash"]["S"], created_at=parse_timestamp(item["created_at"]["S"]),
        revoked_at=parse_timestamp(item["revoked_at"]["S"]) if "revoked_at" in item else None,
    )


class DynamoDBApiKeyStore:
    """Stateless apart from the table; thread-safe like the boto3 client."""

    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = DynamoTable(client or make_client(region=region), table_name)

    def create(self, key: ApiKey) -> None:
        try:
            self._table.client.put_item(TableName=self._table.name, Item=key_to_item(key),
                                        ConditionExpression="attribute_not_exists(#pk)",
                                        ExpressionAttributeNames={"#pk": PK})
        except Exception as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"api key {key.id} already exists") from error
            raise

    def get(self, key_id: str) -> ApiKey | None:
        item = self._table.get(key_item_key(key_id))
        return key_from_item(item) if item is not None else None

    def list_all(self) -> list[ApiKey]:
        query = {"KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": PK},
                 "ExpressionAttributeValues": {":pk": string(KEYS_PARTITION)}, "ConsistentRead": True}
        keys = [key_from_item(item) for item in self._table.query(query, page_size=_PAGE)]
        return sorted(keys, key=lambda key: (key.created_at, key.id))

    def revoke(self, key_id: str, at: datetime) -> ApiKey | None:
        try:
            response = self._table.client.update_item(
                TableName=self._table.name, Key=key_item_key(key_id),
                # The first revocation's moment stays; the condition keeps an unknown id from creating an item.
                UpdateExpression="SET #revoked = if_not_exists(#revoked, :at)",
                ConditionExpression="attribute_exists(#pk)",
                ExpressionAttributeNames={"#revoked": "revoked_at", "#pk": PK},
                ExpressionAttributeValues={":at": timestamp(at)},
                ReturnValues="ALL_NEW",
            )
        except Exception as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return None
            raise
        return key_from_item(response["Attributes"])
