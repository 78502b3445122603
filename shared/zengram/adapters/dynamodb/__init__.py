"""AWS host: DynamoDB as the record store. boto3 is imported lazily, when a store is constructed."""

from zengram.adapters.dynamodb.records import DynamoDBRecordStore
from zengram.adapters.dynamodb.schema import TABLE_DEFINITION, ensure_table

__all__ = ["TABLE_DEFINITION", "DynamoDBRecordStore", "ensure_table"]
