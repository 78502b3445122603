"""Every router of the chat layer, for the embedded app to mount; the functions mount one group each (groups.py)."""

from __future__ import annotations

from fastapi import APIRouter

from zengram.chat.api.groups import data_routers, turn_routers

CHAT_ROUTERS: list[APIRouter] = [*turn_routers(), *data_routers()]
