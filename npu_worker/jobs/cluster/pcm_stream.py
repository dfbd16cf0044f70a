"""A streaming job's PCM on its way from the engine node to the listener's node: one Redis stream per job.

Why a stream: the listener's node follows it in the same XREAD as the job's log (one blocking read, two
keys, `follower.py`), so a chunk reaches a socket on another node one Redis hop after the engine made it.

Entry fields: `k` the section's idx, `a` the attempt (a fresh id for each run of a section: a section
reclaimed after a crash, or given back at shutdown, is run again as a new attempt), `i` the entry's number
within its attempt, `d` the samples (float32, little-endian: the listener gets exactly what a local
listener would), `o` the onset the engine thread found (on the one chunk that reveals it), `e` = 1 on the
attempt's end marker. The end marker is written before the section is handed over (MADE) or failed
(FINAL), so when a section's final event is in the log, the end of the attempt that made it is already
in this stream. How the listener turns attempts into one stream: `pcm_follow.py`.

Bounds: every XADD trims the stream to about `PCM_MAXLEN` entries and sets a `PCM_TTL_SECONDS` expiry
(refreshed on each write, so a stream nobody finishes goes by itself); the listener trims what it has read
at each section's end and deletes the stream at `done`; retention deletes it with the job. The key is
made from the job id, which the server made (never a caller's string).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from redis.exceptions import ResponseError

from ..model import AudioChunk, LogEntry
from .entries import entry_of
from .keys import log_key, pcm_key
from .outage import WriteRefusals, cancellable, reraise_if_cancelling, taken
from .store import RedisJobs

log = logging.getLogger(__name__)
PCM_MAXLEN = 10_000  # entries; a section is read while it is made, so only a burst waits here
PCM_TTL_SECONDS = 300
READ_COUNT = 500  # entries per stream and read
SEND_BATCH = 256  # entries per pipeline


@dataclass(frozen=True)
class PcmEntry:
    """One entry of a job's PCM stream; `samples` is None on an attempt's end marker."""

    entry_id: str
    idx: int
    attempt: str
    number: int
    samples: np.ndarray | None
    onset: int | None


def encode(idx: int, attempt: str, number: int, chunk: AudioChunk | None) -> dict[str, Any]:
    fields: dict[str, Any] = {"k": idx, "a": attempt, "i": number}
    if chunk is None:
        fields["e"] = 1
        return fields
    fields["d"] = np.asarray(chunk.samples, dtype="<f4").tobytes()
    if chunk.onset is not None:
        fields["o"] = chunk.onset
    return fields


def decode(entry_id: bytes, fields: dict[bytes, bytes]) -> PcmEntry:
    onset = fields.get(b"o")
    data = fields.get(b"d")
    return PcmEntry(
        entry_id.decode(),
        int(fields[b"k"]),
        fields[b"a"].decode(),
        int(fields[b"i"]),
        None if b"e" in fields else np.frombuffer(data or b"", dtype="<f4"),
        int(onset) if onset is not None else None,
    )


class PcmPublisher:
    """The engine node's sender, on the loop: entries go out in the order the engine thread made them.

    The engine thread's only cost per chunk is one `LoopHandoff` call (`put`); here, everything that
    piled up since the last send goes in one pipeline (XADD with MAXLEN, then EXPIRE). While Redis is
    away (or full, or refusing every write for now: a replica) the entries wait and are sent when it is
    back (a section's audio is bounded, and the engine thread itself waits in MADE meanwhile); a retried pipeline may repeat entries, which the
    listener drops by their number. Entries Redis refuses otherwise (a key planted with another type)
    are dropped, and logged: the listener sees a gap (its job ends), and the sender goes on for the
    node's other jobs (it ended, and no later stream of the node got its audio).
    """

    def __init__(self, jobs: RedisJobs, maxlen: int = PCM_MAXLEN, ttl: int = PCM_TTL_SECONDS) -> None:
        self.jobs = jobs
        self.maxlen, self.ttl = maxlen, ttl
        self._pending: list[tuple[str, dict[str, Any]] | asyncio.Future[Any]] = []  # entries and barriers
        self._attempt, self._number = "", 0  # one engine thread: one attempt at a time
        self._queued = self._sent = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._refusals = WriteRefusals("PCM stream")  # Redis refusing every write: said as it starts, ends
        self._task: asyncio.Task[None] | None = None
        # This node's own listeners (a `both` node): given each entry at once, beside the stream.
        self.local: Callable[[str, PcmEntry], None] | None = None

    def put(self, item: tuple[str, int, str, AudioChunk | None]) -> None:
        """(job id, section idx, attempt, chunk, or None for the attempt's end); on the loop."""
        job_id, idx, attempt, chunk = item
        if attempt != self._attempt:
            self._attempt, self._number = attempt, 0
        number, fields = self._number, encode(idx, attempt, self._number, chunk)
        self._pending.append((pcm_key(job_id), fields))
        self._number += 1
        self._queued += 1
        self._wake.set()
        if self.local is not None:  # after the stream's bookkeeping: a listener's failure cannot skew it
            samples = None if chunk is None else np.frombuffer(fields["d"], dtype="<f4")
            onset = None if chunk is None else chunk.onset
            self.local(job_id, PcmEntry("", idx, attempt, number, samples, onset))

    def after(self, barrier: asyncio.Future[Any]) -> None:
        """Entries put from now on wait until `barrier` is done (a section's `synth` is in the log before
        its first chunk is in the stream); on the loop."""
        self._pending.append(barrier)
        self._queued += 1
        self._wake.set()

    async def flushed(self) -> None:
        """Return once everything `put` before this call is in Redis (or the sender has stopped)."""
        if self._sent >= self._queued or self._task is None or self._task.done():
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((self._queued, waiter))
        await waiter

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self._run())
        return self._task

    async def _run(self) -> None:
        try:
            while True:
                reraise_if_cancelling()
                await self._wake.wait()
                self._wake.clear()
                await self._send_pending()
        finally:
            for _, waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._waiters = []

    async def _send_pending(self) -> None:
        while self._pending:
            head = self._pending[0]
            if isinstance(head, asyncio.Future):
                await asyncio.wait([head])
                del self._pending[0]
                self._sent += 1
                self._wake_waiters()
                continue
            batch: list[tuple[str, dict[str, Any]]] = []
            for item in self._pending[:SEND_BATCH]:
                if isinstance(item, asyncio.Future):
                    break
                batch.append(item)
            try:
                await self._send_when_taken(batch)
            except ResponseError as exc:  # a key not of ours (WRONGTYPE): these entries, not the sender
                log.error("PCM stream: Redis refused %d entries (%s); dropped", len(batch), exc)
            del self._pending[: len(batch)]
            self._sent += len(batch)
            self._wake_waiters()

    def _wake_waiters(self) -> None:
        done = [w for w in self._waiters if w[0] <= self._sent]
        self._waiters = [w for w in self._waiters if w[0] > self._sent]
        for _, waiter in done:
            if not waiter.done():
                waiter.set_result(None)

    async def _send_when_taken(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        """`_send`, retried while Redis is away or full, and while it refuses every write for now (a
        replica: READONLY; MISCONF, BUSY): that refusal was read as a key not of ours, the entries
        dropped (an ERROR a batch) and the listeners' streams cut short."""
        await taken(functools.partial(self._send, batch), self._refusals)

    async def _send(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        async with self.jobs.redis.pipeline(transaction=False) as pipe:
            for key, fields in batch:
                pipe.xadd(key, fields, maxlen=self.maxlen, approximate=True)
            for key in {key for key, _ in batch}:
                pipe.expire(key, self.ttl)
            await pipe.execute()


async def read_log_and_pcm(
    jobs: RedisJobs, job_id: str, after: int, cursor: str, block_ms: int
) -> tuple[list[LogEntry], list[PcmEntry], bool]:
    """New log entries after seq `after` and PCM entries after `cursor`, in one blocking XREAD; the
    flag says the PCM part was cut at `READ_COUNT` (more is waiting)."""
    streams = {log_key(job_id): f"0-{after}", pcm_key(job_id): cursor}
    reply = await cancellable(jobs.blocking.xread(streams, block=block_ms, count=READ_COUNT))
    entries: list[LogEntry] = []
    audio: list[PcmEntry] = []
    pcm = pcm_key(job_id).encode()
    for stream, rows in reply or []:
        if stream == pcm:
            audio = [decode(eid, fields) for eid, fields in rows if fields]
        else:
            entries = [entry_of(eid, fields) for eid, fields in rows]
    return entries, audio, len(audio) >= READ_COUNT


async def trim_read(jobs: RedisJobs, job_id: str, cursor: str) -> None:
    """Drop the entries the listener has read (up to and including `cursor`)."""
    await jobs.redis.xtrim(pcm_key(job_id), minid=_next_id(cursor))


async def drop(jobs: RedisJobs, job_id: str) -> None:
    await jobs.redis.delete(pcm_key(job_id))


def _next_id(entry_id: str) -> str:
    ms, _, seq = entry_id.partition("-")
    return f"{ms}-{int(seq or 0) + 1}"
