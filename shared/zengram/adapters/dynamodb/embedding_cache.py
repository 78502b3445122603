"""The embedding cache on DynamoDB, in the documents' table: items `EMBED` / `<model id>:<sha256 of the text>` with
the float32 vector as binary `v`. One partition, read by key in batches; `stats` and `clear` walk it (rare,
operator-driven calls)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zengram.adapters.dynamodb.documents import PK, SK, _key, _Table

if TYPE_CHECKING:
    from zengram.documents.ports import Vectors

PARTITION = "EMBED"


class DynamoDBEmbeddingCache:
    def __init__(self, table: _Table) -> None:
        self._table = table

    def get(self, keys: Sequence[str]) -> dict[str, Vectors]:
        items = self._table.get_many([_key(PARTITION, key) for key in dict.fromkeys(keys)])
        return {item[SK]["S"]: np.frombuffer(item["v"]["B"], dtype=np.float32) for item in items}

    def put(self, vectors: dict[str, Vectors]) -> None:
        self._table.batch(puts=[{**_key(PARTITION, key), "v": {"B": np.asarray(vector, dtype=np.float32).tobytes()}}
                                for key, vector in vectors.items()])

    def stats(self) -> tuple[int, int]:
        entries = size = 0
        for item in self._table.partition(PARTITION):
            entries += 1
            size += len(item[SK]["S"]) + len(item["v"]["B"])
        return entries, size

    def clear(self) -> int:
        keys = [{PK: item[PK], SK: item[SK]} for item in self._table.partition(
            PARTITION, ProjectionExpression="#pk, #sk", ExpressionAttributeNames={"#sk": SK})]
        self._table.batch(deletes=keys)
        return len(keys)
