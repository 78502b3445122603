"""The web dashboard's static files (shared/zengram/dashboard), served at /dashboard/ by the embedded server.

The files hold no data and no secret: the page asks for an API key and calls the public API with it, like any
client, so the key middleware lets these paths through (`DASHBOARD_PREFIX`) and the API routes keep their check.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.requests import Request
from starlette.staticfiles import StaticFiles

DASHBOARD_PREFIX = "/dashboard"
DASHBOARD_FILES = Path(__file__).resolve().parent.parent / "dashboard"


def mount_dashboard(app: FastAPI) -> None:
    """Plain Starlette routes: the API's dependencies (role check, rate limit) are for the API's own routes."""

    async def to_the_dashboard(_: Request) -> RedirectResponse:
        return RedirectResponse(f"{DASHBOARD_PREFIX}/")

    app.add_route(DASHBOARD_PREFIX, to_the_dashboard, include_in_schema=False)
    app.mount(f"{DASHBOARD_PREFIX}/", StaticFiles(directory=DASHBOARD_FILES, html=True), name="dashboard")
