"""Side by side, one run: mem0 OSS, Zengram's HTTP API and an exact numpy scan on the same LoCoMo workload.

`make bench-peers` (see README.md here). Nothing in this package imports zengram at import time: the mem0
side runs in its own virtualenv.
"""
