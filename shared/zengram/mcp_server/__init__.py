"""`zengram-mcp`: Zengram's MCP tools over stdio or streamable HTTP, backed by the Python SDK.

Named `mcp_server` so it never shadows the `mcp` SDK package it is built on.
"""
