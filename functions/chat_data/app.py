"""The chat layer's data (/api/v1: subject memories, records, the 501 of what it does not offer) as one Lambda.
Each of its routers is built on the first request under its paths, not at init (`lazy_data_routers`)."""

from zengram.chat.api.audit import audited
from zengram.chat.api.groups import lazy_data_routers
from zengram.serverless.handlers import create_function_app, http_handler

app = audited(create_function_app([], lazy_routers=lazy_data_routers()))
handler = http_handler(app)
