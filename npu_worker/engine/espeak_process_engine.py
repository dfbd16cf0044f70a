"""The espeak engine whose synthesis runs in a child process (`espeak_process.ChildEspeak`): one child
an engine (a preview lane is a second one), the child it uses started again after its death, and the
child `serve` started before its imports taken at the first engine's load.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Iterator

import numpy as np

from ..protocol import EngineError, ModelLoadError
from . import espeak_early
from .base import SynthesisRequest
from .espeak import EspeakEngine
from .espeak_process import CLOSED, ChildEspeak

log = logging.getLogger(__name__)


def first_process() -> subprocess.Popen[bytes]:
    """An engine's child at its load: the one `serve` started before its imports (the first engine to
    load: the main one, the lanes open after it), else a new one. One that has ended before it was
    taken (killed meanwhile: the OOM killer, an operator) is replaced, as it would have been started
    then: it failed the load, and the worker served nothing until a restart."""
    early = espeak_early.take()
    if early is not None and early.poll() is not None:
        log.warning("espeak-ng's process started early had ended (%s); starting another", early.returncode)
        espeak_early.close_pipes(early)
        early = None
    if early is not None:
        return early
    try:
        return espeak_early.spawn()
    except OSError as error:
        raise ModelLoadError(f"cannot start espeak-ng's process: {error}") from error


class EspeakProcessEngine(EspeakEngine):
    """`EspeakEngine` whose synthesis runs in a child process (one per engine: a preview lane is a
    second child). Same chunks, same sample rate, same cache identity."""

    tells_sent = True  # `stream_into` takes `sent` (the runner releases the finisher's work there)
    tells_waits = True  # and `waiting` (the lane's held wake-ups of the loop go there: `hold_wake_ups`)

    def __init__(self) -> None:
        # the library's face (voices, rates): the child `serve` started early, else a new one
        super().__init__(self._first_child)  # type: ignore[arg-type]
        # The engine's close and a child's start again (another thread's: the shutdown's): a close
        # during a start closed the dead child only, and the new one made the request and ran on after
        # the engine had closed, until the worker's exit. The start itself holds no lock (one that
        # hangs never holds up the close): its child, once started, is closed if the engine closed.
        self._swapping = threading.Lock()
        self._closed = False
        self._starting: subprocess.Popen[bytes] | None = None  # the load's child, until its `READY`
        # The last `lang` `stream_into` found a voice for, as the caller spelled it (one, not a map: a
        # map keyed by spelling grows without bound): a lane's requests are mostly in one language,
        # and its check was ≈ 11 calls a request (`language_code`, `voice_names`, their str and dict
        # methods; benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 55). The voices never change.
        self._spoken_lang: str | None = None

    @property
    def child(self) -> ChildEspeak:
        library = self.library
        assert isinstance(library, ChildEspeak)
        if not library.closed:
            return library
        # it failed with an earlier section, or was found gone by a request's write
        with self._swapping:
            if self._closed:
                raise EngineError(CLOSED)
        log.warning("espeak-ng's process had ended; starting another")
        started = ChildEspeak()
        with self._swapping:
            if not self._closed:
                self._library = started
                return started
        started.close()
        raise EngineError(CLOSED)

    def _first_child(self) -> ChildEspeak:
        """The load's child (`first_process`), killed at once by `cancel_load` while it starts, and once
        ready: held as the engine's under the lock `cancel_load` takes (a cancel between its `READY` and
        the load's hold of it found no child to kill, and the warm-up of one that hung held the exit)."""
        process = first_process()
        with self._swapping:
            self._starting, cancelled = process, self._closed
        if cancelled:
            process.kill()
        try:
            started = ChildEspeak(process)  # its `READY` read, else `ModelLoadError`
        except BaseException:
            with self._swapping:
                self._starting = None
            raise
        with self._swapping:
            self._starting, cancelled = None, self._closed
            if not cancelled:
                self._library = started  # type: ignore[assignment]  # (as the load assigns it)
        if cancelled:
            started.kill()
        return started

    def cancel_load(self) -> None:
        """A shutdown during the load (`EngineLoad.stop_loading`): the child still starting is killed,
        not waited for (a lane's, started just after `/ready`, held an idle worker's exit for its whole
        start, 0.6–4 s on a busy host), and the load fails; a closed engine starts no other. A child
        already ready is in the load's warm-up request: it is killed too (one that hung there held the
        exit for that request's answer deadline, 30 s)."""
        with self._swapping:
            self._closed = True
            starting, ready = self._starting, self._library
        if starting is not None:
            starting.kill()
        elif isinstance(ready, ChildEspeak):
            ready.kill()

    def warm_up_reader(self) -> None:
        """Nothing here: the child reads the texts, and its engine's load warms its reader; the worker's
        process never loads the reader (≈ 75 ms of its CPU at a start, benchmarks/SERVER_OVERHEAD.md)."""

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        """The child's chunks; one that died while idle is found by the request's write, and another
        started and sent it, once (`ChildEspeak.chunks`'s `again`)."""
        self.voice_for(request.lang)  # an unknown language fails here, as in-process
        return self.child.chunks(request, again=lambda: self.child)

    def stream_into(
        self,
        request: SynthesisRequest,
        sink: Callable[[np.ndarray], bool],
        sent: Callable[[], object] | None = None,
        waiting: Callable[[], object] | None = None,
    ) -> None:
        """`stream`'s chunks pushed into `sink` by the child's reader (`ChildEspeak.chunks_into`), not
        pulled from a generator: the same chunks, stop, deadline and child started again. `sent`: called
        once the request is on its way to the child (`tells_sent`: the runner's held hand-overs go then);
        `waiting`: before each read that waits on the child (`tells_waits`)."""
        lang = request.lang
        if lang != self._spoken_lang:
            self.voice_for(lang)  # an unknown language fails here, as in-process (and is not kept)
            self._spoken_lang = lang
        if sent is None:
            self.child.chunks_into(request, sink, again=lambda: self.child, waiting=waiting)
            return
        # A child started again (≈ 0.3 s, up to its start's bound) must not hold the sections before it:
        # what the runner held goes first, before the start (`sent` twice is harmless: once released,
        # nothing is held until this section ends).
        library = self._library
        if isinstance(library, ChildEspeak) and library.closed:
            sent()
        again = lambda: _after(sent, lambda: self.child)  # noqa: E731
        self.child.chunks_into(request, sink, again=again, sent=sent, waiting=waiting)

    def send_ahead(self, request: SynthesisRequest) -> None:
        """The runner's next batch section, to the child now, while it makes the one in hand
        (`espeak_ahead.py`): only in the language of the request in hand (its voice found) and to a
        child alive; taken by the next `stream_into` that asks the same, else stopped and read away."""
        library = self._library
        if request.lang == self._spoken_lang and isinstance(library, ChildEspeak) and not library.closed:
            library.send_ahead(request)

    def stop_ahead(self) -> None:
        """A preview queued behind the section in hand (the admission's `on_preview_queued`, any thread,
        never waiting): the request sent ahead stopped in the child now (`ChildEspeak.stop_ahead`)."""
        library = self._library
        if isinstance(library, ChildEspeak):
            library.stop_ahead()

    def drop_ahead(self) -> None:
        """The request sent ahead stopped and read away (the runner, before it waits for work)."""
        library = self._library
        if isinstance(library, ChildEspeak) and not library.closed:
            library.drop_ahead()

    def interrupt(self, restart: bool) -> bool:
        """The runner's stop of the call in flight (`engine.base`), from the thread that cancels: the
        child stops the request now, not once its next frames reach the engine thread. A call is
        never redone (`restart`: nothing is stopped); the cancel flag is set before this is called,
        so the section that ends here ends cancelled."""
        library = self._library
        return not restart and isinstance(library, ChildEspeak) and library.stop_running()

    def lane(self) -> EspeakProcessEngine:
        return EspeakProcessEngine()

    def close(self) -> None:
        with self._swapping:  # (a start in progress closes its own child once started)
            self._closed = True
        if self._library is not None:
            self.library.close()  # type: ignore[attr-defined]
        super().close()


def _after(first: Callable[[], object], then: Callable[[], ChildEspeak]) -> ChildEspeak:
    first()
    return then()
