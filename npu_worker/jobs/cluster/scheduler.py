"""`ClusterScheduler`: the views' entry point when jobs live in Redis (`--queue redis://...`).

Same methods as the local `Scheduler`, so the HTTP views do not know which one runs. What differs:
a job is recorded and queued by one script (the queue bound is shared by the whole cluster), its
events come back through a follower (they may be made on another node), and the node's role decides
which loops run here: `engine` (take work), `api` (accept requests, write their files), `both`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any, BinaryIO

from redis.exceptions import ResponseError

from ...config import Settings
from ...config_values import shown_url
from ...engine.base import Engine
from ...protocol import (
    AudioNotFound,
    BatchRequest,
    Progress,
    QueueUnavailable,
    Start,
    SynthParams,
    WorkerError,
)
from ..loop_handoff import LoopHandoff
from ..model import Job, KeptJob, LogEntry, apply_event, new_job_id
from ..stats import record_first_audio
from ..stored import no_audio
from ..subscription import Subscription
from .cancelling import cancel_shared_job, cancel_unheard, fail_slow_listener
from .engine_node import EngineNode
from .follower import Followers
from .heartbeat import Heartbeat
from .journal import RedisJournal
from .node_engines import ClusterEngines
from .node_loops import NodeLoops
from .node_name import stable_node_name
from .outage import REDIS_DOWN, redis_unreachable, reraise_if_cancelling
from .presence import hold_presence
from .preview_drain import drain_previews
from .queueing import queue_shared_job
from .redis_wav import open_redis_wav
from .retention import ClusterRetention
from .store import RedisJobs
from .writer import OutputWriter

log = logging.getLogger(__name__)
MAX_CLAIM_TIMEOUT = 86400.0  # --claim-timeout's bound: a peer's value past it (not of ours) is ignored


def _log_failure(task: asyncio.Task[Any]) -> None:
    """A node task that ended with an exception says so (a dead consumer loop must never be silent)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("cluster task %s ended: %s", task.get_name(), exc, exc_info=exc)


class ClusterScheduler(ClusterEngines):
    def __init__(self, engine: Engine | None, settings: Settings, **kwargs: Any) -> None:
        super().__init__(engine, settings, **kwargs)
        self.role = settings.role
        self.jobs = RedisJobs(settings.queue)
        self.node = ""
        self.engine_node: EngineNode | None = None
        self.followers = Followers(self.jobs, on_first_audio=self._first_audio)
        self.heartbeat = Heartbeat(self.jobs, settings)  # and the cluster as its last one saw it
        self._tasks: set[asyncio.Task[Any]] = set()
        self._rjournal: RedisJournal | None = None
        self._draining = False
        self.retention_sweeper: ClusterRetention | None = None  # the jobs this node accepted
        self.loop_failure: WorkerError | None = None  # a node loop down after an exception (`NodeLoops`)
        self.submitting = 0  # submits not yet in Redis (`ClusterEngines.jobs_running`)
        self.loops = NodeLoops(self._task_of_the_node, self._loops_failed)

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._engine is None and self.role != "api":  # an api node never loads an engine
            from ...engine_options import build_engine

            self._engine = await loop.run_in_executor(None, build_engine, self.settings)
        self.node = self.heartbeat.node = await loop.run_in_executor(None, self._prepare)
        await self._join_queue()
        journal = self._rjournal = RedisJournal(
            self.jobs, self.store, LoopHandoff(loop), self.node, observer=self.observer
        )
        self.journal = journal
        sweeper = self.retention_sweeper = ClusterRetention(
            self.jobs,
            self.node,
            journal,
            self.removals,
            keep=self.settings.job_retention,
            most=self.settings.max_jobs_kept,
        )
        sweeper.use_job_bytes(self.job_bytes, loop)  # this node's default outputs, counted in `_prepare`
        await sweeper.uncount_orphans()  # before the node writes: of no job in Redis, never removed here
        if self.role in ("both", "engine"):
            self._start_engine_node(journal, sweeper)
        self._start_node_loops(sweeper)
        log.info("node %s (%s) joined the queue at %s", self.node, self.role, shown_url(self.settings.queue))

    def _start_engine_node(self, journal: RedisJournal, sweeper: ClusterRetention) -> None:
        """An engine or both node's engine loop and cancel listener (a both node's own listeners and
        files without a hop through Redis)."""
        self.engine_node = EngineNode(
            self._engine,
            self.jobs,
            journal,
            self.cache,
            self.stats,
            node=self.node,
            limits=self.limits,
            default_seed=self.settings.seed,
            claim_timeout=self.settings.claim_timeout,
            observer=self.observer,
            paths=self.paths,
        )
        if self.role == "both":  # its own listeners and files, without a hop through Redis
            self.engine_node.pcm.local = self.followers.local_pcm
            self.engine_node.runner.writes_for = self.node
            self.engine_node.runner.job_bytes = self.job_bytes
            self.engine_node.runner.written = lambda job_id: self._spawn(sweeper.sweep_if_ended(job_id))
        self.engine_node.patience = self.heartbeat.patience
        self.engine_node.runner.on_load_ended = self.load_signal.changed  # (the load waits wake)
        self.loops.start("engine", self.engine_node.run)
        self.loops.start("cancel listener", self.engine_node.listen_for_cancels)

    def _start_node_loops(self, sweeper: ClusterRetention) -> None:
        """Every role's loops: the writer, retention and the heartbeat."""
        # Every role: an engine node accepts nothing, but one that accepted jobs before it was restarted
        # with `--role engine` (same state dir, same name) still owes their files and their retention
        # (its sections waited in its `ready` stream for ever, and counted toward --max-queue).
        writer = OutputWriter(
            self.jobs, self.node, self.paths, lambda job_id: self._spawn(sweeper.sweep()), self.observer
        )
        writer.job_bytes, writer.cache = self.job_bytes, self.cache
        self.loops.start("writer", writer.run)
        self.loops.start("retention", sweeper.run)
        self.heartbeat.on_view = self._end_unrunnable_streams
        self.loops.start(
            "presence",
            lambda: hold_presence(
                self.jobs.own_reads, self.node, self.heartbeat.presence_refused, self.jobs.own_commands
            ),
        )  # (no write)
        self.loops.start(
            "heartbeat",
            lambda: self.heartbeat.run(
                self._beat_engine_info,
                self._beat_failure,
                self._own_decoder_calls,
                self._own_load_phase,
                self._own_languages,
            ),
        )

    async def _join_queue(self) -> None:
        """Redis answers and this node's consumer groups are there; else a clear `QueueUnavailable`: a
        Redis that refuses the groups' writes (a replica: READONLY; an ACL: NOPERM) was a traceback."""
        where = shown_url(self.settings.queue)
        try:
            await self.jobs.ping()
            await self.jobs.ensure_groups(self.node)
        except REDIS_DOWN as exc:
            reraise_if_cancelling()
            raise QueueUnavailable(f"cannot reach Redis at {where}: {exc}") from exc
        except ResponseError as exc:
            raise QueueUnavailable(f"Redis at {where} refused this node's consumer groups: {exc}") from exc

    def _prepare(self) -> str:
        """Directories, and this node's stable name (a restart re-joins as the same consumer)."""
        self.store.prepare()
        self.cache.prepare()
        self.job_bytes.recount()
        return stable_node_name(Path(self.settings.resolved_state_dir()))

    def _spawn(self, coro: Any) -> None:
        self._task_of_the_node(coro)

    def _task_of_the_node(self, coro: Any) -> asyncio.Task[Any]:
        """A task of the node's, cancelled at its stop; one that ends on an exception says so."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)
        return task

    def _loops_failed(self, failure: WorkerError | None) -> None:
        """A loop of the node down (`NodeLoops`): /health says `fail` (500), requests are refused with it,
        and its beat carries it as a failed engine's (no backend), so its peers count it out. It was
        only logged: /health said 200, the beat went on, and peers never took its sections over."""
        self.loop_failure = failure

    @property
    def draining(self) -> bool:
        return self._draining

    async def drain(self, grace: float) -> None:
        """Take no new work; let the running section finish within `grace` seconds, else stop it (it goes
        back to the queue); and the previews this node's callers wait on: `preview_drain.py`."""
        if self._draining:
            return
        self._draining = True
        self.load_signal.changed()  # (what waits for the load is refused now: QueueFull)
        steps = [self.engine_node.drain(grace)] if self.engine_node is not None else []
        if self.role != "engine":
            steps.append(drain_previews(self.jobs, self.followers, self.node, grace, self.observer.event))
        await asyncio.gather(*steps)

    async def stop(self, grace: float = 30.0) -> None:
        await self.drain(grace)
        self.loops.stopping = True  # a loop that ends as it is cancelled is not started again
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.heartbeat.leave()  # after its loop ended: no beat of it says alive again
        await self.followers.close()
        if self.engine_node is not None:
            await self.engine_node.stop()
        await self.jobs.close()
        loop = asyncio.get_running_loop()
        try:
            if self._engine is not None:
                await loop.run_in_executor(None, self._engine.close)
        except Exception:  # noqa: BLE001 - closing must not mask shutdown
            log.exception("engine close failed")

    # -- submission ------------------------------------------------------------------------------

    async def submit(
        self,
        request: BatchRequest,
        *,
        preview: bool,
        trim_leading_silence: bool = False,
        on_created: Any = None,
        quiet_admission: bool = False,
    ) -> Job:
        """`quiet_admission` changes nothing here: the submit awaits Redis's answer, which wakes the loop."""
        self.check_accepting()
        info = self.info  # read before any await: the engines' view may change meanwhile
        assert info is not None  # check_accepting raised otherwise
        job = Job(new_job_id(), request.params, [], preview, persisted=not preview, created_at=self.clock())
        job.stream_audio, job.trim_leading_silence = preview and request.audio, trim_leading_silence
        blocking = job.persisted or request.params.ref_wav is not None  # files, a voice lookup
        blocking = blocking or (self.engine is not None and request.params.lang not in self.checks.langs)
        self.submitting += 1  # running from here: /health said idle until Redis counted it
        try:
            if blocking or any(s.output_path is not None for s in request.sections):
                await asyncio.get_running_loop().run_in_executor(None, self._resolve, job, request)
            else:  # a preview with nothing to check on disk: no thread hop (as on a local queue)
                self._resolve(job, request)
            start = Start(job.total, info.backend, info.device, job.id, info.sample_rate)
            engines = sum(1 for n in self.heartbeat.view["nodes"] if n["role"] in ("both", "engine"))
            await queue_shared_job(
                self.jobs,
                job,
                self.node,
                start,
                max_queue=self.settings.max_queue,
                engines=engines,
                stats=self.stats,
            )
        finally:
            self.submitting -= 1
        apply_event(job, start)
        job.log.append(LogEntry(1, start))
        job.next_seq = 2
        self.stats.count("jobs_submitted")
        if on_created is not None:
            on_created(job)
        return job

    def checked_params(self, params: SynthParams) -> SynthParams:
        """As a local worker checks them, with this node's engine; a `both` node whose engine failed
        to load checks none with it (ZipVoice's language check then raised AttributeError: a 500),
        as an api node does: the engine node that runs the section says what it cannot speak."""
        return self.checks.params(self.engine, params)

    def _resolve(self, job: Job, request: BatchRequest) -> None:
        """Language and path checks (blocking), default outputs on this node's disk, a voice name made
        its stored wav (engine nodes read it at the same path)."""
        job.params = self.checked_params(request.params)
        job.sections = self.checks.sections(job, request, self.journal)

    # -- looking up, listening, cancelling -------------------------------------------------------

    def live_job(self, job_id: str) -> Job | None:
        return None

    def voice_user(self, ref_wav: str) -> str | None:
        """Who speaks with this reference wav: a job under way on any node of the cluster (a voice's
        delete would fail its remaining sections wherever they run), as `Scheduler.voice_user` names
        it. Blocking: off the loop."""
        assert self._rjournal is not None
        found = self._rjournal.call(lambda: self.jobs.voice_user(ref_wav))
        if found is None:
            return None
        job_id, preview = found
        return "a request in progress" if preview else f"job {job_id}"

    def check_runnable(self, job: Job | KeptJob) -> None:
        """A shared job runs on whichever engine node takes it, whatever this node's engine did: refused
        (`ModelLoadError`) only while every live engine node says its engine failed to load, or
        (`QueueUnavailable`) while Redis has refused every write for over `WRITES_REFUSED_LIMIT` s."""
        if not job.finished and (error := self._unrunnable()) is not None:
            raise error

    def _unrunnable(self) -> WorkerError | None:
        return self.heartbeat.engines_failed() or self.heartbeat.writes_refused()

    def stream_lost(self, job: Job) -> WorkerError:
        """As the local scheduler's; a preview whose caller is told so (no one can re-attach to one) is
        cancelled too: it stayed queued in Redis, made by the next engine node to load, for nobody. Redis
        refusing every write too long (`_end_unrunnable_streams`) is said as a re-attach is told: it was
        `JobNotFound` (gone, send it again), the job still there, waiting for Redis to take writes."""
        if job.preview and not job.finished:
            self._spawn(cancel_unheard(self.jobs, job.id, self.stats, self.observer))
        if self.load_error is None and (refused := self.heartbeat.writes_refused()) is not None:
            return refused
        return super().stream_lost(job)

    def _end_unrunnable_streams(self) -> None:
        """Every live engine node failed to load, or Redis has refused every write too long: the streams
        this node follows end (without `done`; a re-attach is `check_runnable`'s refusal) instead of
        sending heartbeats for ever."""
        if self._unrunnable() is None:
            return
        for job in self.followers.live_jobs():
            for subscription in list(job.subscribers):
                subscription.finish()

    def find_job(self, job_id: str) -> Job | None:
        """The job read whole from Redis; a finished one's copy shared by its readers meanwhile."""
        assert self._rjournal is not None
        return self._rjournal.load_shared(job_id, self.copies)

    def recent_jobs(self, limit: int = 100) -> list[Job]:
        assert self._rjournal is not None
        return self._rjournal.call(lambda: self._recent(limit))

    async def _recent(self, limit: int) -> list[Job]:
        found = [await self.jobs.load(job_id) for job_id in await self.jobs.recent(limit)]
        return [job for job in found if job is not None and not job.preview]

    def subscribe(
        self, job: Job, *, after: int = 0, audio: bool = False, max_buffered_seconds: float = 30.0
    ) -> Subscription:
        """Events from the job's log; with `audio`, its PCM too (a streaming job's, followed from Redis),
        bounded as on a local queue (`SlowConsumer`)."""
        audio = audio and job.stream_audio
        live = self.followers.attach(job, audio=audio, on_lost=self._drop_slow)
        subscription = self._subscription(live, after, audio, max_buffered_seconds)
        if self.heartbeat.engines_failed() is not None:  # since it was looked up: its replay, then the end
            subscription.finish()
        return subscription

    def _first_audio(self, job: Job) -> None:
        record_first_audio(job, self.stats, self.observer)

    def _drop_slow(self, job: Job) -> None:
        """A listener fell behind (on the loop): the job gets a `SlowConsumer` error and is cancelled."""
        self._spawn(fail_slow_listener(self.jobs, job, self.stats, self.observer))

    def cancel(self, job_id: str) -> bool:
        """Stop a job on every node; True if it was still running or queued."""
        if self._rjournal is None:
            return False
        if threading.get_ident() == self._rjournal.handoff._loop_thread:
            # a /synth caller hung up: fire and forget
            self._spawn(cancel_shared_job(self.jobs, job_id, self.stats, self.observer))
            return True
        return self._rjournal.call(lambda: cancel_shared_job(self.jobs, job_id, self.stats, self.observer))

    async def section_audio(self, job: Job, idx: int) -> BinaryIO:
        """A section's wav from Redis, once its `ok` is logged (the copy is there before, and stays
        after a failed write, but only an `ok` section has audio to give): read a piece at a time as
        it is sent (`redis_wav.py`), not fetched whole for a caller that may read slowly."""
        section = job.section(idx)
        if section is None or not isinstance(section.final, Progress):
            raise no_audio(job, idx)
        assert self._rjournal is not None
        try:
            wav = await open_redis_wav(self._rjournal, self.jobs, job.id, idx)
        except REDIS_DOWN as exc:
            reraise_if_cancelling()
            raise redis_unreachable(exc) from exc
        except ResponseError as exc:  # a key not of ours (WRONGTYPE): a named 503, not a 500
            log.error("Redis answered %s for job %s's section %d wav", exc, job.id, idx)
            raise QueueUnavailable("the shared queue answered with an error (see the node's log)") from exc
        if wav is None:
            raise AudioNotFound(f"job {job.id} has no audio for section {idx}")
        return wav
