"""The accepting node's side of a section: write its file from the audio in Redis, then log `ok`.

Why here and not on the engine node: `output_path` is a path on the caller's side (an `api` node runs
on the pipeline's own host), and `ok` means "the file exists", so `ok` is logged only after the file
was written (atomically, no link followed, through `PathPolicy.write_output`). A node that dies between the write and the
acknowledgement rewrites the same bytes on restart; the FINAL script drops the second `ok`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable

from redis.exceptions import TimeoutError as RedisTimeoutError

from ...paths import PathPolicy
from ...protocol import InternalError, Progress, SectionError, SynthParams, WorkerError, WriteFailed
from ..cache import SynthesisCache
from ..job_bytes import JobBytes
from ..model import Job
from ..observer import SchedulerObserver
from .consumer import QueueConsumer
from .keys import job_key, wav_key
from .outage import refuses_every_write
from .spec import BadSpec, job_from_spec
from .store import RedisJobs
from .wav_upload import token_field

log = logging.getLogger(__name__)

KNOWN_JOBS = 64
# Tries of an entry whose own reply outlasts the command timeout, Redis answering, before it is failed.
SLOW_ENTRY_TRIES = 3
# Bytes of a section's wav read in one command (GETRANGE), each piece within the command timeout: 1 MiB
# in 5 s is a link of 210 kB/s; the whole wav in one GET needed 5.8 MB/s for 600 s of audio (28.8 MB).
WAV_PIECE = 1 << 20


class OutputWriter(QueueConsumer):
    def __init__(
        self,
        jobs: RedisJobs,
        node: str,
        paths: PathPolicy,
        on_done: Callable[[str], None],
        observer: SchedulerObserver | None = None,
    ) -> None:
        self.jobs = jobs
        self.observer = observer if observer is not None else SchedulerObserver()  # /metrics
        self.paths = paths
        self.node = node
        self.on_done = on_done  # a job this node accepted has ended (retention)
        self.redis_ok = True
        self._own = True
        self._regroup = False
        self._known: OrderedDict[str, Job] = OrderedDict()  # jobs seen, oldest first
        self._timed_out: dict[str, int] = {}  # entries whose own reply timed out, Redis answering: tries
        self.job_bytes: JobBytes | None = None  # --jobs-max-bytes over this node's default outputs
        self.cache: SynthesisCache | None = None  # the node's synthesis cache: gives up room on a full disk

    async def run(self) -> None:
        """Each start reads this node's pending entries first: the node's, and one after the loop ended
        on a bug (`node_loops.py`), whose entries read but not written (up to 64) were never read again."""
        self._own = True
        await self._consume(self._write_ready, "writer of node")

    async def _write_ready(self) -> bool:
        rows = await self.jobs.ready(self.node, own=self._own, block_ms=1000)
        if self._own and not rows:
            self._own = False
            self._timed_out.clear()  # (nothing pending: no entry left to count)
        # An entry that timed out before is tried after the others (stable: otherwise in stream order).
        for entry_id, fields in sorted(rows, key=lambda row: self._timed_out.get(row[0], 0)):
            try:
                await self._deliver(fields)
            except Exception as exc:  # one entry's failure, never the loop's
                if not refuses_every_write(exc):
                    await self._entry_failed(entry_id, fields, exc)
                elif not isinstance(exc, RedisTimeoutError) or not await self._redis_answers():
                    self._own = True  # Redis away, full or refusing writes for now: the entry stays
                    raise  # pending, read again first once Redis takes writes
                elif self._timed_out_again(entry_id) < SLOW_ENTRY_TRIES:
                    self._own = True  # its own reply is slow, Redis is up: pending, read after the others
                    continue
                else:
                    said = f"its reply did not come within the command timeout in {SLOW_ENTRY_TRIES} tries"
                    await self._entry_failed(entry_id, fields, RedisTimeoutError(f"{said}, Redis answering"))
            self._timed_out.pop(entry_id, None)
            await self.jobs.ready_done(self.node, entry_id)
        return True

    async def _redis_answers(self) -> bool:
        """Whether Redis answers a PING: an entry that timed out then timed out on its own reply (a long
        section's wav over a slow link), not on an outage. Read as an outage, it stayed pending and was
        read again first, for ever: its section never ended, the entries behind it were never written."""
        try:
            await self.jobs.ping()
        except Exception:  # noqa: BLE001 - Redis itself does not answer: an outage, the entry waits
            return False
        return True

    def _timed_out_again(self, entry_id: str) -> int:
        """Count one more timeout of the entry's own (`SLOW_ENTRY_TRIES` of them fail its section)."""
        tries = self._timed_out[entry_id] = self._timed_out.get(entry_id, 0) + 1
        if tries < SLOW_ENTRY_TRIES:
            log.warning(
                "writer of node %s: entry %s timed out while Redis answers (%s of %s tries); reading the "
                "others first",
                self.node,
                entry_id,
                tries,
                SLOW_ENTRY_TRIES,
            )
        return tries

    async def _entry_failed(self, entry_id: str, fields: dict[str, str], exc: Exception) -> None:
        """An entry the writer could not handle (a job record or key not of the worker's making: Redis
        answered WRONGTYPE, a spec whose sections do not index) fails its section, not the loop: the loop
        ended, started again, met the same pending entry and ended again (pauses up to 60 s, a traceback
        each time), or retried Redis's answer for ever, and the entries behind it waited. One log line."""
        job_id, idx = fields.get("job", ""), fields.get("idx", "")
        job = self._known.pop(job_id, None) or Job(id=job_id, params=SynthParams(), sections=[])
        what = f"{type(exc).__name__}: {exc}"
        told = "no section to fail"
        if job_id and idx.lstrip("-").isdigit() and len(idx) < 20:
            said = f"the writer could not handle this section's entry {entry_id}; the node's log has why"
            failed = SectionError(int(idx), str(InternalError(said)))  # (never the exception's words)
            try:
                failed_now = await self._final(job, failed, ok=False)
                told = (
                    "its section is failed"
                    if failed_now
                    else "its section had ended already (its final stands)"
                )
            except Exception as also:  # the job's own keys are not ours either
                if refuses_every_write(also):
                    self._own = True  # (as above: the entry waits, pending)
                    raise
                told = f"its section could not be failed either ({type(also).__name__}: {also})"
        log.error(
            "writer of node %s dropped entry %s (job %r, section %r) on %s; %s",
            self.node,
            entry_id,
            job_id[:200],
            idx[:20],
            what,
            told,
        )

    async def _deliver(self, fields: dict[str, str]) -> None:
        try:  # any local process can write to Redis: an entry not of our making is dropped, not fatal
            job_id, idx = fields["job"], int(fields["idx"])
            duration, elapsed = float(fields["duration"]), float(fields["elapsed"])
        except (KeyError, ValueError) as exc:
            log.warning("writer of node %s dropped a malformed entry (%r)", self.node, exc)
            return
        known = self._known.get(job_id)
        found = await self.jobs.spec_and_audio(job_id, idx, with_spec=known is None, piece=WAV_PIECE)
        if found is None or found[1] or found[2] is None:
            self._known.pop(job_id, None)
            return  # removed or ended (cancelled): no file, no `ok`
        try:
            job = known or self._remember(job_id, found[0])
        except BadSpec as exc:
            log.warning(
                "writer of node %s dropped section %s of job %s: its spec %s", self.node, idx, job_id, exc
            )
            return
        section = job.section(idx)
        wav = (
            await self._whole_wav(job_id, idx, found[2], found[3], found[4]) if section is not None else None
        )
        if section is None or wav is None:  # (its wav went meanwhile: as above)
            return
        try:
            if section.output_path is not None:
                await asyncio.to_thread(self._write, job.id, section.output_path, wav)
        # A root no longer allowed (a restart, a planted spec); a planted path that is none (a number, a
        # NUL byte: TypeError, ValueError) fails its section, never the writer (its end fails the node).
        except (OSError, ValueError, TypeError, WorkerError) as exc:
            error = (
                exc
                if isinstance(exc, WorkerError)
                else WriteFailed(f"{section.output_path}: {getattr(exc, 'strerror', None) or exc}")
            )
            failed = SectionError(idx, str(error))
            await self._final(job, failed, ok=False)
            await self._drop_preview_audio(job, idx)
            return
        event = Progress(
            idx,
            "ok",
            wav_path=section.output_path,
            duration_sec=duration,
            elapsed_sec=elapsed,
            cached=True if fields.get("cached") == "1" else None,
        )
        await self._final(job, event, ok=True)
        await self._drop_preview_audio(job, idx)
        if await self._ended(job):
            self.on_done(job_id)

    async def _whole_wav(
        self, job_id: str, idx: int, first: bytes, size: int, token: bytes | None
    ) -> bytes | None:
        """The section's wav: its `first` piece, then a `WAV_PIECE` at a time, each piece a command within
        the command timeout. Read whole in one GET, a long section's wav over a slow link outlasted the
        timeout at every try, and its section failed. None where it went meanwhile (cancelled, removed),
        came shorter, or came from another upload by the end (`token`: a run of it made again, whose wav
        was read on from where this one's stopped, a file of two wavs logged `ok`): that run's own entry
        writes it."""
        wav = bytearray(first)
        while len(wav) < size:
            end = min(len(wav) + WAV_PIECE, size) - 1
            piece = await self.jobs.redis.getrange(wav_key(job_id, idx), len(wav), end)
            if not piece:
                return None
            wav += piece
        if len(first) < size and await self.jobs.redis.hget(job_key(job_id), token_field(idx)) != token:
            return None
        return bytes(wav)

    async def _drop_preview_audio(self, job: Job, idx: int) -> None:
        """A preview's wav was in Redis for this write alone (no route serves it): it stayed there until
        retention removed the preview, 30 s after its end."""
        if job.preview:
            await self.jobs.drop_audio(job.id, idx)

    def _write(self, job_id: str, path: str, wav: bytes) -> None:
        """The file, counted against --jobs-max-bytes (WriteFailed when no room can be made), in room the
        synthesis cache gives up where its disk is full, as the single-node runner's (`making_room`): a
        section another node ran failed `WriteFailed: … No space left on device` while the cache held it."""
        if self.job_bytes is None:
            self._write_making_room(path, wav)
            return
        with self.job_bytes.writing(job_id, path, len(wav)):
            self._write_making_room(path, wav)

    def _write_making_room(self, path: str, wav: bytes) -> None:
        if self.cache is None:
            self.paths.write_output(path, wav)
        else:
            self.cache.making_room(path, lambda: self.paths.write_output(path, wav), len(wav))

    async def _final(self, job: Job, event: Progress | SectionError, *, ok: bool) -> int:
        """Log the section's end; this node counts it (and the `done` it led to) in /metrics. Its seq:
        0 where the section was final already (an `ok` applied whose reply was lost: the log said
        `its section is failed` though FINAL dropped the `error`)."""
        idx = event.idx or 0
        seq, done = await self.jobs.final_ending(job.id, idx, event, ok=ok, node=self.node, advance=False)
        for logged in (event if seq else None, done):
            if logged is not None:
                self.observer.event(job, logged)
        return seq

    async def _ended(self, job: Job) -> bool:
        if await self.jobs.ended(job.id):
            self._known.pop(job.id, None)
            return True
        return False

    def _remember(self, job_id: str, spec: str | None) -> Job:
        """A job's sections are fixed at its creation: its spec (which grows with them) is read and
        decoded once per job, not once per section (a thousand-section batch: a second of the loop's)."""
        if spec is None:  # a record not of ours: the worker writes a job's spec with its record
            raise BadSpec("the job's record has no spec")
        job = self._known[job_id] = job_from_spec(spec)
        while len(self._known) > KNOWN_JOBS:
            self._known.popitem(last=False)
        return job
