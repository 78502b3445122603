"""The document knowledge base (Agent Brain-style): files split into chunks, a code graph, five query modes.

Pure: no I/O. The services in `zengram.documents.services` put these rules to work through the ports in
`zengram.documents.ports`.
"""
