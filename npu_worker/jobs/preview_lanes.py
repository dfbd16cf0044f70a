"""The preview lanes: engine threads beside the engine thread, for previews (`--preview-lanes`).

Each lane runs on its own instance of the engine (`engine.lane()`: espeak, another instance of the C
library in its own child), so a preview that arrives while another is being made starts at once. Each
thread loads its own instance (espeak: 0.3–0.4 s): loaded on the engine thread in turn, they kept it from
its first requests after `/ready` (0.36 s with two lanes, 1.1 s with four)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..engine.base import Engine

log = logging.getLogger(__name__)


class PreviewLanes:
    """`count` engine threads in all (the engine thread is the first): `serve(engine)` runs on each
    lane's thread once its instance has loaded, until the shutdown (`stopping()`)."""

    def __init__(self, count: int, serve: Callable[[Engine], None], stopping: Callable[[], bool]) -> None:
        self.count = count
        self.threads: list[threading.Thread] = []
        self._serve = serve
        self._stopping = stopping
        self._lock = threading.Lock()
        self._open = 0  # lanes whose engine instance has loaded

    def open(self, engine: Engine) -> None:
        """Start the lanes' threads, where `engine` has instances to give (`lane()`)."""
        make = getattr(engine, "lane", None)
        if self.count < 2 or not callable(make):
            return
        for number in range(2, self.count + 1):
            lane = threading.Thread(
                target=self._run, args=(make, number), name=f"npu-worker-engine-{number}", daemon=True
            )
            lane.start()
            self.threads.append(lane)

    def _run(self, make: Callable[[], Engine], number: int) -> None:
        """A lane's thread: its engine instance loaded, then previews until the shutdown."""
        try:
            engine = make()
            engine.load()
        except Exception as exc:  # noqa: BLE001 - the other lanes still serve everything
            log.warning("no preview lane %d: %s: %s", number, type(exc).__name__, exc)
            return
        if self._stopping():  # loaded once the shutdown began: said open, after the shutdown's lines
            engine.close()
            return
        with self._lock:
            self._open += 1
            instances = 1 + self._open
        log.info("preview lanes: %d engine instances, previews run on another while one is busy", instances)
        self._serve(engine)
