"""The scheduler: the job core's one entry point for the views (submit, subscribe, cancel, look up).

It wires the parts and owns none of their logic: `admission` (bounds, order, cancel), `journal`
(every state change, persisted and published), `runner` (the engine thread), `registry` (jobs by id),
`retention` (what finished jobs leave behind), `stats` (counters), `resume` (the kept jobs at start-up),
`shutdown` (the drain), `stored` (a kept job read back whole, a section's wav opened), `request_checks`
(what a request names, checked and resolved). It is built and started inside the app's `cleanup_ctx`,
on the event loop.

Fast path: a preview (WebSocket) or `/synth` touches no disk when it can avoid it: no journal file,
no cache write for listen-only audio, and no executor hop at submit unless a path must be checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..config import Settings
from ..engine.base import Engine, EngineInfo
from ..paths import PathPolicy
from ..protocol import (
    BatchRequest,
    Done,
    JobNotFound,
    Loading,
    SectionError,
    SlowConsumer,
    Start,
    SynthParams,
    WorkerError,
)
from ..voices import VoiceLibrary
from . import shutdown
from .admission import Admission, Cancelled
from .cache import SynthesisCache
from .journal import Journal, LocalJournal, LoopHandoff
from .model import Job, KeptJob, new_job_id
from .observer import SchedulerObserver
from .recovery import Recovery
from .registry import JobRegistry
from .request_checks import RequestChecks
from .resume import resume_kept_jobs
from .retention import Retention
from .runner import Runner
from .stats import Stats
from .store import JobStore
from .stored import open_section_audio, read_whole
from .subscription import UNREAD_AUDIO_BUDGET_SAMPLES, AudioBudget, Subscription

log = logging.getLogger(__name__)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], object]) -> None:
    """`callback` on the loop, from another thread; nothing once the loop has closed (the app ended)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)


class Scheduler:
    def __init__(
        self, engine: Engine | None, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> None:
        """Cheap and off the loop (`build_app`); the engine (None: the configured backend), the journal
        and the engine thread are built by `start`, in the app's `cleanup_ctx`."""
        self.engine: Any = engine
        self.settings = settings
        self.clock = clock
        self.limits = settings.limits
        self.paths = PathPolicy.from_settings(settings)  # allowed roots; the state dir is never one
        self.roots = self.paths.roots
        state_dir = Path(self.paths.state_dir)
        self.store = JobStore(state_dir)
        self.cache = SynthesisCache(state_dir / "cache", settings.cache_max_bytes)
        self.registry = JobRegistry()
        self.admission = Admission(settings.max_queue)
        self.stats = Stats()
        self.voices = VoiceLibrary.from_settings(settings)
        self.observer = SchedulerObserver()  # metrics hooks (no-op unless the app installs one)
        self.checks = RequestChecks(self.voices, self.paths)  # languages, voices, output files
        self.audio_budget = AudioBudget(UNREAD_AUDIO_BUDGET_SAMPLES)  # shared by every listener
        self.recovery = Recovery()  # the kept jobs are read after the socket serves
        self._recovery_task: asyncio.Task[None] | None = None
        self.journal: Journal | None = None
        self.retention: Retention | None = None
        self.runner: Runner | None = None
        # Checks of settings that depend on the loaded engine (its sample rate); a ValueError fails the load.
        self.load_checks: list[Callable[[EngineInfo], object]] = []

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the engine's load and the reading of the kept jobs (every unfinished one resumes, oldest
        first): both go on after this returns and the socket serves (recovery.py)."""
        loop = asyncio.get_running_loop()
        if self.engine is None:
            from ..engine_options import build_engine

            self.engine = await loop.run_in_executor(None, build_engine, self.settings)
        journal = self.journal = LocalJournal(self.store, LoopHandoff(loop), observer=self.observer)
        self.retention = Retention(
            self.registry,
            journal,
            keep_seconds=self.settings.job_retention,
            max_jobs=self.settings.max_jobs_kept,
            clock=self.clock,
        )
        self.runner = Runner(
            self.engine,
            self.admission,
            journal,
            self.cache,
            self.stats,
            limits=self.limits,
            default_seed=self.settings.seed,
            paths=self.paths,
            end_job=self.end_job,
            observer=self.observer,
            preview_lanes=self.settings.preview_lanes,
        )
        self.runner.load_checks = self.load_checks
        self.runner.on_load_failed = lambda: _call_soon(loop, self._end_unrunnable_streams)
        # A state dir that cannot be used still fails the start; reading the jobs in it does not block it.
        await loop.run_in_executor(None, self._prepare_state_dir)
        self.recovery.running = True
        self.runner.start()  # the engine loads while the jobs are read (recovery.py)
        self._recovery_task = asyncio.create_task(resume_kept_jobs(self))

    def _prepare_state_dir(self) -> None:
        self.store.prepare()
        self.cache.prepare()

    @property
    def draining(self) -> bool:
        """True once shutdown began: no new section starts."""
        return self.admission.stopping

    async def drain(self, grace: float) -> None:
        """Start no new section; let the running one finish within `grace` seconds, else cancel it
        (`shutdown.py`). Queued sections of batch jobs stay in their logs and resume after a restart."""
        await shutdown.drain(self, grace)

    async def stop(self, grace: float = 30.0) -> None:
        await self.drain(grace)
        loop = asyncio.get_running_loop()
        if self._recovery_task is not None:  # its thread stops at the next job it reads
            await asyncio.gather(self._recovery_task, return_exceptions=True)
        if self.runner is not None:
            await loop.run_in_executor(None, self.runner.join, 30.0)
        if self.engine is not None:
            try:
                await loop.run_in_executor(None, self.engine.close)
            except Exception:  # noqa: BLE001 - closing must not mask shutdown
                log.exception("engine close failed")
        if isinstance(self.journal, LocalJournal):
            self.journal.close()

    @property
    def info(self) -> EngineInfo | None:
        """What runs, once the engine has loaded and the kept jobs are read (None: still loading)."""
        if self.runner is None or self.recovery.running:
            return None
        return self.runner.info

    @property
    def load_error(self) -> WorkerError | None:
        if self.recovery.error is not None:
            return self.recovery.error
        return self.runner.load_failure if self.runner is not None else None

    @property
    def load_seconds(self) -> float | None:
        return self.runner.load_seconds if self.runner is not None else None

    @property
    def load_phase(self) -> str | None:
        phase = self.runner.load_phase if self.runner is not None else None
        return phase or self.recovery.phase

    def loading(self) -> WorkerError:
        """The refusal while `info` is None: the engine loads, or the kept jobs are still being read."""
        if self.runner is not None and self.runner.info is not None and self.recovery.running:
            return self.recovery.refusal()
        return Loading("the engine is still loading; retry shortly")

    def check_jobs_readable(self) -> None:
        """Loading while the kept jobs are read: a job not read yet is not unknown. Once they could not
        be read, what `/health` says (`StateUnavailable`): a job missed was a 404 that read as gone."""
        if self.recovery.running:
            raise self.recovery.refusal()
        if self.recovery.error is not None:
            raise self.recovery.error

    def check_runnable(self, job: Job | KeptJob) -> None:
        """What `/health` says (`ModelLoadError`, 500) for an unfinished job of a worker whose engine
        failed to load: it never runs here, yet a poll said `interrupted` and a stream sent heartbeats
        for ever. The job stays on disk as it was: a restart that loads resumes it."""
        if self.load_error is not None and not job.finished:
            raise self.load_error

    def stream_lost(self, job: Job) -> WorkerError:
        """What a caller waiting on `job` is told when its events end without `done` (a shutdown
        apart): the engines' failure when they all failed to load (with `--queue redis`: their streams
        are ended), else the job is gone (a Redis that lost it)."""
        if self.load_error is not None:
            return self.load_error
        return JobNotFound(f"job {job.id} is gone from the shared queue; send it again")

    def _end_unrunnable_streams(self) -> None:
        """The engine failed to load: the open streams of the kept jobs end (without `done`: a
        re-attach is answered `check_runnable`'s refusal) instead of sending heartbeats for ever."""
        for job in [*self.admission.live_jobs(), *self.registry.snapshot()]:
            if isinstance(job, Job):
                for subscription in list(job.subscribers):
                    subscription.finish()

    @property
    def loaded(self) -> bool:
        return self.info is not None

    @property
    def ttfa_ms(self) -> list[float]:
        return self.stats.ttfa_ms()

    def queue_size(self) -> int:
        return self.admission.queue_size()

    def jobs_running(self) -> int:
        return self.admission.jobs_running()

    def stats_snapshot(self) -> dict[str, Any]:
        """Counters for /health and metrics (cheap; safe from any thread)."""
        return {
            **self.stats.snapshot(),
            "queue": self.queue_size(),
            "jobs_running": self.jobs_running(),
            "jobs_kept": len(self.registry),
        }

    async def queue_health(self) -> dict[str, Any]:
        """What /health says about where jobs live (the Redis scheduler adds the cluster view)."""
        return {"queue_backend": "local"}

    async def section_audio(self, job: Job, idx: int) -> bytes | BinaryIO:
        """The wav of a finished section: its file, open (the caller sends it in pieces and closes
        it); AudioNotFound if it has none."""
        return await open_section_audio(job, idx, self.paths)

    # -- submission ------------------------------------------------------------------------------

    async def submit(
        self,
        request: BatchRequest,
        *,
        preview: bool,
        trim_leading_silence: bool = False,
        on_created: Callable[[Job], None] | None = None,
    ) -> Job:
        """Create a job (validated, persisted unless a preview) and queue its sections.

        `on_created(job)` runs on the loop before the job can run: audio is not in the log, so a
        listener that wants every chunk must attach there (events alone can be replayed later).
        Raises Loading/ModelLoadError, QueueFull, OutputPathNotAllowed, RefWavNotAllowed.
        """
        self.check_accepting()
        job = Job(
            id=new_job_id(),
            params=request.params,
            sections=[],
            preview=preview,
            persisted=not preview,
            stream_audio=preview and request.audio,
            trim_leading_silence=trim_leading_silence,
            created_at=self.clock(),
            created_mono=time.monotonic(),
        )
        if on_created is not None:
            on_created(job)
        blocking = job.persisted or request.params.ref_wav is not None  # files, a voice lookup
        blocking = blocking or request.params.lang not in self.checks.langs  # the engine may block
        if blocking or any(s.output_path is not None for s in request.sections):
            await asyncio.get_running_loop().run_in_executor(None, self._admit, job, request)
        else:
            self._admit(job, request)
        return job

    def check_accepting(self) -> None:
        """Raise what every request would get now (Loading, ModelLoadError): a request of several
        parts (an OpenAI batch) is refused whole instead of failing part by part."""
        if self.load_error is not None:
            raise self.load_error
        if self.info is None:
            raise self.loading()

    def checked_params(self, params: SynthParams) -> SynthParams:
        """Blocking: what the request names, checked and resolved (`request_checks.py`)."""
        return self.checks.params(self.engine, params)

    async def check_params(self, params: SynthParams) -> None:
        """What `submit` would refuse in these parameters, before any text comes (a stream's
        configuration)."""
        await asyncio.to_thread(self.checked_params, params)

    def _admit(self, job: Job, request: BatchRequest) -> None:
        """Language and path checks, the queue bound (reserved atomically), persistence, `start`, queueing;
        a voice it names is not deleted meanwhile (`voice_user` finds it once queued)."""
        with self.voices.admitting(request.params.ref_wav):
            self._admit_checked(job, request)

    def _admit_checked(self, job: Job, request: BatchRequest) -> None:
        job.params = self.checked_params(request.params)
        job.sections = self.checks.sections(job, request, self.journal)
        try:
            self.admission.reserve(job, job.total)
        except WorkerError:
            self.stats.count("jobs_refused")
            raise
        assert self.journal is not None and self.info is not None
        try:
            if job.persisted:
                self.journal.create(job)
                self.registry.add(job)
            info = self.info
            self.journal.append(job, Start(job.total, info.backend, info.device, job.id, info.sample_rate))
        except BaseException:
            self.admission.release(job)
            self.registry.remove(job.id)
            raise
        self.stats.count("jobs_submitted")
        self.admission.enqueue(job)
        if job.preview and self.admission.stopping:
            # Admitted off the loop, it was counted before the drain began and queued after the drain
            # may have ended the waiting previews: no section of it will run, so it ends now too.
            shutdown.end_waiting_previews(self)

    # -- looking up and listening ----------------------------------------------------------------

    def live_job(self, job_id: str) -> Job | None:
        """A queued or running job, previews included (they are not in the registry)."""
        return self.admission.live_job(job_id)

    def voice_user(self, ref_wav: str) -> str | None:
        """Who of this worker speaks with this reference wav (a stored voice's: a delete would fail its
        remaining sections), queued, running or to resume: `job <id>` for a kept job (`/jobs` lists it),
        else `a request in progress` (a preview's id would let others cancel it); Loading while the kept
        jobs are still read. Blocking: off the loop."""
        self.check_jobs_readable()
        for job in [*self.admission.live_jobs(), *self.registry.snapshot()]:
            if isinstance(job, Job) and not job.finished and job.params.ref_wav == ref_wav:
                return f"job {job.id}" if job.persisted else "a request in progress"
        return None

    def find_job(self, job_id: str) -> Job | KeptJob | None:
        """A kept job, else a finished one from the journal (blocking I/O: call from a thread). An
        unfinished job on disk that this worker does not hold (a folder put there after start) is
        none of its work: it would never move, and a replay of its events would wait for ever."""
        job = self.registry.get(job_id)
        if job is not None or self.journal is None:
            return job
        stored = self.journal.load(job_id)
        return stored if stored is not None and stored.finished else None

    def stored_job(self, job: Job | KeptJob) -> Job:
        """The whole job, read again from its folder for a `KeptJob` (blocking: `stored.py`)."""
        return read_whole(job, self.store, self.registry)

    def recent_jobs(self, limit: int = 100) -> Sequence[Job | KeptJob]:
        """Kept jobs, newest first (a snapshot: safe while jobs come and go)."""
        return self.registry.recent(limit)

    def subscribe(
        self, job: Job, *, after: int = 0, audio: bool = False, max_buffered_seconds: float = 30.0
    ) -> Subscription:
        subscription = self._subscription(job, after, audio, max_buffered_seconds)
        if self.load_error is not None:  # failed since it was looked up: its replay, then the end
            subscription.finish()
        return subscription

    def _subscription(self, job: Job, after: int, audio: bool, max_buffered_seconds: float) -> Subscription:
        """A listener on `job` (a local copy on a Redis queue), dropped as a slow consumer past the bound."""
        rate = self.info.sample_rate if self.info else 24000
        return Subscription(
            job,
            after=after,
            audio=audio,
            sample_rate=rate,
            max_buffered_seconds=max_buffered_seconds,
            on_overflow=self._drop_slow,
            budget=self.audio_budget,
        )

    # -- cancellation and the end of a job -------------------------------------------------------

    def cancel(self, job_id: str) -> bool:
        """Stop a job between engine chunks; True if it was still running or queued."""
        state, job = self.admission.cancel(job_id)
        if job is not None:
            job.stopped_by_shutdown = False  # the caller's cancel: the job ends cancelled
        if state is Cancelled.DEQUEUED and job is not None:
            self.end_job(job)
        elif state is Cancelled.RUNNING and job is not None and job.persisted:
            try:  # blocking, but only a DELETE gets here, and it calls from an executor thread
                self.store.mark_cancelled(job.id)
            except OSError as exc:  # the section still stops; only a crash before its end forgets
                log.warning("job %s: the cancel could not be recorded: %s", job.id, exc.strerror or exc)
        return state is not Cancelled.NOT_LIVE

    def _drop_slow(self, job: Job) -> None:
        error = SlowConsumer("the client did not read audio fast enough")
        assert self.journal is not None
        self.journal.append(job, SectionError(job.current_idx, str(error)))
        self.cancel(job.id)

    def end_job(self, job: Job) -> None:
        """The job's last event; finished persisted jobs are then subject to retention. A persisted
        job whose section only the shutdown cut gets none: its log leaves it to resume at the next start."""
        if job.persisted and job.stopped_by_shutdown:
            log.info("shutdown: job %s left to resume at the next start", job.id)
            return
        cancelled = job.cancel_requested.is_set()
        elapsed = round(job.seconds_since_created(self.clock()), 3)
        assert self.journal is not None
        done = Done(job.total, job.ok_count, job.fail_count, elapsed, cancelled)
        self.journal.append(job, done)
        self.stats.count("jobs_cancelled" if cancelled else "jobs_finished")
        if job.persisted and self.retention is not None:
            kept: Job | KeptJob = job
            if self.journal.persisted_all(job):  # else its log on disk still lacks lines: kept whole
                kept = KeptJob.of(job, done)
                self.registry.replace(job, kept)
            self.stats.count("jobs_removed", self.retention.sweep(kept))
