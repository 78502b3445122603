"""The AWS `CollectionStore`: registered collections as items of the records table, all in one partition
(`pk = COLLECTIONS`, `sk = <name>`), so listing them is one strongly consistent Query in name order."""

from __future__ import annotations

from typing import Any

from zengram.adapters.dynamodb.items import Item, number, string, timestamp
from zengram.adapters.dynamodb.schema import PK, SK
from zengram.adapters.dynamodb.table import DynamoTable, WriteConflict, make_client
from zengram.adapters.dynamodb.writes import WriteOp
from zengram.kernel.timestamps import parse_timestamp
from zengram.memory.domain.collections import Collection

COLLECTIONS_PARTITION = "COLLECTIONS"
_PAGE = 100


def collection_key(name: str) -> Item:
    return {PK: string(COLLECTIONS_PARTITION), SK: string(name)}


def _from_item(item: Item) -> Collection:
    return Collection(name=item[SK]["S"], description=item["description"]["S"] if "description" in item else None,
                      dimensions=int(item["dimensions"]["N"]), created_at=parse_timestamp(item["created_at"]["S"]))


class DynamoDBCollectionStore:
    def __init__(self, table_name: str, *, region: str | None = None, client: Any | None = None) -> None:
        self._table = DynamoTable(client or make_client(region=region), table_name)

    def create(self, collection: Collection) -> bool:
        item: Item = {**collection_key(collection.name), "kind": string("COLLECTION"),
                      "dimensions": number(collection.dimensions), "created_at": timestamp(collection.created_at)}
        if collection.description is not None:
            item["description"] = string(collection.description)
        try:
            self._table.write([WriteOp("Put", {"Item": item, "ConditionExpression": f"attribute_not_exists({PK})"})])
        except WriteConflict:
            return False
        return True

    def get(self, name: str) -> Collection | None:
        item = self._table.get(collection_key(name))
        return _from_item(item) if item is not None else None

    def delete(self, name: str) -> bool:
        response = self._table.client.delete_item(TableName=self._table.name, Key=collection_key(name),
                                                  ReturnValues="ALL_OLD")
        return bool(response.get("Attributes"))

    def list_all(self) -> list[Collection]:
        query = {"KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": PK},
                 "ExpressionAttributeValues": {":pk": string(COLLECTIONS_PARTITION)}, "ConsistentRead": True}
        return [_from_item(item) for item in self._table.query(query, page_size=_PAGE)]
