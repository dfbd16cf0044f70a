"""Typed aiohttp AppKeys: the only way views reach shared state (no module-level globals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from .config import Settings
from .protocol import Limits

if TYPE_CHECKING:  # the job core (and numpy) load when the app starts, not when it is imported
    from .jobs.scheduler import Scheduler
    from .jobs.subscription import Subscription

SETTINGS_KEY = web.AppKey("settings", Settings)
SCHEDULER_KEY: web.AppKey[Scheduler] = web.AppKey("scheduler")
LIMITS_KEY = web.AppKey("limits", Limits)
# The NDJSON streams open now (their subscriptions): ended at shutdown once nothing more will come.
NDJSON_STREAMS_KEY: web.AppKey[set[Subscription]] = web.AppKey("ndjson_streams")
