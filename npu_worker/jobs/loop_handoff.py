"""The engine threads' way onto the event loop: callbacks handed over from another thread run on the
loop in submission order, one wake-up of the loop a burst (`LoopHandoff`), with the windows that let
a preview's later audio share one (split out of `journal.py`, whose append publishes through it).
"""

from __future__ import annotations

import _thread
import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any


def call_soon_unless_closed(
    loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *arguments: Any
) -> None:
    """`callback` on the loop from another thread; nothing once the loop has closed (the app ended:
    nobody is left to take it). A look at `is_closed` first still raced a loop closing right after.
    A `try`, not `contextlib.suppress`: its three Python calls came with every wake-up of the loop by
    an engine lane (benchmarks/SERVER_OVERHEAD.md, stop 54)."""
    try:
        loop.call_soon_threadsafe(callback, *arguments)
    except RuntimeError:  # "Event loop is closed", however late it closed
        pass


_release = _thread.LockType.release  # a lock's release as a callback: a C call, no Python frame

_drain_local = threading.local()  # the flushes due once the drain running on this thread has run
_hold_local = threading.local()  # `holding`: the handoff whose wake-ups this (lane) thread holds (`hold`)


def after_this_drain(flush: Callable[[], None]) -> bool:
    """`flush` once the `LoopHandoff` drain running now on this thread has run its callbacks, in the same
    turn of the loop; False (nothing queued) when no drain runs. A listener woken by the drain's publish
    can write then instead of in a task's next turn (the `/ws` pump: two turns a hand-over were one)."""
    flushes: list[Callable[[], None]] | None = getattr(_drain_local, "flushes", None)
    if flushes is None:
        return False
    flushes.append(flush)
    return True


class LoopHandoff:
    """Runs callbacks on the event loop, in submission order, waking the loop once per burst.

    The engine thread hands over events and audio chunks many times a second; each
    `call_soon_threadsafe` costs a wake-up of the loop (a write to its self-pipe). Callbacks queue
    here instead, and only the first of a burst schedules the drain.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Build it on the loop's own thread (the scheduler does, in `start`)."""
        self.loop = loop
        self._loop_thread = threading.get_ident()
        self._lock = threading.Lock()
        self._pending: list[tuple[Callable[[Any], None], Any]] = []
        self._scheduled = False  # a drain is due at the loop's next turn
        self._timed = False  # a drain is due within a `later` call's time at most
        self._window_after: float | None = None  # the next drain opens a `later` window this long
        self._last_queued = False  # a stream's last event waits: its drain opens no window
        self._timer: asyncio.TimerHandle | None = None  # the window's, while armed (the loop's thread only)
        self._due_at = 0.0  # when the open window is due: its first `later` call's time plus `within`
        self._owed: Callable[[], None] | None = None  # the wake-up a holding thread put off (`hold`)

    def __call__(self, callback: Callable[[Any], None], argument: Any) -> None:
        with self._lock:
            self._pending.append((callback, argument))
            if self._scheduled:
                return
            self._scheduled = True
        self._drain_soon()

    def later(self, callback: Callable[[Any], None], argument: Any, within: float) -> None:
        """Like a call, for what may wait up to `within` seconds (a preview's audio once its listener
        has its first frames): queued in the same order, run with the next drain, which comes at the
        latest `within` seconds after the first such call. espeak-ng hands over a sentence's chunks
        ≈ 1.5 ms apart; each woke the loop, which then wrote one burst for it (≈ 10 wake-ups a
        preview, each ≈ 0.1 ms of the loop's CPU): within a few ms they share one."""
        if getattr(_hold_local, "holding", None) is self:  # (one wake-up a read already: no window)
            with self._lock:
                self._pending.append((callback, argument))
                if self._scheduled or self._timed:
                    return
                self._scheduled, self._owed = True, self._drain
            return
        with self._lock:
            self._pending.append((callback, argument))
            if self._scheduled or self._timed:
                return
            self._timed = True
            self._due_at = time.monotonic() + within
        if threading.get_ident() == self._loop_thread:
            self._arm(within)
        else:
            self._wake(self._arm_woken)

    def then_later(self, callback: Callable[[Any], None], argument: Any, within: float) -> None:
        """Like a call; the drain that runs it then opens a `later` window of `within` seconds on the
        loop's own turn. For a preview's last urgent chunk: the chunks past it come right after (espeak-ng's
        child writes them together), and the first of them woke the loop only to arm its window's
        timer (a wake-up a preview; benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 49). A window
        nothing joins costs the loop one timer's turn. A holding thread's opens none: the chunks past
        it come with it, in its read's one wake-up (`hold`), and a window only waited for its timer."""
        if getattr(_hold_local, "holding", None) is not self:
            with self._lock:
                self._window_after = within
        self(callback, argument)

    def _drain_soon(self) -> None:
        """A drain in the loop's next turn, from whichever thread scheduled it (a holding thread's at
        its next `flush_held`)."""
        if threading.get_ident() == self._loop_thread:
            self.loop.call_soon(self._drain)
        elif getattr(_hold_local, "holding", None) is self:
            with self._lock:
                if self._scheduled:  # (else a drain ran it meanwhile: nothing is owed)
                    self._owed = self._drain
        else:
            self._wake(self._drain)

    def hold(self) -> None:
        """This thread's hand-overs queue as they do, but the wake-up of the loop they need waits for
        its `flush_held` (before it waits on anything) or `release`, and a `later` or `then_later`
        opens no window: an engine lane's, from one read of espeak's pipe to its next (the frames the
        child wrote together), and past its last to the section's end (a preview's last chunks, its
        `ok` and `done`): one drain of the loop a read, where the read's first urgent chunk woke the
        loop (which took the GIL from the lane handing over the rest) and the drain's window waited
        for its timer (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 62). Another thread's call
        behind a held one waits for that flush too. Nothing on the loop's own thread."""
        if threading.get_ident() != self._loop_thread:
            _hold_local.holding = self

    def release(self) -> None:
        """This thread holds no more; what its `hold` put off goes now."""
        if getattr(_hold_local, "holding", None) is self:
            _hold_local.holding = None
            self.flush_held()

    def flush_held(self) -> None:
        """The wake-up a `hold` put off, now, the hold kept (the lane is about to wait: on espeak's
        pipe, on the loop); none if a drain since ran what was queued."""
        with self._lock:
            owed, self._owed = self._owed, None
        if owed is not None:
            self._wake(owed)

    def _wake(self, callback: Callable[..., None], *arguments: Any) -> None:
        """`callback` on the loop from another thread; nothing once the loop is closed (the worker's
        end: nobody is left to read what the engine thread hands over). A loop closing between a look
        at `is_closed` and the call made `call_soon_threadsafe` raise on the engine thread."""
        call_soon_unless_closed(self.loop, callback, *arguments)

    def _arm(self, within: float) -> None:
        """The window's timer, unless a drain since the `later` call that asked for it has run what
        it queued (an armed timer would find nothing)."""
        with self._lock:
            due = self._timed
        if due and self._timer is None:
            self._timer = self.loop.call_later(within, self._timer_drain)

    def _arm_woken(self) -> None:
        """A lane woke the loop to arm a window: it is drained now, in this turn, not in the timer's,
        when a stream's last event (its `done`) has joined it meanwhile (nothing more is coming to wait
        for) or when the loop took the wake-up `within` or later after the `later` call (the window is
        due: its timer would have held it `within` more); one or the other in 38–52 % of these
        wake-ups in sequential `/ws` previews (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 57). Not from a
        drain's own `_arm`: a nested drain would run what came after the callbacks it has not run yet.
        Else its timer gets what is left of the window's time: armed for the whole `within` from this
        turn, it held the chunks past `later`'s bound by as long as the loop took to wake."""
        with self._lock:
            left = self._due_at - time.monotonic()
            ended = self._timed and (self._last_queued or left <= 0)
        if ended:
            self._drain()
        else:
            self._arm(left)

    def _timer_drain(self) -> None:
        self._timer = None
        with self._lock:
            due = self._timed  # (else a drain since has run it: this timer is an old window's)
        if due:
            self._drain()

    def soon(self, callback: Callable[[Any], None], argument: Any, last: bool = False) -> None:
        """Like a call, but joining a `later` window already due (it runs with that window's drain,
        within a few ms) instead of waking the loop for itself. For a live preview's events once its
        audio flows: its `ok` and `done` come right after its last chunks, which wait in such a window,
        and each woke the loop once more (5.6 → 4.5 wake-ups a `/ws` preview; benchmarks/
        SERVER_OVERHEAD.md, 2026-12-06). With no window due it is an ordinary call.

        `last`: a stream's last event (its `done`): the drain that runs it opens no window (a preview's
        last urgent chunk, its later ones, `ok` and `done` had often come in one drain, whose window's
        timer then found nothing: an empty turn of the loop; a chunk of another stream that would have
        joined it opens a window of its own)."""
        with self._lock:
            self._pending.append((callback, argument))
            self._last_queued = self._last_queued or last  # (with it, under the lock: its own drain's)
            if self._scheduled or self._timed:
                return
            self._scheduled = True
        self._drain_soon()

    def at_once(self, callback: Callable[[Any], None], argument: Any) -> None:
        """Like a call, but run now when called on the loop's own thread with nothing queued before it
        (the order holds: what is queued after it runs after it). For a job's `start`, appended on the
        loop at admission: its drain was a turn of its own before the `/ws` pump's first write
        (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 56). Inside a drain it is a call: the drain's
        callbacks not yet run were queued before it (it ran ahead of them)."""
        if threading.get_ident() == self._loop_thread and getattr(_drain_local, "flushes", None) is None:
            with self._lock:
                idle = not self._pending
            if idle:
                callback(argument)
                return
        self(callback, argument)

    def with_next(self, callback: Callable[[Any], None], argument: Any) -> None:
        """Queued in order like a call, but waking nobody: it runs with the next drain, which the next
        call (or a `later`'s time) brings. For what nobody acts on before a later call's callback
        (a `/synth`'s `start`, `synth` and `ok`, read at its `done`): each had woken the loop alone."""
        with self._lock:
            self._pending.append((callback, argument))

    def yield_to_loop(self, timeout: float) -> None:
        """Block this (engine) thread until the loop has run every callback queued so far, or for
        `timeout` seconds at most.

        A thread that keeps taking the GIL (espeak's callback after every buffer it makes) or a core
        makes a just woken loop wait for both, ~1 ms at the median on the 2-core VM; the runner yields
        once per preview, right after its first audio, when a listener is waiting for exactly that
        (benchmarks/SERVER_OVERHEAD.md: hand-off → loop 1.0 ms → 0.06 ms at the median).
        """
        if threading.get_ident() == self._loop_thread:
            return
        # A plain lock held here and released by the loop once its drain got this far, not a
        # `threading.Event`: the Event's `Condition` was ≈ 12 Python calls on the lane and 6 on the loop
        # a preview (benchmarks/SERVER_OVERHEAD.md, stop 59). Timed out, the loop's release frees nobody.
        drained = threading.Lock()
        drained.acquire()
        self(_release, drained)
        # A holding lane's wake-up goes now, after the release is queued: flushed before it, a drain
        # that ran in between left the release held, and the lane waited its whole timeout.
        self.flush_held()
        drained.acquire(True, timeout)

    def _drain(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
            window, self._window_after = self._window_after, None
            if self._last_queued:
                window, self._last_queued = None, False
            self._scheduled, self._timed = False, window is not None
            if window is not None:  # (a lane's arm that comes late finds this window's own time)
                self._due_at = time.monotonic() + window
            self._owed = None  # (it runs what a holding thread queued: its flush wakes nobody)
        stale, self._timer = self._timer, None
        if stale is not None:  # this drain ran what the window held: its timer would find nothing
            stale.cancel()
        if window is not None:
            self._arm(window)
        flushes: list[Callable[[], None]] = []
        _drain_local.flushes = flushes
        try:
            for callback, argument in pending:
                callback(argument)
        finally:
            _drain_local.flushes = None
            run_every(flushes)


def run_every(flushes: list[Callable[[], None]]) -> None:
    """Each flush, even past one that raised (then raised after the rest): a flush skipped would leave
    its listener marked as due a direct write, never woken again."""
    for index, flush in enumerate(flushes):
        try:
            flush()
        except BaseException:
            run_every(flushes[index + 1 :])
            raise
