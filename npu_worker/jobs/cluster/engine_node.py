"""The engine side of a node: takes sections from the shared queue and runs them on the engine thread.

Order of work: the node's own unacknowledged items first (it restarted with work in hand), then items
a dead node left idle past `--claim-timeout` (XAUTOCLAIM), then new work, first sections (previews,
a batch's first section) before batch sections. While a section runs, its item is touched every
third of the claim timeout, so only a node that stopped touching it (dead, or cut off) loses it.

The engine thread stores the wav in Redis and hands the section to the accepting node, which writes
the file and logs `ok` (see `writer.py`); a section with no file, or one whose file is this node's own
to write (a `both` node that accepted the job), is logged `ok` here in one script (MADE_OK), after
the file is written. The item is acknowledged after that hand-over, so a node
killed mid-section leaves it pending for another node, and a duplicate run is dropped by the MADE
and FINAL scripts (a section is `ok` exactly once).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from redis.exceptions import ResponseError

from ...engine.base import Engine
from ...paths import PathPolicy
from ...protocol import EngineError, Limits, Progress, SectionError, WorkerError, WriteFailed
from ..admission import Admission
from ..cache import SynthesisCache
from ..model import AudioChunk, Job, Section
from ..observer import SchedulerObserver
from ..runner import Runner
from ..stats import Stats
from .consumer import QueueConsumer
from .entries import WorkItem
from .journal import Before, RedisJournal
from .keys import CANCEL_CHANNEL
from .outage import REDIS_DOWN, REDIS_WAIT, WriteRefusals, refuses_every_write, reraise_if_cancelling, taken
from .pcm_stream import PcmPublisher
from .spec import BadSpec, job_from_spec, spec_node
from .store import RedisJobs

log = logging.getLogger(__name__)


class ClusterRunner(Runner):
    """The local runner's synthesis (cache, trim, encode once), ending in Redis instead of a file.

    A streaming job's chunks go to its PCM stream (`pcm_stream.py`) under a fresh attempt id per run;
    the attempt's end marker is written just before the section is made or failed."""

    journal: RedisJournal
    preempts = False  # one attempt id per run (`attempt`): sections never nest here
    hands_over_to_loop = False  # every chunk to its PCM stream in Redis (`hand_over_audio`)
    pcm: PcmPublisher | None = None
    attempt = ""
    writes_for = ""  # the node whose files this one writes (itself, when it is a `both` node)
    written: Callable[[str], None] | None = None  # on the loop: a section's file was written here

    def keeps_all_audio(self, job: Job) -> bool:
        """A batch section's wav goes to Redis (`GET .../audio` reads it there); a preview's only to
        write its file: no route serves a preview's audio, so a listen-only preview keeps no chunks,
        encodes no wav and stores none (every one was a wav in Redis for nobody, until its expiry)."""
        return not job.preview

    def hand_over_audio(self, job: Job, chunk: AudioChunk, urgent: bool = True) -> None:
        if self.pcm is not None:  # (to Redis, every chunk at once, as before)
            self.journal.handoff(self.pcm.put, (job.id, chunk.idx, self.attempt, chunk))

    def _end_of(
        self, job: Job, section: Section, synth: asyncio.Future[int]
    ) -> Callable[[], Awaitable[None]]:
        """What runs on the loop before the section is handed over: its `synth` is logged, and a
        streaming job's PCM stream has the attempt's end marker."""
        pcm = self.pcm if job.stream_audio else None
        item = (job.id, section.idx, self.attempt, None)

        async def end() -> None:
            await asyncio.wait([synth])  # logged (or cancelled by shutdown): never raises here
            if pcm is not None:
                pcm.put(item)
                await pcm.flushed()

        return end

    def run_shared(self, job: Job, node: str, section: Section, synth: asyncio.Future[int]) -> None:
        """Run a section whose `synth` event the loop is appending meanwhile (`synth`, a task: the engine
        starts without waiting for that round trip; an ended job's append cancels the section)."""
        started = time.monotonic()
        self.attempt = uuid.uuid4().hex[:12]
        if job.sections and section is job.sections[0]:
            job.onset_watch = None  # a first section run again looks for its onset again
        end = self._end_of(job, section, synth)
        try:
            self._check_section(job, section)  # as a local runner does
            audio = self._synthesise(job, section, self.engine)
            if audio is None:  # cancelled mid-section
                return
            wav = audio.file_wav() if audio.audio_kept else b""  # (a listen-only preview's: none)
            meta = {"duration": audio.duration, "cached": audio.cached}
            meta["elapsed"] = round(time.monotonic() - started, 3)
            if self._hand_over(job, node, section, wav, meta, end):
                self.stats.section_ok(audio.cached)
            if not audio.cached and self._caches(job, section):
                self.cache.put(audio.key, audio.raw_wav)
        except WorkerError as exc:
            self.journal.section_failed(job, node, SectionError(section.idx, str(exc)), first=end)
            self.stats.section_failed()
        except Exception as exc:  # noqa: BLE001 - one section's failure never stops the job
            log.exception("section %s of job %s failed", section.idx, job.id)
            error = EngineError(f"{type(exc).__name__}: {exc}")
            self.journal.section_failed(job, node, SectionError(section.idx, str(error)), first=end)
            self.stats.section_failed()
        finally:
            self.observer.section_ran(job, time.monotonic() - started)

    def _hand_over(
        self, job: Job, node: str, section: Section, wav: bytes, meta: dict[str, Any], end: Before
    ) -> bool:
        """`ok` from here, exactly once (MADE_OK), when there is no file or the file is this node's own
        to write (it accepted the job: a `both` node writes it now, as a local worker does, instead of
        a hop through its writer); else the accepting node writes the file, then logs `ok` (MADE)."""
        path = section.output_path
        if path is not None and node != self.writes_for:
            return self.journal.section_made(job, node, section, wav, meta, first=end)
        if path is not None:
            if self.journal.settled(job, section):  # never a file rewritten after another run's `ok`
                return False
            try:
                with self._counted(job, path, len(wav)):  # --jobs-max-bytes (`outputs`: this node's)
                    self.cache.making_room(path, lambda: self.paths.write_output(path, wav), len(wav))
            except OSError as exc:
                raise WriteFailed(f"{path}: {exc.strerror or exc}") from exc
        cached = True if meta["cached"] else None
        ok = Progress(section.idx, "ok", path, meta["duration"], meta["elapsed"], cached)
        stored = b"" if job.preview else wav  # (MADE_OK stores no copy of b"": nothing reads a preview's)
        made = self.journal.section_ok(job, node, section, stored, ok, first=end)
        if made and path is not None and self.written is not None:
            self.journal.handoff(self.written, job.id)
        return made


class EngineNode(QueueConsumer):
    def __init__(
        self,
        engine: Engine,
        jobs: RedisJobs,
        journal: RedisJournal,
        cache: SynthesisCache,
        stats: Stats,
        *,
        node: str,
        limits: Limits,
        default_seed: int,
        claim_timeout: float,
        observer: SchedulerObserver | None = None,
        paths: PathPolicy,
    ) -> None:
        self.jobs = jobs
        self.node = node
        self.claim_timeout = claim_timeout
        # How long a section may go untouched before this node takes it over (set by the scheduler to the
        # longest --claim-timeout of the live nodes): never a section taken from a live, more patient peer.
        self.patience: Callable[[], float] = lambda: claim_timeout
        self.runner = ClusterRunner(
            engine,
            Admission(0),
            journal,
            cache,
            stats,
            limits=limits,
            default_seed=default_seed,
            end_job=lambda job: None,
            observer=observer,
            paths=paths,
        )
        self.pcm = self.runner.pcm = PcmPublisher(jobs)
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="npu-worker-engine")
        self.running: Job | None = None
        self.redis_ok = True
        self._known: OrderedDict[str, tuple[Job, str]] = OrderedDict()
        self._own = True  # at start: our own unacknowledged items first
        self._draining = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._left = asyncio.Event()  # the work loop has ended (shutdown: items given back)
        self._regroup = False
        self._next_reclaim = 0.0
        self._synth_refusals = WriteRefusals(f"engine node {node}, a section's synth")  # said once a while

    async def load(self) -> bool:
        """The runner's load, on the engine's thread; then what waits for it is told (`on_load_ended`)."""
        loaded = await asyncio.get_running_loop().run_in_executor(self.thread, self.runner._load)
        if self.runner.on_load_ended is not None:
            self.runner.on_load_ended()
        return loaded

    def cancel(self, job_id: str) -> None:
        """A job was cancelled (on any node): stop it here at its next chunk."""
        known = self._known.get(job_id)
        if known is not None:
            known[0].cancel_requested.set()
            self._stop_call(known[0])

    def _stop_call(self, job: Job) -> None:
        """`job`, flagged cancelled, is the one running here: its engine call in flight stops now too
        (sovits: its upstream call, which has no chunk to see the flag at until the upstream answers;
        ZipVoice: its onnxruntime call). On the loop, like `running`: the engine thread runs no other
        job's section meanwhile (sections never nest here)."""
        interrupt = getattr(self.runner.engine, "interrupt", None)
        if self.running is job and callable(interrupt):
            interrupt(False)

    async def listen_for_cancels(self) -> None:
        """Cancels published by any node stop the section running here at its next chunk (a cancel
        missed while Redis was away is still seen: a node checks a job has not ended before each section)."""
        while True:
            try:
                async with self.jobs.own_reads.pubsub() as pubsub:
                    await pubsub.subscribe(CANCEL_CHANNEL)
                    while True:
                        reraise_if_cancelling()
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                        if message is not None:
                            # any local process can publish here: bytes that are no job id stop nothing
                            self.cancel(message["data"].decode(errors="replace"))
            except REDIS_DOWN:
                reraise_if_cancelling()
                await asyncio.sleep(0.5)

    async def run(self) -> None:
        """Load the engine, then take and run work until draining (or cancelled); Redis outages are
        waited out. A start after the loop ended on a bug (`node_loops.py`) is a restarted node's: the
        engine stays loaded, the item it held (pending under its name) runs first again, the cached
        jobs are read again."""
        sender = self.pcm.start()
        self._own, self._next_reclaim = True, 0.0
        self._known.clear()
        self._left.clear()
        try:
            if self.runner.info is not None or await self.load():
                await self._work()
        finally:
            self._left.set()
            sender.cancel()

    async def _work(self) -> None:
        await self._consume(self._work_step, "engine node")

    async def _work_step(self) -> bool:
        if self._draining:
            return False
        for item in await self._next_items():
            if self._draining:  # claimed but not started: queued again for the other nodes
                await self.jobs.release(item)
                continue
            await self._run_item(item)
        return True

    async def _next_items(self) -> list[WorkItem]:
        if self._own:
            items = await self.jobs.claim(self.node, own=True, block_ms=0)
            if items:
                return items
            self._own = False
        now = time.monotonic()
        if now >= self._next_reclaim:
            self._next_reclaim = now + max(0.05, self.claim_timeout / 4)
            items = await self.jobs.reclaim(self.node, int(self.patience() * 1000))
            if items:
                log.info("engine node %s took over %s of a silent node", self.node, items[0].entry_id)
                return items
        block = int(min(1000, max(50, self.claim_timeout * 250)))
        return await self.jobs.claim(self.node, own=False, block_ms=block)

    async def _run_item(self, item: WorkItem) -> None:
        try:
            job_and_node = await self._job(item) if item.pos >= 0 else None
        except (BadSpec, ResponseError) as exc:  # a value planted in Redis (bad JSON, WRONGTYPE)
            if refuses_every_write(exc):  # Redis busy (a slow script), a replica...: the item waits, pending
                self._own = True  # (it was acknowledged and dropped: its section never ran)
                raise
            log.warning("engine node %s dropped item %s: its job's record %s", self.node, item.entry_id, exc)
            job_and_node = None
        if job_and_node is None or item.pos >= job_and_node[0].total:
            await self.jobs.ack(item)  # the job ended, was removed, or the item is malformed
            return
        job, accepting = job_and_node
        section = job.sections[item.pos]
        self.running = job
        self._idle.clear()
        keeper = asyncio.create_task(self._keep_claim(item))
        synth = asyncio.create_task(self._log_synth(job, section))
        self.pcm.after(synth)  # the section's first chunk goes out after its `synth`
        try:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.thread, self.runner.run_shared, job, accepting, section, synth)
        finally:
            synth.cancel()  # done by now unless the section was cut while Redis was away
            keeper.cancel()
            self.running = None
            self._idle.set()
        if job.cancel_requested.is_set() and (
            self._draining or not await self.jobs.settled(job.id, section.idx)
        ):
            # Stopped by shutdown, or by a cancel no `done` backs (any local process can publish one, and
            # a Redis that crashed back forgets the `done` it had): another run makes it. The cached
            # copy goes (flagged, it dropped every later section of its job taken here, unmade).
            self._known.pop(job.id, None)
            await self.jobs.release(item)
            return
        await self.jobs.ack(item)

    async def _log_synth(self, job: Job, section: Section) -> int:
        """Append the section's `synth` (retried while Redis is away, full or refusing every write for
        now: that refusal ended the append, the section ran without its `synth`); 0: the job has ended,
        and the section stops at its next chunk."""
        event = Progress(section.idx, "synth")
        self.runner.journal.fold(job, event)
        seq = await taken(lambda: self.jobs.append(job.id, event), self._synth_refusals)
        if seq == 0:
            job.cancel_requested.set()
            self._stop_call(job)
        return seq

    async def _keep_claim(self, item: WorkItem) -> None:
        """The running section's item touched every third of the claim timeout, through Redis away, full
        or refusing every write for now (READONLY: that refusal ended it, and once Redis took writes
        again the item aged as a dead node's, for another node to run the section a second time)."""
        while True:
            await asyncio.sleep(max(0.02, self.claim_timeout / 3))
            try:
                await self.jobs.touch(item, self.node)
            except (*REDIS_WAIT, ResponseError) as exc:
                reraise_if_cancelling()
                if not refuses_every_write(exc):
                    raise

    async def _job(self, item: WorkItem) -> tuple[Job, str] | None:
        """The job (cached per node), or None once it has ended. A first item that carries the spec of a
        job new to this node saves the look-up (the job just began; if it has already ended, its `synth`
        append says so and the section stops at once)."""
        if item.spec is not None and item.job_id not in self._known:
            return self._remember(item.job_id, item.spec)
        known = self._known.get(item.job_id)
        if known is not None:  # only whether it has ended: the spec grows with the sections
            if await self.jobs.ended(item.job_id) is False:
                return known
            self._known.pop(item.job_id, None)
            return None
        found = await self.jobs.spec(item.job_id)
        if found is None or found[1]:
            return None
        return self._remember(item.job_id, found[0])

    def _remember(self, job_id: str, raw: str) -> tuple[Job, str]:
        known = self._known[job_id] = (job_from_spec(raw), spec_node(raw))
        while len(self._known) > 256:
            self._known.popitem(last=False)
        return known

    async def drain(self, grace: float) -> None:
        """Take no new item; give the running section `grace` seconds, then stop it at its next chunk. A
        load still running gives up, as a local worker's does (`stop_loading`): sovits waiting for its
        upstream held the exit for ever, an espeak child still starting until it was ready."""
        self._draining = True
        if self.runner.info is None:
            self.runner.admission.stop()  # (its load then ends "stopped by the shutdown", not failed)
            self.runner.stop_loading()
        try:
            await asyncio.wait_for(self._idle.wait(), timeout=grace)
        except TimeoutError:
            running = self.running
            if running is not None:
                log.warning("shutdown: section of job %s ran past %.1f s; cancelled", running.id, grace)
                running.cancel_requested.set()
                self._stop_call(running)
        try:  # the loop gives back what it holds (the cut section, an item claimed meanwhile)
            await asyncio.wait_for(self._left.wait(), timeout=5.0)
        except TimeoutError:
            log.warning("shutdown: the work loop did not end; its claimed items wait for the claim timeout")

    async def stop(self) -> None:
        self.runner.journal.stopping.set()
        if self.running is not None:
            self.running.cancel_requested.set()
            self._stop_call(self.running)
        await asyncio.get_running_loop().run_in_executor(None, self.thread.shutdown, True)
