"""A listener on one job: replays the log from `after`, then follows live until `done`.

Lives on the event loop. Its items wait in a deque with its one reader's future, not in an
`asyncio.Queue`: the queue's put/get machinery was ≈ 150 Python calls a `/ws` preview on the loop
(benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 52). Audio is bounded: a listener that lets more than
`max_buffered_seconds` of audio pile up unread is dropped (`on_overflow`), so a stalled reader can never
make the server buffer without bound and never stalls the engine thread for everybody else.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ..protocol import Done
from .loop_handoff import after_this_drain
from .model import AudioChunk, Job, LogEntry

_END = object()
FLOOR_SECONDS = 30.0  # what a listener may always hold, however full the shared budget
UNREAD_AUDIO_BUDGET_SAMPLES = 30 * 60 * 24_000  # 30 minutes at 24 kHz: 173 MB of float32 in all


class AudioBudget:
    """Unread audio across every listener of one worker, in samples. Each listener's own bound is
    generous (a download may hold ten minutes), so alone they let 512 connections that never read hold
    about 29 GB; past this budget, a listener holding more than FLOOR_SECONDS is dropped instead."""

    def __init__(self, max_samples: int) -> None:
        self.max_samples = max_samples
        self.samples = 0


class _Parked:
    """A reader that waits with no task of its own (`Subscription.park`): what would wake its future
    tells it instead, once, and it is no longer waiting (the `/ws` pump takes a task only when its
    direct write cannot go on; a task's first step and its last were a turn of the loop each)."""

    __slots__ = ("_subscription", "_on_wake")

    def __init__(self, subscription: Subscription, on_wake: Callable[[Exception | None], None]) -> None:
        self._subscription, self._on_wake = subscription, on_wake

    # never done while it waits (told once, it is detached): `bool()`, False, called in C, where a
    # method of ours was a Python call each drain's wake-up looked at it (≈ 7.5 a `/ws` preview)
    done = staticmethod(bool)

    def set_result(self, _: None) -> None:
        self._subscription._waiter = None
        self._on_wake(None)

    def set_exception(self, failure: Exception) -> None:
        self._subscription._waiter = None
        self._on_wake(failure)


class Subscription:
    def __init__(
        self,
        job: Job,
        *,
        after: int = 0,
        audio: bool = False,
        sample_rate: int = 24000,
        max_buffered_seconds: float = 30.0,
        on_overflow: Callable[[Job], None] | None = None,
        budget: AudioBudget | None = None,
    ) -> None:
        self.job = job
        self.audio = audio
        self.max_buffered_samples = int(max_buffered_seconds * sample_rate)
        self.floor_samples = int(FLOOR_SECONDS * sample_rate)
        self.budget = budget
        self.on_overflow = on_overflow
        self.buffered_samples = 0
        self.overflowed = False
        self._items: deque[object] = deque()
        self._waiter: asyncio.Future[None] | _Parked | None = None  # its one reader's, while it waits
        # The reader's own taking, run at the end of the hand-off's drain that brought items while it
        # waits (`after_this_drain`): True when it took them all and may go on waiting, False to be woken.
        self.direct: Callable[[], bool] | None = None
        self._direct_due = False
        self._after = after
        self._closed = False
        self._ended = False
        for entry in job.entries_after(after):
            self.push(entry)
        if not self._ended and job.done_event is not None:  # `after` is at or past `done`: nothing left
            self._ended = True
            self._put(_END)
        if not self._ended:
            job.subscribers.append(self)

    @property
    def after(self) -> int:
        """The `seq` it was asked to follow from (0: the whole log)."""
        return self._after

    def push(self, entry: LogEntry) -> None:
        if self._closed:
            return
        if entry.seq > self._after:  # `after` past the log so far: a live entry up to it was seen already
            self._put(entry)
        if isinstance(entry.event, Done):
            self._ended = True
            self._put(_END)
            self._detach()

    def push_audio(self, chunk: AudioChunk) -> None:
        """A chunk for the reader, held in its bound and the budget; none past its end (a `finish`: the
        job's `publish_audio` no longer reaches it, and its `audio_to` must not either)."""
        if self._closed or self._ended or not self.audio or self.overflowed:
            return
        held = self.buffered_samples + chunk.samples.size
        budget = self.budget
        over_budget = budget is not None and budget.samples + chunk.samples.size > budget.max_samples
        if held > self.max_buffered_samples or (over_budget and held > self.floor_samples):
            self.overflowed = True
            if self.on_overflow is not None:
                self.on_overflow(self.job)
            return
        self.buffered_samples = held  # (`_held` inline: two calls a chunk on the loop, stop 53)
        if budget is not None:
            budget.samples += chunk.samples.size
        self._items.append(chunk)  # (`_put` inline: a call a chunk on the loop; SERVER_OVERHEAD.md, stop 55)
        if self._waiter is not None and not self._direct_due:
            self._wake()

    def _put(self, item: object) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._direct_due:  # (due: the drain's flush takes it too)
            self._wake()

    def _wake(self) -> None:
        """The waiting reader is told of what came: by its own taking at the end of this drain, if it
        has one, else by its wait's end."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self.direct is not None and after_this_drain(self._take_direct):
            self._direct_due = True
            return
        waiter.set_result(None)

    def _take_direct(self) -> None:
        """The drain has run: the waiting reader takes what it brought itself, else it is woken (an
        error it raises is raised in its wait)."""
        self._direct_due = False
        waiter = self._waiter
        if waiter is None or waiter.done():  # (it stopped waiting meanwhile: it reads the items itself)
            return
        try:
            taken = self.direct is not None and self.direct()
        except Exception as exc:  # noqa: BLE001 - the reader's own failure, raised where it waits
            waiter.set_exception(exc)
            return
        if not taken:
            waiter.set_result(None)

    def park(self, on_wake: Callable[[Exception | None], None]) -> None:
        """Wait with no task: items that come are taken by `direct` at the end of their drain; when it
        cannot take them all (or raises), or an item comes outside a drain (the end of a `close`),
        `on_wake(failure or None)` runs once and the reader waits no more (it reads on in a task)."""
        if self._waiter is not None:
            raise RuntimeError("a subscription has one reader, and another is waiting on it")
        self._waiter = _Parked(self, on_wake)

    def unpark(self) -> None:
        """A parked reader stops waiting without being told (it ends, or reads on in a task)."""
        if isinstance(self._waiter, _Parked):
            self._waiter = None

    def _held(self, samples: int) -> None:
        self.buffered_samples += samples
        if self.budget is not None:
            self.budget.samples += samples

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> LogEntry | AudioChunk:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            if self._waiter is not None:  # a second reader took the first's wake-up: it waited for ever
                raise RuntimeError("a subscription has one reader, and another is waiting on it")
            self._waiter = waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if item is _END:
            self._closed = True
            raise StopAsyncIteration
        if isinstance(item, AudioChunk):
            self._unheld(item.samples.size)
        return item  # type: ignore[return-value]

    def ready(self) -> LogEntry | AudioChunk | None:
        """The next item if one is already here, else None (the end too: `async for` then stops): a
        reader takes what a wake-up brought in one go (the `/ws` pump writes it as one burst)."""
        if not self._items:
            return None
        item = self._items.popleft()
        if item is _END:
            self._closed = True  # (`__anext__` stops: closed, and nothing queued after the end)
            return None
        if isinstance(item, AudioChunk):  # (`_unheld` inline: a call an item on the loop, stop 54)
            size = item.samples.size
            self.buffered_samples -= size
            if self.budget is not None:
                self.budget.samples -= size
        return item  # type: ignore[return-value]

    def holds(self) -> bool:
        """Whether the next item (or the end) is already here: taking it will not wait. A reader that
        writes in bursts writes what it holds before it waits (the speech socket's pump)."""
        return self._closed or bool(self._items)

    def _unheld(self, size: int) -> None:
        """A chunk of `size` samples was taken by the reader: no longer held for it."""
        self.buffered_samples -= size
        if self.budget is not None:
            self.budget.samples -= size

    def _detach(self) -> None:
        """Off the job's listeners, and a preview's `audio_to` (this listener's `push_audio`) let go: the
        job and its listener held each other, and every finished preview lived on until a cyclic collection."""
        job = self.job
        if self in job.subscribers:
            job.subscribers.remove(self)
        if getattr(job.audio_to, "__self__", None) is self:
            job.audio_to = None

    def finish(self) -> None:
        """End after what is already queued (shutdown: nothing more will come before the restart)."""
        if not self._ended and not self._closed:
            self._ended = True
            self._detach()
            self._put(_END)

    def close(self) -> None:
        """Stop listening (idempotent); pending items are dropped."""
        self._detach()
        self._closed = True
        while self._items:
            item = self._items.popleft()
            if isinstance(item, AudioChunk):
                self._held(-item.samples.size)
        self._put(_END)
