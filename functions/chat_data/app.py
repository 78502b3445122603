"""The chat layer's data (/api/v1: subject memories, records, the 501 of what it does not offer) as one Lambda."""

from zengram.chat.api.audit import audited
from zengram.chat.api.groups import data_routers
from zengram.serverless.handlers import create_function_app, http_handler

app = audited(create_function_app(data_routers()))
handler = http_handler(app)
