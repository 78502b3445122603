"""The HTTP API's Lambda authorizer: verifies the caller's key at the edge and passes its scope to the functions."""

from zengram.serverless.handlers import authorizer_handler

handler = authorizer_handler()
