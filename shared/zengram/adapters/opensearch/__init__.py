"""Amazon OpenSearch Service / Serverless or self-hosted OpenSearch as the `SearchIndex`.

Importing this package loads neither opensearch-py nor botocore; building an `OpenSearchIndex` does.
"""

from zengram.adapters.opensearch.bulk import BulkWriteError, OpenSearchIndexError
from zengram.adapters.opensearch.client import ClientOptions, OpenSearchOptions, OpenSearchUnavailable, RetryPolicy
from zengram.adapters.opensearch.mapping import MAPPING_VERSION
from zengram.adapters.opensearch.search_index import OpenSearchIndex

__all__ = ["MAPPING_VERSION", "BulkWriteError", "ClientOptions", "OpenSearchIndex", "OpenSearchIndexError",
           "OpenSearchOptions", "OpenSearchUnavailable", "RetryPolicy"]
