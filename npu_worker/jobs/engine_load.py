"""The engine thread's first work, split out of `runner.py` (`EngineLoad`, `Runner`'s base): the engine
loaded, the settings checked against it, its cancel attached, the preview lanes opened; and what callers
are told of the load meanwhile (`/health`'s `load_phase`, a failed or given-up load).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.base import DecoderCalls, Engine, EngineInfo
from ..protocol import ModelLoadError, WorkerError
from .audio_handover import URGENT_AUDIO_SECONDS

if TYPE_CHECKING:
    from .admission import Admission
    from .preview_lanes import PreviewLanes

log = logging.getLogger("npu_worker.jobs.runner")  # (the engine thread's log, as before the split)


class EngineLoad:
    """The load's state and steps; `Runner` sets the engine, admission and lanes they use."""

    engine: Engine
    admission: Admission
    lanes: PreviewLanes
    preempts: bool

    def __init__(self) -> None:
        self.info: EngineInfo | None = None
        # Checks of settings against the loaded engine (set by the scheduler); a ValueError fails the load.
        self.load_checks: list[Callable[[EngineInfo], object]] = []
        self.load_error: WorkerError | None = None
        self.load_stopped = False  # the shutdown gave the load up (`stop_loading`): nothing failed
        self.on_load_failed: Callable[[], object] | None = None  # called on this thread, once it is set
        self.on_load_ended: Callable[[], object] | None = None  # on this thread, once loaded or failed
        self.load_seconds: float | None = None
        self.urgent_samples = 0.0  # URGENT_AUDIO_SECONDS at the loaded engine's rate (read every chunk)

    @property
    def load_failure(self) -> WorkerError | None:
        """What callers are told failed (`/health` 500, kept jobs refused): `load_error`, unless the
        shutdown gave the load up, which the next start does again."""
        return None if self.load_stopped else self.load_error

    @property
    def load_phase(self) -> str | None:
        """While the engine loads: what it is doing, if it says (engines may expose `load_phase`)."""
        if self.info is not None or self.load_error is not None:
            return None
        return getattr(self.engine, "load_phase", None)

    @property
    def decoder_calls(self) -> DecoderCalls | None:
        """Once loaded: the engine's decoder calls and its CPU overflow's, if it counts them (ZipVoice's buckets)."""
        if self.info is None:
            return None
        return getattr(self.engine, "decoder_calls", None)

    def _load(self) -> bool:
        started = time.monotonic()
        try:
            self.engine.load()
            info = self.engine.info
            self._check_settings(info)
        except WorkerError as exc:
            self.load_error = exc
        except Exception as exc:  # noqa: BLE001 - any load failure is a ModelLoadError for callers
            log.exception("engine load failed")
            self.load_error = ModelLoadError(f"{type(exc).__name__}: {exc}")
        if self.load_error is not None:
            if self.admission.stopping:  # `stop_loading` asked it to give up
                self.load_stopped = True
                log.info("engine load stopped by the shutdown: %s", self.load_error)
            else:
                log.error("engine failed to load: %s", self.load_error)
                if self.on_load_failed is not None:
                    self.on_load_failed()
            return False
        self.load_seconds = round(time.monotonic() - started, 3)
        self.info, self.urgent_samples = info, URGENT_AUDIO_SECONDS * info.sample_rate
        interrupt = getattr(self.engine, "interrupt", None)
        if callable(interrupt):
            pauses = self.preempts and getattr(self.engine, "preemptible", False)
            self.admission.attach_interrupt(interrupt, preempts=pauses)
        log.info("engine ready in %.2fs: %s on %s", self.load_seconds, info.backend, info.device)
        if not self.admission.stopping:  # a shutdown during the load: no previews will come
            self.lanes.open(self.engine)
        return True

    def stop_loading(self) -> None:
        """Shutdown while the engine still loads: an engine whose load waits on something outside
        (sovits waits for its upstream, espeak for its child's start) gives up now (`cancel_load()`), so the
        process can exit; so does a preview lane's instance still loading (`PreviewLanes.stop_loading`)."""
        cancel = getattr(self.engine, "cancel_load", None)
        if callable(cancel) and self.info is None and self.load_error is None:
            cancel()
        self.lanes.stop_loading()

    def _check_settings(self, info: EngineInfo) -> None:
        for check in self.load_checks:
            try:
                check(info)
            except ValueError as exc:
                raise ModelLoadError(
                    f"a setting does not fit this engine ({info.sample_rate} Hz): {exc}"
                ) from None
