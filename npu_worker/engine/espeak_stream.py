"""The iterator face of espeak-ng: `EspeakLibrary.synthesize`'s streams, for readers on other threads.

A stream's synthesis runs on one streaming thread (started by the first stream, shared by all of a
library's streams, one at a time), and each espeak buffer crosses to the reader through a small
bounded channel: memory stays bounded, and a reader that stops listening stops espeak within a chunk or
two (the channel refuses the next buffer, and the synth callback then aborts). The engine thread does
not use this: it synthesises on itself (`EspeakLibrary.synthesize_into`), with no hand-off per chunk.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from npu_worker.protocol import EngineError

if TYPE_CHECKING:
    from npu_worker.engine.espeak_lib import _Synthesis

CHANNEL_CAPACITY = 5  # espeak buffers of 200 ms: about one second of audio ahead of the reader
STALL_TIMEOUT = 60.0  # seconds a full channel may go unread before the synthesis is abandoned


class ChunkChannel:
    """Bounded hand-off of audio chunks from the streaming thread (producer) to one reader."""

    def __init__(self, capacity: int = CHANNEL_CAPACITY, stall_timeout: float = STALL_TIMEOUT) -> None:
        self._chunks: collections.deque[np.ndarray] = collections.deque()
        self._changed = threading.Condition()
        self._capacity = capacity
        self._stall_timeout = stall_timeout
        self._ended = False
        self._error: BaseException | None = None
        self.aborted = False

    def put(self, chunk: np.ndarray) -> bool:
        """Queue a chunk; False means the reader is gone and the producer should stop."""
        with self._changed:
            has_room = self._changed.wait_for(
                lambda: self.aborted or len(self._chunks) < self._capacity, timeout=self._stall_timeout
            )
            if self.aborted:
                return False
            if not has_room:
                self._error = EngineError(
                    f"espeak stream not read for {self._stall_timeout:.0f} s; abandoned"
                )
                self.aborted = True
                self._changed.notify_all()
                return False
            self._chunks.append(chunk)
            self._changed.notify_all()
            return True

    def end(self, error: BaseException | None = None) -> None:
        with self._changed:
            self._ended = True
            self._error = self._error or error
            self._changed.notify_all()

    def abort(self) -> None:
        with self._changed:
            self.aborted = True
            self._changed.notify_all()

    def get(self) -> np.ndarray | None:
        """The next chunk, or None at the end; raises the producer's error after the chunks before it."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._chunks) or self._ended)
            if self._chunks:
                chunk = self._chunks.popleft()
                self._changed.notify_all()
                return chunk
            if self._error is not None:
                raise self._error
            return None


@dataclass
class StreamJob:
    text: str
    voice: str
    rate_wpm: int | None
    channel: ChunkChannel
    started: threading.Event
    finished: threading.Event
    synthesis: _Synthesis | None = None


class SynthesisStream(Iterator[np.ndarray]):
    """int16 chunks of one synthesis, as espeak delivers them, for a reader on any other thread.

    The synthesis runs on the library's streaming thread (queued at the first `next()`), and each chunk
    crosses threads through a bounded channel: two hand-offs per chunk. A caller that can take chunks
    where espeak makes them uses `EspeakLibrary.synthesize_into` instead (no thread, no hand-off).
    `close()` (also on garbage collection) aborts espeak at its next buffer; once `close()` returns
    the synthesis has stopped, and `produced_samples` says how much espeak made in all (read or not).
    """

    def __init__(self, runner: StreamRunner, job: StreamJob) -> None:
        self._runner = runner
        self._job = job
        self._submitted = False
        self._closed = False

    @property
    def produced_samples(self) -> int:
        synthesis = self._job.synthesis
        return synthesis.produced_samples if synthesis is not None else 0

    def __next__(self) -> np.ndarray:
        if self._closed:
            raise StopIteration
        if not self._submitted:
            self._runner.submit(self._job)
            self._submitted = True
        chunk = self._job.channel.get()
        if chunk is None:
            self._closed = True
            raise StopIteration
        return chunk

    def close(self) -> None:
        self._closed = True
        self._job.channel.abort()
        if self._submitted and self._job.started.is_set():
            self._job.finished.wait()

    def __del__(self) -> None:
        self._job.channel.abort()


class StreamRunner:
    """The streaming thread of one espeak library: runs submitted jobs one after another with `run`
    (which synthesises into the job's channel and returns what its sink raised)."""

    def __init__(self, run: Callable[[StreamJob], BaseException | None]) -> None:
        self._run = run
        self._jobs: queue.SimpleQueue[StreamJob] = queue.SimpleQueue()
        self._start = threading.Lock()
        self.thread: threading.Thread | None = None

    def submit(self, job: StreamJob) -> None:
        if threading.current_thread() is self.thread:
            raise RuntimeError("an espeak stream cannot be read on the espeak streaming thread")
        with self._start:  # the thread is started once, by whichever stream comes first
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="espeak-stream", daemon=True)
                self.thread.start()
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            job.started.set()  # before the abort check: close() waits for `finished` once this is set
            error: BaseException | None = None
            try:
                if not job.channel.aborted:
                    error = self._run(job)
            except BaseException as failure:  # handed to the reader, never kills this thread
                error = failure
            finally:
                job.channel.end(None if job.channel.aborted else error)
                job.finished.set()
