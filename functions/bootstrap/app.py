"""The SearchIndex custom resource: creates the search index for the configured embedding model at deploy time."""

from zengram.serverless.handlers import index_bootstrap_handler

handler = index_bootstrap_handler()
