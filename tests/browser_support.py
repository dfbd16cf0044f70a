"""Real-browser test support: a worker on its own thread and event loop, and headless Debian Chromium.

The sync Playwright API drives the browser from the test's thread, so the worker cannot share that
thread's loop: it runs on a thread of its own (real TCP socket, real app from `build_app`) and is
stopped through that loop, so every test leaves no server, browser or thread behind.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from npu_worker.app import build_app
from npu_worker.config import Settings
from tests.timing import seconds

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--autoplay-policy=no-user-gesture-required",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def require_chromium() -> None:
    """Skip (with the reason) where the Debian chromium or the Playwright package is missing."""
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (Debian package `chromium`)")


class WorkerThread:
    """`build_app(settings, engine)` served on 127.0.0.1:<free port> from a background thread."""

    def __init__(self, settings: Settings, engine: Any) -> None:
        self._settings = settings
        self._engine = engine
        self.app: web.Application | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="worker-loop", daemon=True)
        self._runner: web.AppRunner | None = None
        self.url = ""

    def start(self) -> WorkerThread:
        self._thread.start()
        port = asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(seconds(30))
        self.url = f"http://127.0.0.1:{port}/"
        return self

    async def _serve(self) -> int:
        # build_app is a synchronous factory that creates the state dir: off the loop, as `serve` does.
        self.app = await asyncio.to_thread(build_app, self._settings, self._engine)
        self._runner = web.AppRunner(self.app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(self._runner.addresses[0][1])

    def stop(self) -> None:
        """Stop serving (runs the app's cleanup: scheduler and engine) and end the thread."""
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(seconds(30))
            self._runner = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(seconds(30))
        if not self._loop.is_closed():
            self._loop.close()

    def run(self, coroutine: Any) -> Any:
        """Run `coroutine` on the worker's loop (a CuttableProxy in front of it, say) and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(seconds(30))

    def health(self) -> tuple[int, dict[str, Any]]:
        """GET /health over the wire: (status code, body)."""
        try:
            with urllib.request.urlopen(self.url + "health", timeout=seconds(5)) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


@contextmanager
def serve_worker(settings: Settings, engine: Any) -> Iterator[WorkerThread]:
    worker = WorkerThread(settings, engine).start()
    try:
        yield worker
    finally:
        worker.stop()


@contextmanager
def serve_app(app: web.Application) -> Iterator[str]:
    """Any aiohttp app (a rogue worker, say) on 127.0.0.1:<free port> from its own thread and loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="app-loop", daemon=True)
    thread.start()
    runner = web.AppRunner(app, shutdown_timeout=1.0)

    async def start() -> int:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return int(runner.addresses[0][1])

    try:
        port = asyncio.run_coroutine_threadsafe(start(), loop).result(seconds(30))
        yield f"http://127.0.0.1:{port}/"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(seconds(30))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(seconds(30))
        loop.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve_static(directory: Path) -> Iterator[str]:
    """A plain static file server on another port: the page opened from an origin that is not the worker's."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="static-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(seconds(10))


@dataclass
class ConsoleWatch:
    """Console errors and uncaught page exceptions, gathered while a page runs."""

    errors: list[str] = field(default_factory=list)

    def not_network(self) -> list[str]:
        """The errors besides the browser's own log lines for failed requests (an expected 503, say)."""
        return [error for error in self.errors if "Failed to load resource" not in error]

    def attach(self, page: Any) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(f"console.error: {message.text} at {message.location}")


@contextmanager
def chromium(extra_args: Sequence[str] = ()) -> Iterator[Any]:
    """A headless Chromium (the Debian build, never Playwright's own download), closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args])
        try:
            yield browser
        finally:
            browser.close()
