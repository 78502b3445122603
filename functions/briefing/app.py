"""The session briefing (GET /briefing), the memory health dashboard (GET /stats) and upstream's collection
registry (/collections: the default collection's counts are the index's, as /stats reports them) as one function."""

from zengram.memory.api import briefing, collections, stats
from zengram.serverless.handlers import create_function_app, http_handler

app = create_function_app([briefing.router, stats.router, collections.router])
handler = http_handler(app)
