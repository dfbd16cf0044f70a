"""Typed aiohttp AppKeys: the only way views reach shared state (no module-level globals)."""

from __future__ import annotations

from aiohttp import web

from .config import Settings
from .jobs.scheduler import Scheduler
from .protocol import Limits

SETTINGS_KEY = web.AppKey("settings", Settings)
SCHEDULER_KEY = web.AppKey("scheduler", Scheduler)
LIMITS_KEY = web.AppKey("limits", Limits)
