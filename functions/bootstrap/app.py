"""The SearchIndex custom resource: creates the search index for the configured embedding model at deploy time."""

from zengram.serverless.jobs import index_bootstrap_handler

handler = index_bootstrap_handler()
