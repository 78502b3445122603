"""The scheduled index repair sweep (EventBridge rule → this function)."""

from zengram.serverless.jobs import repair_handler

handler = repair_handler()
