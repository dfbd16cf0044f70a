"""Typed aiohttp AppKeys: the only way views reach shared state (no module-level globals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from .config import Settings
from .protocol import Limits

if TYPE_CHECKING:  # the job core (and numpy) load when the app starts, not when it is imported
    from .jobs.scheduler import Scheduler

SETTINGS_KEY = web.AppKey("settings", Settings)
SCHEDULER_KEY: web.AppKey[Scheduler] = web.AppKey("scheduler")
LIMITS_KEY = web.AppKey("limits", Limits)
