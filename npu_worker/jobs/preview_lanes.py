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
        self._loading: list[Engine] = []  # instances still loading: `stop_loading` gives them up

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
            engine = self._load(make)
        except Exception as exc:  # noqa: BLE001 - the other lanes still serve everything
            if not self._stopping():  # a load the shutdown gave up failed no lane
                log.warning("no preview lane %d: %s: %s", number, type(exc).__name__, exc)
            return
        if (
            engine is None or self._stopping()
        ):  # loaded once the shutdown began: said open, after the shutdown's lines
            if engine is not None:
                engine.close()
            return
        with self._lock:
            self._open += 1
            instances = 1 + self._open
        log.info("preview lanes: %d engine instances, previews run on another while one is busy", instances)
        self._serve(engine)

    def _load(self, make: Callable[[], Engine]) -> Engine | None:
        """The lane's instance, loaded; None if the shutdown began first. Listed as loading meanwhile."""
        engine = make()
        with self._lock:
            self._loading.append(engine)
        try:
            if self._stopping():  # `stop_loading` may have run before the listing: nothing to give up
                return None
            engine.load()
            return engine
        finally:
            with self._lock:
                self._loading.remove(engine)

    def stop_loading(self) -> None:
        """The shutdown began: a lane's instance still loading gives up (`cancel_load`, espeak's child
        killed in its start) instead of holding the runner's join, and the worker's exit, until loaded:
        an idle worker stopped just after `/ready` waited for its lane's child to start (0.6–4 s)."""
        with self._lock:
            loading = list(self._loading)
        for engine in loading:
            cancel = getattr(engine, "cancel_load", None)
            if callable(cancel):
                cancel()
