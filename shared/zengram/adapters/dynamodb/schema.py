"""The table's shape (keys, GSIs) and an idempotent `ensure_table`. infra/README.md documents the design."""

from __future__ import annotations

from typing import Any

PK, SK = "pk", "sk"
CLIENT_PK, ALL_PK, CREATED_SK = "client_pk", "all_pk", "created_sk"
PENDING_PK, PENDING_SK = "pending_pk", "pending_sk"
DECAY_PK, DECAY_SK = "decay_pk", "decay_sk"
THREAD_PK = "thread_pk"

BY_CLIENT = "by-client"  # client_pk = CLIENT#<client_id>, created_sk = <created_at>#<id>: one client by time
BY_CREATED = "by-created"  # all_pk = MEMORY, created_sk: every memory by time, without a client filter
PENDING_INDEX = "pending-index"  # sparse: pending_pk/pending_sk exist only while the index lags behind
# sparse: decay_pk = DECAY#<confidence>#<shard> only on active facts/statuses, decay_sk = last access else creation
DECAY_INDEX = "decay-index"
# sparse: thread_pk = THREAD#<client_id>#<source_agent> only on live events, created_sk: a conversation in order
BY_THREAD = "by-thread"


def _string_attribute(name: str) -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": "S"}


def _key_schema(partition: str, sort: str) -> list[dict[str, str]]:
    return [{"AttributeName": partition, "KeyType": "HASH"}, {"AttributeName": sort, "KeyType": "RANGE"}]


def _index(name: str, partition: str, sort: str, projection: str) -> dict[str, Any]:
    return {"IndexName": name, "KeySchema": _key_schema(partition, sort), "Projection": {"ProjectionType": projection}}


# `create_table` arguments besides TableName; the CloudFormation snippet in infra/README.md says the same.
TABLE_DEFINITION: dict[str, Any] = {
    "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [
        _string_attribute(name)
        for name in (PK, SK, CLIENT_PK, ALL_PK, CREATED_SK, PENDING_PK, PENDING_SK, DECAY_PK, DECAY_SK, THREAD_PK)
    ],
    "KeySchema": _key_schema(PK, SK),
    "GlobalSecondaryIndexes": [
        _index(BY_CLIENT, CLIENT_PK, CREATED_SK, "ALL"),
        _index(BY_CREATED, ALL_PK, CREATED_SK, "ALL"),
        # Keys only: the indexer re-reads pending memories with strongly consistent reads anyway.
        _index(PENDING_INDEX, PENDING_PK, PENDING_SK, "KEYS_ONLY"),
        # Keys only: /stats just counts (Select=COUNT) the decayed memories of each partition.
        _index(DECAY_INDEX, DECAY_PK, DECAY_SK, "KEYS_ONLY"),
        # All: a memory's nearest turns, whole, in one small Query (index-time conversation context).
        _index(BY_THREAD, THREAD_PK, CREATED_SK, "ALL"),
    ],
}


def error_code(error: BaseException) -> str | None:
    """The AWS error code of a botocore ClientError (duck-typed, so botocore need not be imported here)."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code is not None else None


def ensure_table(client: Any, table_name: str) -> None:
    """Creates the table when it is missing, waits until it is active, then checks it has our keys and GSIs."""
    try:
        client.create_table(TableName=table_name, **TABLE_DEFINITION)
    except Exception as error:
        if error_code(error) != "ResourceInUseException":  # already there (or being created): fine
            raise
    client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    verify_table(client, table_name)


def verify_table(client: Any, table_name: str) -> None:
    """Raises a readable error when a "bring your own" table lacks the key schema or a GSI this adapter uses."""
    table = client.describe_table(TableName=table_name)["Table"]
    problems = []
    if table["KeySchema"] != TABLE_DEFINITION["KeySchema"]:
        problems.append(f"key schema must be {PK} (HASH) + {SK} (RANGE)")
    present = {index["IndexName"]: index for index in table.get("GlobalSecondaryIndexes", [])}
    for wanted in TABLE_DEFINITION["GlobalSecondaryIndexes"]:
        if not _index_fits(present.get(wanted["IndexName"]), wanted):
            problems.append(f"GSI {wanted['IndexName']} missing, keyed differently or projecting too little")
    if problems:
        raise RuntimeError(f"DynamoDB table {table_name} does not fit Zengram: {'; '.join(problems)} "
                           "(see 'DynamoDB table design' in infra/README.md)")


def _index_fits(present: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
    """Same keys, and every attribute projected wherever this adapter reads items from the index."""
    if present is None or present["KeySchema"] != wanted["KeySchema"]:
        return False
    return bool(wanted["Projection"]["ProjectionType"] != "ALL" or present["Projection"]["ProjectionType"] == "ALL")
